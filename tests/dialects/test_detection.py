"""nn.prior_box, nn.prior_box_clustered and nn.detection_output: shape inference, verifier and
numerics against the catalog's formulas (SSD's Caffe layers), implemented here independently
with plain loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import DetectionOutput, PriorBox, PriorBoxClustered
from tests.helpers import run_op

FLT_MAX = 3.4028234663852886e38


# -- the catalog's formulas, one box at a time -----------------------------------------------
def numpy_prior_box(feature_hw, image_hw, min_sizes, max_sizes=(), ratios=(), flip=False, clip=False, step=0.0, offset=0.5, variance=(0.1,)):
    (fh, fw), (ih, iw) = feature_hw, image_hw
    ars = [1.0]
    for r in ratios:
        if all(abs(r - a) >= 1e-6 for a in ars):
            ars += [r, 1.0 / r] if flip else [r]
    step_h = step or ih / fh
    step_w = step or iw / fw
    boxes = []
    for h in range(fh):
        for w in range(fw):
            cx, cy = (w + offset) * step_w, (h + offset) * step_h
            for i, s in enumerate(min_sizes):
                sizes = [(s, s)]
                if max_sizes:
                    sizes.append((math.sqrt(s * max_sizes[i]),) * 2)
                sizes += [(s * math.sqrt(a), s / math.sqrt(a)) for a in ars if abs(a - 1.0) >= 1e-6]
                for bw, bh in sizes:
                    boxes.append([(cx - bw / 2) / iw, (cy - bh / 2) / ih, (cx + bw / 2) / iw, (cy + bh / 2) / ih])
    flat = np.array(boxes).reshape(-1)
    if clip:
        flat = np.minimum(np.maximum(flat, 0), 1)
    var = list(variance) * 4 if len(variance) == 1 else list(variance)
    return np.stack([flat, np.tile(var, len(boxes))])[None].astype(np.float32)


def numpy_prior_box_clustered(feature_hw, image_hw, widths, heights, step_w, step_h, offset=0.5, variance=(0.1,)):
    (fh, fw), (ih, iw) = feature_hw, image_hw
    boxes = []
    for h in range(fh):
        for w in range(fw):
            cx, cy = (w + offset) * (step_w or iw / fw), (h + offset) * (step_h or ih / fh)
            for bw, bh in zip(widths, heights):
                boxes.append([(cx - bw / 2) / iw, (cy - bh / 2) / ih, (cx + bw / 2) / iw, (cy + bh / 2) / ih])
    var = list(variance) * 4 if len(variance) == 1 else list(variance)
    return np.stack([np.array(boxes).reshape(-1), np.tile(var, len(boxes))])[None].astype(np.float32)


def jaccard(a, b):
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    if iw <= 0 or ih <= 0:
        return 0.0
    inter = iw * ih
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def decode_center_size(prior, var, d):
    pw, ph = prior[2] - prior[0], prior[3] - prior[1]
    cx = (prior[0] + prior[2]) / 2 + var[0] * d[0] * pw
    cy = (prior[1] + prior[3]) / 2 + var[1] * d[1] * ph
    w, h = math.exp(var[2] * d[2]) * pw, math.exp(var[3] * d[3]) * ph
    return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2]


def numpy_detection_output(loc, conf, priors, num_classes, background, nms_threshold, top_k, keep_top_k, threshold):
    """CENTER_SIZE, shared locations: Caffe's DetectionOutput, with the output padded by -1 rows."""
    batch, num_priors = loc.shape[0], priors.shape[2] // 4
    rows = []
    for n in range(batch):
        boxes = [decode_center_size(priors[0, 0, 4 * p : 4 * p + 4], priors[0, 1, 4 * p : 4 * p + 4], loc[n, 4 * p : 4 * p + 4]) for p in range(num_priors)]
        kept = []
        for c in range(num_classes):
            if c == background:
                continue
            scores = [(float(conf[n, p * num_classes + c]), p) for p in range(num_priors)]
            scores = sorted([s for s in scores if s[0] > threshold], key=lambda s: -s[0])[:top_k]
            chosen = []
            for score, p in scores:
                if all(jaccard(boxes[p], boxes[q]) <= nms_threshold for _, q in chosen):
                    chosen.append((score, p))
            kept += [(c, score, p) for score, p in chosen]
        kept = sorted(kept, key=lambda k: -k[1])[:keep_top_k]
        kept = sorted(kept, key=lambda k: (k[0], -k[1]))
        rows += [[n, c, s, *boxes[p]] for c, s, p in kept]
    out = np.zeros((batch * keep_top_k, 7))
    out[:, 0] = -1
    out[: len(rows)] = rows
    return out.reshape(1, 1, -1, 7)


# -- PriorBox ------------------------------------------------------------------------------
PRIOR_CASES = [
    dict(min_size=[4.0]),
    dict(min_size=[4.0, 9.0], max_size=[8.0, 15.0], aspect_ratio=[2.0, 3.0, 2.0], flip=True, clip=True),
    dict(min_size=[10.0], aspect_ratio=[0.5], step=8.0, offset=0.25, variance=[0.1, 0.1, 0.2, 0.2]),
]


@pytest.mark.parametrize("props", PRIOR_CASES)
def test_prior_box_matches_formula(props: dict) -> None:
    feature, image = np.zeros((1, 2, 3, 5), np.float32), np.zeros((1, 3, 24, 40), np.float32)
    (got,) = run_op(PriorBox, [feature, image], **props)
    want = numpy_prior_box(
        (3, 5), (24, 40), props["min_size"], props.get("max_size", ()), props.get("aspect_ratio", ()),
        props.get("flip", False), props.get("clip", False), props.get("step", 0.0), props.get("offset", 0.5),
        props.get("variance", (0.1,)),
    )  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_prior_box_image_size_property_overrides_operand() -> None:
    (got,) = run_op(PriorBox, [np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 1, 5, 5), np.float32)], min_size=[3.0], img_h=8, img_w=16)
    np.testing.assert_allclose(got, numpy_prior_box((2, 2), (8, 16), [3.0]), rtol=1e-6)


def test_prior_box_clustered_matches_formula() -> None:
    feature, image = np.zeros((1, 2, 4, 3), np.float32), np.zeros((1, 3, 32, 30), np.float32)
    props = dict(width=[5.0, 12.0, 7.5], height=[9.0, 4.0, 7.5], step_w=10.0, variance=[0.1, 0.1, 0.2, 0.2])
    (got,) = run_op(PriorBoxClustered, [feature, image], **props)
    want = numpy_prior_box_clustered((4, 3), (32, 30), props["width"], props["height"], 10.0, 0.0, variance=props["variance"])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def build(cls, shapes, **props):
    b = ModelBuilder()
    operands = [b.input(f"x{i}", s) for i, s in enumerate(shapes)]
    return b.add(cls, operands, **props)


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (dict(min_size=[]), "min_size must not be empty"),
        (dict(min_size=[-1.0]), "min_size values must be > 0"),
        (dict(min_size=[4.0], max_size=[3.0]), "max_size needs one value per min_size, each larger"),
        (dict(min_size=[4.0], variance=[0.1, 0.2]), "variance needs 1 or 4 values, got 2"),
    ],
)
def test_prior_box_verifier(props: dict, message: str) -> None:
    with pytest.raises(VerifyException, match=message):
        build(PriorBox, [(1, 1, 2, 2), (1, 3, 8, 8)], **props)


def test_prior_box_shapes() -> None:
    op = build(PriorBox, [(1, 8, 3, 4), (1, 3, 30, 40)], min_size=[4.0], max_size=[9.0], aspect_ratio=[2.0], flip=True)
    assert op.output.type.get_shape() == (1, 2, 3 * 4 * 4 * 4)
    with pytest.raises(VerifyException, match="image must have rank 4"):
        build(PriorBox, [(1, 8, 3, 4), (30, 40)], min_size=[4.0])


# -- DetectionOutput -------------------------------------------------------------------------
def detection_inputs(batch: int, num_priors: int, classes: int, seed: int):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.2, 0.8, (num_priors, 2))
    sizes = rng.uniform(0.05, 0.3, (num_priors, 2))
    priors = np.concatenate([centres - sizes / 2, centres + sizes / 2], axis=1).reshape(-1)
    variances = np.tile([0.1, 0.1, 0.2, 0.2], num_priors)
    prior_blob = np.stack([priors, variances])[None].astype(np.float32)
    loc = rng.standard_normal((batch, num_priors * 4)).astype(np.float32)
    logits = rng.standard_normal((batch, num_priors, classes)) * 2
    conf = (np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).reshape(batch, -1).astype(np.float32)
    return loc, conf, prior_blob


@pytest.mark.parametrize(("nms", "top_k", "keep", "threshold"), [(0.45, 30, 12, 0.05), (0.2, 100, 40, 0.0), (0.7, 5, 8, 0.3)])
def test_detection_output_matches_formula(nms: float, top_k: int, keep: int, threshold: float) -> None:
    loc, conf, priors = detection_inputs(2, 40, 3, seed=int(nms * 100))
    props = dict(num_classes=3, background_label_id=0, nms_threshold=nms, top_k=top_k, keep_top_k=keep, confidence_threshold=threshold, code_type="caffe.PriorBoxParameter.CENTER_SIZE")
    (got,) = run_op(DetectionOutput, [loc, conf, priors], **props)
    want = numpy_detection_output(loc, conf, priors, 3, 0, nms, top_k, keep, threshold)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert (got[0, 0, :, 0] >= 0).sum() > 0


def test_detection_output_corner_code_without_background() -> None:
    loc, conf, priors = detection_inputs(1, 10, 2, seed=5)
    loc *= 0.01
    props = dict(num_classes=2, background_label_id=-1, nms_threshold=0.5, keep_top_k=20, confidence_threshold=0.0)
    (got,) = run_op(DetectionOutput, [loc, conf, priors], **props)
    detections = got[0, 0][got[0, 0, :, 0] >= 0]
    assert set(detections[:, 1]) <= {0.0, 1.0}
    # CORNER: box = prior + variance * delta
    boxes, var = priors[0, 0].reshape(-1, 4), priors[0, 1].reshape(-1, 4)
    decoded = boxes + var * loc.reshape(-1, 4)
    for row in detections:
        assert np.min(np.abs(decoded - row[3:]).max(axis=1)) < 1e-6


@pytest.mark.parametrize(
    ("shapes", "props", "message"),
    [
        ([(1, 36), (1, 30), (1, 2, 40)], dict(num_classes=3), "location must hold 4 values per prior"),
        ([(1, 40), (1, 20), (1, 2, 40)], dict(num_classes=3), "confidence must hold 3 values per prior"),
        ([(1, 40), (1, 30), (1, 3, 40)], dict(num_classes=3), "priors must have 2 rows"),
        ([(1, 40), (1, 30), (1, 2, 40)], dict(num_classes=3, background_label_id=3), "background_label_id must be -1 or a class below 3"),
        ([(1, 40), (1, 30), (1, 2, 40)], dict(num_classes=3, keep_top_k=0), "keep_top_k must be -1 or positive"),
        ([(1, 40), (1, 30), (1, 2, 40)], dict(num_classes=3, code_type="CORNER"), "code_type must be one of"),
    ],
)
def test_detection_output_verifier(shapes, props, message) -> None:
    with pytest.raises(VerifyException, match=message):
        build(DetectionOutput, shapes, nms_threshold=0.5, **props)


def test_detection_output_rows() -> None:
    shapes = [(2, 40), (2, 30), (1, 2, 40)]
    assert build(DetectionOutput, shapes, num_classes=3, nms_threshold=0.5, keep_top_k=7).output.type.get_shape() == (1, 1, 14, 7)
    assert build(DetectionOutput, shapes, num_classes=3, nms_threshold=0.5, top_k=4).output.type.get_shape() == (1, 1, 8, 7)
    assert build(DetectionOutput, shapes, num_classes=3, nms_threshold=0.5).output.type.get_shape() == (1, 1, 60, 7)
