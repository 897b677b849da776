"""Reference kernels of the region-based detection ops: Proposal, ROIPooling, PSROIPooling.

They follow py-faster-rcnn's proposal layer, Fast R-CNN's and R-FCN's Caffe pooling layers,
and OpenVINO's reference implementations for the options those lack (bilinear modes,
clip_after_nms, normalize, the box scales).
"""

from __future__ import annotations

import math

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.rcnn import Proposal, PSROIPooling, ROIPooling
from irforge.errors import IrforgeError


def round_half_away(x: np.ndarray | float) -> np.ndarray:
    """C's round(): halves away from zero (numpy rounds them to even)."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


# -- Proposal ------------------------------------------------------------------------------
def anchors(op: Proposal) -> np.ndarray:
    """[A, 4] corner boxes around the first cell, ratios major, scales minor."""
    base = op.int_prop("base_size")
    centre = (base - 1) / 2
    boxes = []
    for r in op.floats("ratio"):
        w0 = float(round_half_away(math.sqrt(base * base / r)))
        h0 = float(round_half_away(w0 * r))
        for s in op.floats("scale"):
            half_w, half_h = (w0 * s - 1) / 2, (h0 * s - 1) / 2
            boxes.append([centre - half_w, centre - half_h, centre + half_w, centre + half_h])
    return np.asarray(boxes, np.float64)


def decode_proposals(op: Proposal, anchor_boxes: np.ndarray, deltas: np.ndarray, image_hw: tuple[float, float]) -> np.ndarray:
    """Boxes [H * W * A, 4] for deltas [4 * A, H, W], cell-major as the scores are."""
    a = anchor_boxes.shape[0]
    h, w = deltas.shape[1:]
    stride = op.int_prop("feat_stride")
    sy, sx = np.meshgrid(np.arange(h) * stride, np.arange(w) * stride, indexing="ij")
    shifts = np.stack([sx, sy, sx, sy], axis=-1).astype(np.float64)  # [H, W, 4]
    boxes = (shifts[:, :, None, :] + anchor_boxes).reshape(-1, 4)
    d = deltas.reshape(a, 4, h, w).transpose(2, 3, 0, 1).reshape(-1, 4).astype(np.float64)
    d[:, :2] /= op.float_prop("box_coordinate_scale")
    d[:, 2:] /= op.float_prop("box_size_scale")
    size = boxes[:, 2:] - boxes[:, :2] + 1
    centre = boxes[:, :2] + size / 2 + d[:, :2] * size
    extent = np.exp(d[:, 2:]) * size
    decoded = np.concatenate([centre - extent / 2, centre + extent / 2], axis=1)
    if op.bool_prop("clip_before_nms"):
        img_h, img_w = image_hw
        decoded = np.clip(decoded, 0, [img_w - 1, img_h - 1, img_w - 1, img_h - 1])
    return decoded


def nms_plus_one(boxes: np.ndarray, threshold: float, limit: int) -> list[int]:
    """Greedy NMS over boxes sorted best first, areas counting both ends (+1 pixel)."""
    area = np.prod(boxes[:, 2:] - boxes[:, :2] + 1, axis=1)
    alive = np.ones(len(boxes), bool)
    kept: list[int] = []
    for i in range(len(boxes)):
        if not alive[i]:
            continue
        kept.append(i)
        if len(kept) == limit:
            break
        low = np.maximum(boxes[i, :2], boxes[i + 1 :, :2])
        high = np.minimum(boxes[i, 2:], boxes[i + 1 :, 2:])
        inter = np.prod(np.clip(high - low + 1, 0, None), axis=1)
        alive[i + 1 :] &= inter / (area[i] + area[i + 1 :] - inter) <= threshold
    return kept


def image_proposals(op: Proposal, scores: np.ndarray, deltas: np.ndarray, info: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows (x1, y1, x2, y2) of one image's proposals, best first, and their object scores."""
    img_h, img_w, scale_h = (float(v) for v in info[:3])
    scale_w = float(info[3]) if info.size == 4 else scale_h
    boxes = decode_proposals(op, anchors(op), deltas, (img_h, img_w))
    score = scores[op.num_anchors() :].transpose(1, 2, 0).reshape(-1)
    size = boxes[:, 2:] - boxes[:, :2] + 1
    min_size = op.int_prop("min_size")
    big = (size[:, 0] >= min_size * scale_w) & (size[:, 1] >= min_size * scale_h)
    candidates = np.flatnonzero(big)
    order = candidates[np.argsort(-score[candidates], kind="stable")][: op.int_prop("pre_nms_topn")]
    kept = order[nms_plus_one(boxes[order], op.float_prop("nms_thresh"), op.int_prop("post_nms_topn"))]
    rows = boxes[kept]
    if op.bool_prop("clip_after_nms"):
        rows = np.clip(rows, 0, [img_w, img_h, img_w, img_h])
    if op.bool_prop("normalize"):
        rows = rows / [img_w, img_h, img_w, img_h]
    return rows, score[kept]


@kernel(Proposal)
def proposal(op: Proposal, scores: np.ndarray, deltas: np.ndarray, info: np.ndarray) -> np.ndarray | list[np.ndarray]:
    post = op.int_prop("post_nms_topn")
    out = np.zeros((scores.shape[0], post, 5), np.float64)
    probs = np.zeros((scores.shape[0], post), np.float64)
    for n in range(scores.shape[0]):
        rows, kept_scores = image_proposals(op, scores[n], deltas[n], info.reshape(-1))
        out[n, : len(rows), 0] = n
        out[n, : len(rows), 1:] = rows
        probs[n, : len(rows)] = kept_scores
        if len(rows) < post:
            out[n, len(rows), 0] = -1  # the end marker of this image's list
    rois = out.reshape(-1, 5).astype(scores.dtype)
    if len(op.results) > 1:
        return [rois, probs.reshape(-1).astype(scores.dtype)]
    return rois


# -- ROI pooling -----------------------------------------------------------------------------
def roi_image(op: ROIPooling | PSROIPooling, roi: np.ndarray, batch: int) -> int | None:
    """The image a ROI reads; None for -1, the end marker of Proposal's lists (zeros out)."""
    index = int(roi[0])
    if index == -1:
        return None
    if not 0 <= index < batch:
        raise IrforgeError(f"ROI batch index {index} is outside [0, {batch})", where=op.label, code="E857")
    return index


def bilinear(plane: np.ndarray, y: float, x: float) -> np.ndarray:
    """plane [..., H, W] interpolated at (y, x) in [0, H - 1] x [0, W - 1]."""
    h, w = plane.shape[-2:]
    top, left = int(math.floor(y)), int(math.floor(x))
    bottom, right = min(top + 1, h - 1), min(left + 1, w - 1)
    fy, fx = y - top, x - left
    upper = plane[..., top, left] + (plane[..., top, right] - plane[..., top, left]) * fx
    lower = plane[..., bottom, left] + (plane[..., bottom, right] - plane[..., bottom, left]) * fx
    return upper + (lower - upper) * fy


def sample_points(start: float, end: float, size: int, pooled: int) -> np.ndarray:
    """Bilinear sampling positions of `pooled` outputs over a normalised span of a map."""
    if pooled == 1:
        return np.asarray([(start + end) / 2 * (size - 1)])
    return start * (size - 1) + np.arange(pooled) * (end - start) * (size - 1) / (pooled - 1)


def roi_max(op: ROIPooling, image: np.ndarray, roi: np.ndarray, out: np.ndarray) -> None:
    h, w = image.shape[1:]
    ph_count, pw_count = out.shape[1:]
    x1, y1, x2, y2 = (int(v) for v in round_half_away(roi[1:] * op.float_prop("spatial_scale")))
    bin_h, bin_w = max(y2 - y1 + 1, 1) / ph_count, max(x2 - x1 + 1, 1) / pw_count
    for ph in range(ph_count):
        top = min(max(math.floor(ph * bin_h) + y1, 0), h)
        bottom = min(max(math.ceil((ph + 1) * bin_h) + y1, 0), h)
        for pw in range(pw_count):
            left = min(max(math.floor(pw * bin_w) + x1, 0), w)
            right = min(max(math.ceil((pw + 1) * bin_w) + x1, 0), w)
            if bottom > top and right > left:
                out[:, ph, pw] = image[:, top:bottom, left:right].max(axis=(1, 2))


def roi_bilinear(op: ROIPooling, image: np.ndarray, roi: np.ndarray, out: np.ndarray) -> None:
    h, w = image.shape[1:]
    ys = sample_points(roi[2], roi[4], h, out.shape[1])
    xs = sample_points(roi[1], roi[3], w, out.shape[2])
    for ph, y in enumerate(ys):
        for pw, x in enumerate(xs):
            if 0 <= y <= h - 1 and 0 <= x <= w - 1:
                out[:, ph, pw] = bilinear(image, y, x)


@kernel(ROIPooling)
def roi_pooling(op: ROIPooling, x: np.ndarray, rois: np.ndarray) -> np.ndarray:
    out = np.zeros((rois.shape[0], x.shape[1], op.int_prop("pooled_h"), op.int_prop("pooled_w")), np.float64)
    pool = roi_max if op.str_prop("method") == "max" else roi_bilinear
    for r, roi in enumerate(rois.astype(np.float64)):
        image = roi_image(op, roi, x.shape[0])
        if image is not None:
            pool(op, x[image].astype(np.float64), roi, out[r])
    return out.astype(x.dtype)


def psroi_average(op: PSROIPooling, image: np.ndarray, roi: np.ndarray, out: np.ndarray) -> None:
    h, w = image.shape[1:]
    group, scale = op.int_prop("group_size"), op.float_prop("spatial_scale")
    x1, y1 = round_half_away(roi[1]) * scale, round_half_away(roi[2]) * scale
    x2, y2 = (round_half_away(roi[3]) + 1) * scale, (round_half_away(roi[4]) + 1) * scale
    # R-FCN keeps degenerate ROIs 0.1 wide rather than empty
    bin_h, bin_w = max(y2 - y1, 0.1) / group, max(x2 - x1, 0.1) / group
    maps = image.reshape(out.shape[0], group, group, h, w)
    for i in range(group):
        # R-FCN's order of operations: bin edges can land on integers, where it decides
        top = min(max(math.floor(i * bin_h + y1), 0), h)
        bottom = min(max(math.ceil((i + 1) * bin_h + y1), 0), h)
        for j in range(group):
            left = min(max(math.floor(j * bin_w + x1), 0), w)
            right = min(max(math.ceil((j + 1) * bin_w + x1), 0), w)
            if bottom > top and right > left:
                out[:, i, j] = maps[:, i, j, top:bottom, left:right].mean(axis=(1, 2))


def psroi_bilinear(op: PSROIPooling, image: np.ndarray, roi: np.ndarray, out: np.ndarray) -> None:
    h, w = image.shape[1:]
    bins_x, bins_y = op.int_prop("spatial_bins_x"), op.int_prop("spatial_bins_y")
    x1, y1, x2, y2 = roi[1:] * op.float_prop("spatial_scale")
    bin_w, bin_h = (x2 - x1) / bins_x, (y2 - y1) / bins_y
    maps = image.reshape(bins_y, bins_x, out.shape[0], h, w)
    for by in range(bins_y):
        ys = sample_points(y1 + by * bin_h, y1 + (by + 1) * bin_h, h, out.shape[1])
        for bx in range(bins_x):
            xs = sample_points(x1 + bx * bin_w, x1 + (bx + 1) * bin_w, w, out.shape[2])
            for i, y in enumerate(ys):
                for j, x in enumerate(xs):
                    if 0 <= y <= h - 1 and 0 <= x <= w - 1:
                        out[:, i, j] += bilinear(maps[by, bx], y, x)
    out /= bins_x * bins_y


@kernel(PSROIPooling)
def psroi_pooling(op: PSROIPooling, x: np.ndarray, rois: np.ndarray) -> np.ndarray:
    group = op.int_prop("group_size")
    out = np.zeros((rois.shape[0], op.int_prop("output_dim"), group, group), np.float64)
    pool = psroi_average if op.str_prop("mode") == "average" else psroi_bilinear
    for r, roi in enumerate(rois.astype(np.float64)):
        image = roi_image(op, roi, x.shape[0])
        if image is not None:
            pool(op, x[image].astype(np.float64), roi, out[r])
    return out.astype(x.dtype)
