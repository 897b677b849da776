"""Reference kernels of the box ops: ROIAlign (avg and onnxruntime's max mode) and NonMaxSuppression."""

from __future__ import annotations

import math

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.backends.reference.run_time_sizes import check_output_size
from irforge.dialects.nn.boxes import NonMaxSuppression, ROIAlign
from irforge.errors import IrforgeError


def bilinear_terms(plane: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The 4 weighted neighbour terms of bilinear samples of plane [C, H, W] at points (y, x)
    (1-D arrays): [4, C, P] (their sum is the sample). Points beyond one pixel outside the map
    give 0; others are clamped to it (Caffe2's RoIAlign rule)."""
    _, h, w = plane.shape
    outside = (y < -1.0) | (y > h) | (x < -1.0) | (x > w)
    y, x = np.maximum(y, 0.0), np.maximum(x, 0.0)
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    top_row, right_col = y0 >= h - 1, x0 >= w - 1
    y0, x0 = np.where(top_row, h - 1, y0), np.where(right_col, w - 1, x0)
    y = np.where(top_row, y0, y)
    x = np.where(right_col, x0, x)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    ly, lx = y - y0, x - x0
    hy, hx = 1.0 - ly, 1.0 - lx
    terms = np.stack(
        [hy * hx * plane[:, y0, x0], hy * lx * plane[:, y0, x1], ly * hx * plane[:, y1, x0], ly * lx * plane[:, y1, x1]]
    )
    return np.where(outside, 0.0, terms)


@kernel(ROIAlign)
def roi_align(op: ROIAlign, x: np.ndarray, rois: np.ndarray, batch: np.ndarray) -> np.ndarray:
    ph, pw = op.int_prop("pooled_h"), op.int_prop("pooled_w")
    scale, ratio = op.float_prop("spatial_scale"), op.int_prop("sampling_ratio")
    half_pixel = op.str_prop("aligned_mode") == "half_pixel"
    use_max = op.str_prop("mode") == "max"
    if not np.isfinite(rois).all():  # onnxruntime refuses them too; a NaN box indexed the map at -2**63
        raise IrforgeError(f"{op.label}: rois hold NaN or infinite values", fix="check the boxes the model computes", code="E876")
    if batch.size and not (0 <= batch.min() and batch.max() < x.shape[0]):  # numpy would wrap -1 to the last image
        raise IrforgeError(f"{op.label}: batch indices {batch.reshape(-1)[:8].tolist()} name an image outside the batch of {x.shape[0]}",
                           fix="check the batch indices the model computes", code="E875")
    out = np.zeros((rois.shape[0], x.shape[1], ph, pw), np.float64)
    # each image's map in float64 once, not once per RoI: at a detector's real size (800 px,
    # FPN level 2 is [256, 200, 200]) a copy per RoI made Faster R-CNN's 1000 RoIs copy ~80 GB
    planes = {int(i): x[int(i)].astype(np.float64) for i in np.unique(batch)} if rois.shape[0] else {}
    for r, (roi, image) in enumerate(zip(rois.astype(np.float64), batch)):
        x1, y1, x2, y2 = roi * scale - (0.5 if half_pixel else 0.0)
        roi_w, roi_h = x2 - x1, y2 - y1
        if not half_pixel:
            roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
        bin_h, bin_w = roi_h / ph, roi_w / pw
        sy = ratio if ratio > 0 else math.ceil(roi_h / ph)
        sx = ratio if ratio > 0 else math.ceil(roi_w / pw)
        if sy <= 0 or sx <= 0:
            # an adaptive grid of no samples (a box of height or width <= 0 in half_pixel mode):
            # onnxruntime and ONNX's reference give 0 (they average over max(count, 1)), OpenVINO NaN
            continue
        check_output_size(op.label, (4, x.shape[1], ph * sy, pw * sx), np.float64, "set of samples of one box")
        # sample centres of every bin: rows ph*sy, columns pw*sx
        ys = y1 + (np.arange(ph * sy) + 0.5) * bin_h / sy
        xs = x1 + (np.arange(pw * sx) + 0.5) * bin_w / sx
        yy, xx = np.meshgrid(ys, xs, indexing="ij")
        terms = bilinear_terms(planes[int(image)], yy.reshape(-1), xx.reshape(-1))
        # onnxruntime's max mode: the largest weighted term of each sample, not the sample itself
        samples = (terms.max(axis=0) if use_max else terms.sum(axis=0)).reshape(x.shape[1], ph, sy, pw, sx)
        out[r] = samples.max(axis=(2, 4)) if use_max else samples.mean(axis=(2, 4))
    return out.astype(x.dtype)


def corners(boxes: np.ndarray, center: bool) -> np.ndarray:
    """Boxes as (y1, x1, y2, x2) with y1 <= y2 and x1 <= x2."""
    if center:
        xc, yc, w, h = boxes.T
        return np.stack([yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2], axis=1)
    y1, x1, y2, x2 = boxes.T
    return np.stack([np.minimum(y1, y2), np.minimum(x1, x2), np.maximum(y1, y2), np.maximum(x1, x2)], axis=1)


def iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    top, left = np.maximum(box[0], others[:, 0]), np.maximum(box[1], others[:, 1])
    bottom, right = np.minimum(box[2], others[:, 2]), np.minimum(box[3], others[:, 3])
    inter = np.maximum(bottom - top, 0.0) * np.maximum(right - left, 0.0)
    area = lambda b: (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])  # noqa: E731
    union = area(box) + area(others) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


@kernel(NonMaxSuppression)
def non_max_suppression(op: NonMaxSuppression, boxes: np.ndarray, scores: np.ndarray) -> np.ndarray:
    limit = op.int_prop("max_output_boxes_per_class")
    threshold, score_min = op.float_prop("iou_threshold"), op.float_prop("score_threshold")
    rows: list[tuple[int, int, int]] = []
    for n in range(boxes.shape[0]):
        image_boxes = corners(boxes[n].astype(np.float64), op.bool_prop("center_point_box"))
        for c in range(scores.shape[1]):
            s = scores[n, c].astype(np.float64)
            order = [i for i in np.argsort(-s, kind="stable") if s[i] > score_min]
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit:
                    break
                if not kept or np.all(iou(image_boxes[i], image_boxes[kept]) <= threshold):
                    kept.append(int(i))
            rows.extend((n, c, i) for i in kept)
    return np.array(rows, np.int64).reshape(-1, 3)
