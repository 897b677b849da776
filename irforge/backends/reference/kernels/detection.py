"""Reference kernels of the detection ops: PriorBox, PriorBoxClustered, DetectionOutput.

They follow SSD's Caffe implementation (prior_box_layer, detection_output_layer and
bbox_util), which the IR catalog's formulas describe.
"""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.detection import DetectionOutput, PriorBox, PriorBoxClustered, PriorOp


def cell_centres(op: PriorOp, feature: tuple[int, ...], steps: tuple[float, float], image: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Centre x and y of every cell, [H, W] each, in image pixels."""
    (h, w), (img_h, img_w) = feature[2:], image
    step_h, step_w = steps[0] or img_h / h, steps[1] or img_w / w
    offset = op.float_prop("offset")
    cy, cx = np.meshgrid((np.arange(h) + offset) * step_h, (np.arange(w) + offset) * step_w, indexing="ij")
    return cx, cy


def boxes_output(op: PriorOp, cx: np.ndarray, cy: np.ndarray, sizes: list[tuple[float, float]], image: tuple[int, int]) -> np.ndarray:
    """[1, 2, H * W * P * 4]: boxes of the given (width, height) per cell, then variances."""
    img_h, img_w = image
    half = np.asarray(sizes, np.float64) / 2  # [P, 2]
    boxes = np.stack(
        [
            (cx[..., None] - half[:, 0]) / img_w,
            (cy[..., None] - half[:, 1]) / img_h,
            (cx[..., None] + half[:, 0]) / img_w,
            (cy[..., None] + half[:, 1]) / img_h,
        ],
        axis=-1,
    ).reshape(-1)
    if op.bool_prop("clip"):
        boxes = np.clip(boxes, 0.0, 1.0)
    variances = np.tile(np.asarray(op.variances(), np.float64), boxes.size // 4)
    return np.stack([boxes, variances])[None].astype(np.float32)


@kernel(PriorBox)
def prior_box(op: PriorBox, x: np.ndarray, image: np.ndarray) -> np.ndarray:
    size = op.image_size(image.shape)
    step = op.float_prop("step")
    cx, cy = cell_centres(op, x.shape, (step, step), size)
    sizes: list[tuple[float, float]] = []
    maxima = op.floats("max_size")
    for i, s in enumerate(op.floats("min_size")):
        sizes.append((s, s))
        if maxima:
            side = float(np.sqrt(s * maxima[i]))
            sizes.append((side, side))
        for r in op.aspect_ratios()[1:]:
            sizes.append((s * float(np.sqrt(r)), s / float(np.sqrt(r))))
    return boxes_output(op, cx, cy, sizes, size)


@kernel(PriorBoxClustered)
def prior_box_clustered(op: PriorBoxClustered, x: np.ndarray, image: np.ndarray) -> np.ndarray:
    size = op.image_size(image.shape)
    cx, cy = cell_centres(op, x.shape, (op.float_prop("step_h"), op.float_prop("step_w")), size)
    return boxes_output(op, cx, cy, list(zip(op.floats("width"), op.floats("height"))), size)


def decode(code_type: str, priors: np.ndarray, variances: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """Boxes [P, 4] (corners) from prior corners, their variances and predicted deltas."""
    size = priors[:, 2:] - priors[:, :2]
    if code_type.endswith(".CORNER"):
        return priors + deltas * variances
    if code_type.endswith(".CORNER_SIZE"):
        return priors + deltas * variances * np.concatenate([size, size], axis=1)
    centre = (priors[:, :2] + priors[:, 2:]) / 2 + deltas[:, :2] * variances[:, :2] * size
    extent = np.exp(deltas[:, 2:] * variances[:, 2:]) * size
    return np.concatenate([centre - extent / 2, centre + extent / 2], axis=1)


def iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Intersection over union of `box` [4] with each of `others` [K, 4] (normalised boxes)."""
    low = np.maximum(box[:2], others[:, :2])
    high = np.minimum(box[2:], others[:, 2:])
    inter = np.prod(np.clip(high - low, 0, None), axis=1)
    area = lambda b: np.prod(np.clip(b[..., 2:] - b[..., :2], 0, None), axis=-1)  # noqa: E731
    union = area(box) + area(others) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def nms(boxes: np.ndarray, scores: np.ndarray, threshold: float, top_k: int, nms_threshold: float) -> list[int]:
    """Indices kept by greedy NMS among boxes scoring above `threshold`, best first."""
    candidates = np.flatnonzero(scores > threshold)
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    if top_k > 0:
        order = order[:top_k]
    kept: list[int] = []
    for index in order:
        if not kept or np.all(iou(boxes[index], boxes[kept]) <= nms_threshold):
            kept.append(int(index))
    return kept


def detect_image(op: DetectionOutput, loc: np.ndarray, conf: np.ndarray, priors: np.ndarray, variances: np.ndarray) -> list[tuple[int, float, np.ndarray]]:
    """(label, score, box) of one image's detections, in output order."""
    classes = op.int_prop("num_classes")
    loc_classes = op.location_classes()
    deltas = loc.reshape(-1, loc_classes, 4)
    scores = conf.reshape(-1, classes)
    found: list[tuple[int, float, np.ndarray]] = []
    for label in range(classes):
        if label == op.int_prop("background_label_id"):
            continue
        boxes = decode(op.str_prop("code_type"), priors, variances, deltas[:, 0 if loc_classes == 1 else label])
        if op.bool_prop("clip_before_nms"):
            boxes = np.clip(boxes, 0.0, 1.0)
        kept = nms(boxes, scores[:, label], op.float_prop("confidence_threshold"), op.int_prop("top_k"), op.float_prop("nms_threshold"))
        found += [(label, float(scores[i, label]), boxes[i]) for i in kept]
    keep = op.int_prop("keep_top_k")
    if 0 < keep < len(found):
        best = sorted(range(len(found)), key=lambda i: -found[i][1])[:keep]
        found = [found[i] for i in sorted(best, key=lambda i: (found[i][0], -found[i][1]))]
    return found


@kernel(DetectionOutput)
def detection_output(op: DetectionOutput, loc: np.ndarray, conf: np.ndarray, priors: np.ndarray) -> np.ndarray:
    batch = loc.shape[0]
    num_priors = priors.shape[2] // 4
    rows = op.rows_per_image(num_priors)
    out = np.zeros((batch * rows, 7), np.float64)
    out[:, 0] = -1
    count = 0
    for n in range(batch):
        p = priors[min(n, priors.shape[0] - 1)]
        boxes = p[0].reshape(-1, 4).astype(np.float64)
        encoded = op.bool_prop("variance_encoded_in_target")
        variances = np.ones_like(boxes) if encoded else p[1].reshape(-1, 4).astype(np.float64)
        for label, score, box in detect_image(op, loc[n].reshape(-1).astype(np.float64), conf[n].reshape(-1).astype(np.float64), boxes, variances)[:rows]:
            out[count] = (n, label, score, *(np.clip(box, 0.0, 1.0) if op.bool_prop("clip_after_nms") else box))
            count += 1
    return out.reshape(1, 1, batch * rows, 7).astype(loc.dtype)
