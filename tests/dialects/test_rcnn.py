"""nn.proposal, nn.roi_pooling and nn.psroi_pooling: shape inference, verifier and numerics
against py-faster-rcnn's proposal layer, Fast R-CNN's ROI pooling and R-FCN's PSROI pooling
(and OpenVINO's bilinear modes), implemented here independently with plain loops; max ROI
pooling also against onnxruntime's MaxRoiPool."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import Proposal, PSROIPooling, ROIPooling
from irforge.errors import IrforgeError
from tests.helpers import onnx_run, rand, run_op


def c_round(v: float) -> float:
    return math.floor(v + 0.5) if v >= 0 else -math.floor(-v + 0.5)


# -- py-faster-rcnn ----------------------------------------------------------------------------
def generate_anchors(base_size: int, ratios, scales) -> list[list[float]]:  # type: ignore[no-untyped-def]
    def whctrs(a):  # type: ignore[no-untyped-def]
        w, h = a[2] - a[0] + 1, a[3] - a[1] + 1
        return w, h, a[0] + 0.5 * (w - 1), a[1] + 0.5 * (h - 1)

    def mkanchor(w, h, cx, cy):  # type: ignore[no-untyped-def]
        return [cx - 0.5 * (w - 1), cy - 0.5 * (h - 1), cx + 0.5 * (w - 1), cy + 0.5 * (h - 1)]

    w, h, cx, cy = whctrs([0, 0, base_size - 1, base_size - 1])
    anchors = []
    for r in ratios:
        ws = c_round(math.sqrt(w * h / r))
        rw, rh, rcx, rcy = whctrs(mkanchor(ws, c_round(ws * r), cx, cy))
        anchors += [mkanchor(rw * s, rh * s, rcx, rcy) for s in scales]
    return anchors


def faster_rcnn_boxes(scores, deltas, n, info, anchors, feat_stride, min_size):  # type: ignore[no-untyped-def]
    """(score, box) of every anchor of image n that passes the min_size filter."""
    img_h, img_w, scale_h = info[:3]
    scale_w = info[3] if len(info) == 4 else scale_h
    found = []
    for y in range(scores.shape[2]):
        for x in range(scores.shape[3]):
            for a, anchor in enumerate(anchors):
                x1, y1 = anchor[0] + x * feat_stride, anchor[1] + y * feat_stride
                width, height = anchor[2] - anchor[0] + 1, anchor[3] - anchor[1] + 1
                dx, dy, dw, dh = (float(deltas[n, 4 * a + k, y, x]) for k in range(4))
                cx, cy = dx * width + x1 + 0.5 * width, dy * height + y1 + 0.5 * height
                pw, ph = math.exp(dw) * width, math.exp(dh) * height
                box = [cx - 0.5 * pw, cy - 0.5 * ph, cx + 0.5 * pw, cy + 0.5 * ph]
                box = [min(max(v, 0.0), limit - 1) for v, limit in zip(box, (img_w, img_h, img_w, img_h))]
                if box[2] - box[0] + 1 >= min_size * scale_w and box[3] - box[1] + 1 >= min_size * scale_h:
                    found.append((float(scores[n, len(anchors) + a, y, x]), box))
    return found


def overlap(a, b) -> float:  # type: ignore[no-untyped-def]
    iw = min(a[2], b[2]) - max(a[0], b[0]) + 1
    ih = min(a[3], b[3]) - max(a[1], b[1]) + 1
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    return inter / ((a[2] - a[0] + 1) * (a[3] - a[1] + 1) + (b[2] - b[0] + 1) * (b[3] - b[1] + 1) - inter)


def faster_rcnn_proposal(scores, deltas, info, base_size, feat_stride, min_size, ratio, scale, pre_nms_topn, post_nms_topn, nms_thresh):  # type: ignore[no-untyped-def]
    anchors = generate_anchors(base_size, ratio, scale)
    out = np.zeros((scores.shape[0] * post_nms_topn, 5))
    for n in range(scores.shape[0]):
        found = sorted(faster_rcnn_boxes(scores, deltas, n, info, anchors, feat_stride, min_size), key=lambda f: -f[0])[:pre_nms_topn]
        keep: list[list[float]] = []
        for _, box in found:
            if len(keep) < post_nms_topn and all(overlap(box, k) <= nms_thresh for k in keep):
                keep.append(box)
        for i, box in enumerate(keep):
            out[n * post_nms_topn + i] = [n, *box]
        if len(keep) < post_nms_topn:
            out[n * post_nms_topn + len(keep), 0] = -1
    return out


PROPOSAL = dict(base_size=16, feat_stride=16, min_size=16, ratio=[0.5, 1.0, 2.0], scale=[1.0, 2.0], pre_nms_topn=60, post_nms_topn=15, nms_thresh=0.7)


@pytest.mark.parametrize(
    ("info", "changes"),
    [
        ([80.0, 112.0, 1.0], {}),
        ([80.0, 112.0, 0.6], dict(nms_thresh=0.4, pre_nms_topn=200)),
        ([[70.0, 100.0, 1.2, 0.5]], dict(min_size=24)),
        ([80.0, 112.0, 1.0], dict(pre_nms_topn=9)),  # fewer than post_nms_topn: padding rows
        ([64.0, 64.0, 1.0], dict(ratio=[0.7, 1.3], scale=[1.5, 3.0, 5.0], base_size=10, feat_stride=8)),
    ],
)
def test_proposal_matches_faster_rcnn(info, changes) -> None:
    props = {**PROPOSAL, **changes}
    a = len(props["ratio"]) * len(props["scale"])
    scores = rand(2, 2 * a, 5, 7, seed=len(changes), low=0.0, high=1.0)
    deltas = rand(2, 4 * a, 5, 7, seed=9, low=-0.5, high=0.5)
    info_array = np.array(info, np.float32)
    (got,) = run_op(Proposal, [scores, deltas, info_array], **props)
    want = faster_rcnn_proposal(scores, deltas, info_array.reshape(-1).tolist(), **props)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    assert (got[:, 0] >= 0).sum() > 5


def test_proposal_normalize_and_clip_after_nms() -> None:
    scores, deltas = rand(1, 12, 4, 4, seed=1, low=0.0, high=1.0), rand(1, 24, 4, 4, seed=2)
    info = np.array([60.0, 50.0, 1.0], np.float32)
    props = {**PROPOSAL, "ratio": [0.5, 1.0, 2.0], "scale": [2.0, 4.0], "clip_before_nms": False}
    (plain,) = run_op(Proposal, [scores, deltas, info], **props)
    (clipped,) = run_op(Proposal, [scores, deltas, info], **props, clip_after_nms=True, normalize=True)
    np.testing.assert_allclose(clipped[:, 0], plain[:, 0])
    bounds = np.array([50.0, 60.0, 50.0, 60.0])
    np.testing.assert_allclose(clipped[:, 1:], np.clip(plain[:, 1:], 0, bounds) / bounds, rtol=1e-6)
    assert (plain[:, 1:] > bounds).any()  # unclipped boxes leave the image


def build(cls, shapes, **props):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    return b.add(cls, [b.input(f"x{i}", s) for i, s in enumerate(shapes)], **props)


def test_proposal_shapes() -> None:
    op = build(Proposal, [(2, 12, 5, 7), (2, 24, 5, 7), (1, 3)], **{**PROPOSAL, "post_nms_topn": 300})
    assert op.output.type.get_shape() == (600, 5)


@pytest.mark.parametrize(
    ("shapes", "changes", "message"),
    [
        ([(1, 10, 5, 7), (1, 24, 5, 7), (3,)], {}, r"class_probs must be \[N, 12, H, W\] \(2 per anchor\)"),
        ([(1, 12, 5, 7), (1, 24, 5, 6), (3,)], {}, "class_probs and bbox_deltas differ in dimension 3: 7 vs 6"),
        ([(1, 12, 5, 7), (1, 24, 5, 7), (2, 3)], {}, "image_shape must hold 3 or 4 values"),
        ([(1, 12, 5, 7), (1, 24, 5, 7), (3,)], dict(ratio=[]), "ratio must not be empty"),
        ([(1, 12, 5, 7), (1, 24, 5, 7), (3,)], dict(post_nms_topn=0), "post_nms_topn must be >= 1, got 0"),
        ([(1, 12, 5, 7), (1, 24, 5, 7), (3,)], dict(nms_thresh=1.5), r"nms_thresh must be in \[0, 1\]"),
        ([(1, 12, 5, 7), (1, 24, 5, 7), (3,)], dict(scale=[1.0, -2.0]), "scale values must be > 0"),
    ],
)
def test_proposal_verifier(shapes, changes, message) -> None:
    with pytest.raises(VerifyException, match=message):
        build(Proposal, shapes, **{**PROPOSAL, **changes})


# -- ROIPooling --------------------------------------------------------------------------------
def fast_rcnn_roi_pool(x, rois, ph_count, pw_count, scale):  # type: ignore[no-untyped-def]
    out = np.zeros((len(rois), x.shape[1], ph_count, pw_count))
    height, width = x.shape[2:]
    for r, roi in enumerate(rois):
        x1, y1, x2, y2 = (int(c_round(float(v) * scale)) for v in roi[1:])
        bin_h, bin_w = max(y2 - y1 + 1, 1) / ph_count, max(x2 - x1 + 1, 1) / pw_count
        for c in range(x.shape[1]):
            for ph in range(ph_count):
                for pw in range(pw_count):
                    hs = min(max(math.floor(ph * bin_h) + y1, 0), height)
                    he = min(max(math.ceil((ph + 1) * bin_h) + y1, 0), height)
                    ws = min(max(math.floor(pw * bin_w) + x1, 0), width)
                    we = min(max(math.ceil((pw + 1) * bin_w) + x1, 0), width)
                    values = [x[int(roi[0]), c, h, w] for h in range(hs, he) for w in range(ws, we)]
                    out[r, c, ph, pw] = max(values) if values else 0.0
    return out


def interpolate(plane, y: float, x: float) -> float:  # type: ignore[no-untyped-def]
    top, left = math.floor(y), math.floor(x)
    bottom, right = min(math.ceil(y), plane.shape[0] - 1), min(math.ceil(x), plane.shape[1] - 1)
    upper = plane[top, left] + (plane[top, right] - plane[top, left]) * (x - left)
    lower = plane[bottom, left] + (plane[bottom, right] - plane[bottom, left]) * (x - left)
    return float(upper + (lower - upper) * (y - top))


def bilinear_roi_pool(x, rois, ph_count, pw_count):  # type: ignore[no-untyped-def]
    """OpenVINO's ROIPooling-2 bilinear method, one output at a time."""
    out = np.zeros((len(rois), x.shape[1], ph_count, pw_count))
    height, width = x.shape[2:]
    for r, (b, x1, y1, x2, y2) in enumerate(rois.tolist()):
        for c in range(x.shape[1]):
            for ph in range(ph_count):
                for pw in range(pw_count):
                    y = ph * (y2 - y1) * (height - 1) / (ph_count - 1) + y1 * (height - 1) if ph_count > 1 else 0.5 * (y1 + y2) * (height - 1)
                    xx = pw * (x2 - x1) * (width - 1) / (pw_count - 1) + x1 * (width - 1) if pw_count > 1 else 0.5 * (x1 + x2) * (width - 1)
                    if 0 <= y <= height - 1 and 0 <= xx <= width - 1:
                        out[r, c, ph, pw] = interpolate(x[int(b), c], y, xx)
    return out


ROIS = np.array([[0, 1, 2, 20, 14], [1, 3.4, 0.6, 9.5, 7.5], [1, -4, -3, 30, 20], [0, 12.2, 9.7, 12.4, 9.9], [1, 30, 20, 40, 28]], np.float32)
NORMALISED = np.array([[0, 0.1, 0.2, 0.8, 0.6], [1, 0.0, 0.0, 1.0, 1.0], [0, 0.55, 0.3, 0.6, 0.95], [1, -0.2, 0.5, 1.3, 0.7]], np.float32)
MAPS = rand(2, 8, 16, 24, seed=3)


@pytest.mark.parametrize(("pooled", "scale"), [((3, 4), 1.0), ((2, 2), 0.5), ((7, 5), 0.75)])
def test_roi_pooling_max_matches_fast_rcnn_and_onnxruntime(pooled, scale) -> None:
    (got,) = run_op(ROIPooling, [MAPS, ROIS], pooled_h=pooled[0], pooled_w=pooled[1], spatial_scale=scale)
    np.testing.assert_allclose(got, fast_rcnn_roi_pool(MAPS, ROIS, *pooled, float(np.float32(scale))), rtol=1e-6)
    (ort,) = onnx_run("MaxRoiPool", [MAPS, ROIS], pooled_shape=list(pooled), spatial_scale=scale)
    np.testing.assert_allclose(got, ort, rtol=1e-6)


@pytest.mark.parametrize("pooled", [(3, 5), (1, 2), (4, 1)])
def test_roi_pooling_bilinear(pooled) -> None:
    (got,) = run_op(ROIPooling, [MAPS, NORMALISED], pooled_h=pooled[0], pooled_w=pooled[1], spatial_scale=1.0, method="bilinear")
    np.testing.assert_allclose(got, bilinear_roi_pool(MAPS, NORMALISED, *pooled), rtol=1e-6, atol=1e-7)


def test_roi_pooling_end_marker_rows_are_zero_and_bad_indices_fail() -> None:
    rois = np.array([[0, 1, 1, 5, 5], [-1, 0, 0, 0, 0]], np.float32)
    (got,) = run_op(ROIPooling, [MAPS, rois], pooled_h=2, pooled_w=2, spatial_scale=1.0)
    assert np.all(got[1] == 0) and np.any(got[0] != 0)
    with pytest.raises(IrforgeError, match=r"ROI batch index 2 is outside \[0, 2\)"):
        run_op(ROIPooling, [MAPS, rois + np.array([2, 0, 0, 0, 0], np.float32)], pooled_h=2, pooled_w=2, spatial_scale=1.0)


@pytest.mark.parametrize(
    ("shapes", "props", "message"),
    [
        ([(1, 8, 16, 24), (5, 4)], {}, r"rois must be \[R, 5\]"),
        ([(8, 16, 24), (5, 5)], {}, "input must have rank 4"),
        ([(1, 8, 16, 24), (5, 5)], dict(pooled_h=0), "pooled_h must be >= 1, got 0"),
        ([(1, 8, 16, 24), (5, 5)], dict(spatial_scale=0.0), "spatial_scale must be > 0"),
        ([(1, 8, 16, 24), (5, 5)], dict(method="avg"), "method must be one of bilinear, max, got 'avg'"),
    ],
)
def test_roi_pooling_verifier(shapes, props, message) -> None:
    with pytest.raises(VerifyException, match=message):
        build(ROIPooling, shapes, **{"pooled_h": 2, "pooled_w": 2, "spatial_scale": 1.0, **props})


def test_roi_pooling_shapes() -> None:
    assert build(ROIPooling, [(1, 512, 14, 14), (300, 5)], pooled_h=7, pooled_w=6, spatial_scale=0.0625).output.type.get_shape() == (300, 512, 7, 6)


# -- PSROIPooling ----------------------------------------------------------------------------
def rfcn_psroi_pool(x, rois, output_dim, group, scale):  # type: ignore[no-untyped-def]
    out = np.zeros((len(rois), output_dim, group, group))
    height, width = x.shape[2:]
    for r, roi in enumerate(rois.tolist()):
        x1, y1 = c_round(roi[1]) * scale, c_round(roi[2]) * scale
        x2, y2 = (c_round(roi[3]) + 1) * scale, (c_round(roi[4]) + 1) * scale
        bin_h, bin_w = max(y2 - y1, 0.1) / group, max(x2 - x1, 0.1) / group
        for c in range(output_dim):
            for ph in range(group):
                for pw in range(group):
                    hs = min(max(math.floor(ph * bin_h + y1), 0), height)
                    he = min(max(math.ceil((ph + 1) * bin_h + y1), 0), height)
                    ws = min(max(math.floor(pw * bin_w + x1), 0), width)
                    we = min(max(math.ceil((pw + 1) * bin_w + x1), 0), width)
                    channel = (c * group + ph) * group + pw
                    values = [x[int(roi[0]), channel, h, w] for h in range(hs, he) for w in range(ws, we)]
                    out[r, c, ph, pw] = sum(values) / len(values) if values else 0.0
    return out


def bilinear_psroi_pool(x, rois, output_dim, group, scale, bins_x, bins_y):  # type: ignore[no-untyped-def]
    """OpenVINO's PSROIPooling-1 bilinear mode, one output at a time."""
    out = np.zeros((len(rois), output_dim, group, group))
    height, width = x.shape[2:]
    for r, roi in enumerate(rois.tolist()):
        x1, y1, x2, y2 = (v * scale for v in roi[1:])
        bin_w, bin_h = (x2 - x1) / bins_x, (y2 - y1) / bins_y
        for c in range(output_dim):
            for ph in range(group):
                for pw in range(group):
                    total = 0.0
                    for by in range(bins_y):
                        for bx in range(bins_x):
                            sx, sy = x1 + bx * bin_w, y1 + by * bin_h
                            px = pw * bin_w * (width - 1) / (group - 1) + sx * (width - 1) if group > 1 else (2 * sx + bin_w) * (width - 1) / 2
                            py = ph * bin_h * (height - 1) / (group - 1) + sy * (height - 1) if group > 1 else (2 * sy + bin_h) * (height - 1) / 2
                            if 0 <= px <= width - 1 and 0 <= py <= height - 1:
                                total += interpolate(x[int(roi[0]), (by * bins_x + bx) * output_dim + c], py, px)
                    out[r, c, ph, pw] = total / (bins_x * bins_y)
    return out


@pytest.mark.parametrize(("output_dim", "group", "scale"), [(2, 2, 1.0), (1, 3, 0.5), (8, 1, 0.8)])
def test_psroi_pooling_average_matches_rfcn(output_dim, group, scale) -> None:
    x = rand(2, output_dim * group * group, 16, 24, seed=group)
    (got,) = run_op(PSROIPooling, [x, ROIS], output_dim=output_dim, group_size=group, spatial_scale=scale)
    # spatial_scale is a float32, as in Caffe: 0.8 is 0.800000011920929, which moves bin edges
    want = rfcn_psroi_pool(x, ROIS, output_dim, group, float(np.float32(scale)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize(("output_dim", "group", "bins"), [(2, 3, (2, 2)), (8, 1, (1, 1)), (1, 2, (3, 1))])
def test_psroi_pooling_bilinear(output_dim, group, bins) -> None:
    x = rand(2, output_dim * bins[0] * bins[1], 16, 24, seed=7)
    props = dict(output_dim=output_dim, group_size=group, spatial_scale=1.0, mode="bilinear", spatial_bins_x=bins[0], spatial_bins_y=bins[1])
    (got,) = run_op(PSROIPooling, [x, NORMALISED], **props)
    np.testing.assert_allclose(got, bilinear_psroi_pool(x, NORMALISED, output_dim, group, 1.0, *bins), rtol=1e-5, atol=1e-7)


def test_psroi_pooling_shapes() -> None:
    assert build(PSROIPooling, [(1, 1029, 14, 14), (300, 5)], output_dim=21, group_size=7, spatial_scale=0.0625).output.type.get_shape() == (300, 21, 7, 7)
    op = build(PSROIPooling, [(1, 84, 14, 14), (300, 5)], output_dim=21, group_size=7, spatial_scale=1.0, mode="bilinear", spatial_bins_x=2, spatial_bins_y=2)
    assert op.output.type.get_shape() == (300, 21, 7, 7)


@pytest.mark.parametrize(
    ("shape", "props", "message"),
    [
        ((1, 20, 8, 8), dict(output_dim=5, group_size=3), r"input must have output_dim \* 9 = 45 channels in average mode, got 20"),
        ((1, 20, 8, 8), dict(output_dim=5, group_size=2, mode="bilinear", spatial_bins_x=3), r"output_dim \* 3 = 15 channels in bilinear mode"),
        ((1, 20, 8, 8), dict(output_dim=0, group_size=2), "output_dim must be >= 1, got 0"),
        ((1, 20, 8, 8), dict(output_dim=5, group_size=2, mode="max"), "mode must be one of average, bilinear"),
    ],
)
def test_psroi_pooling_verifier(shape, props, message) -> None:
    with pytest.raises(VerifyException, match=message):
        build(PSROIPooling, [shape, (4, 5)], spatial_scale=1.0, **props)
