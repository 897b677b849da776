"""An MXNet SSD head (MultiBoxPrior, SoftmaxActivation, MultiBoxDetection): the network
through an ONNX twin, anchors and detections against numpy implementations of MXNet's own
MultiBoxPrior and MultiBoxDetection (written from MXNet's multibox_*.cc), detections
compared as a set (DetectionOutput orders and labels them its own way)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.errors import IrforgeError

from irforge.backends.reference import run
from tests.frontends.mxnet.support import import_args
from tests.frontends.mxnet.twins import Twin
from tests.helpers import ort_session_run


def mxnet_multibox_prior(height: int, width: int, sizes: list[float], ratios: list[float], steps=(-1.0, -1.0), offsets=(0.5, 0.5), clip=False) -> np.ndarray:  # type: ignore[no-untyped-def]
    step_y = steps[0] if steps[0] > 0 else 1.0 / height
    step_x = steps[1] if steps[1] > 0 else 1.0 / width
    out = []
    for r in range(height):
        cy = (r + offsets[0]) * step_y
        for c in range(width):
            cx = (c + offsets[1]) * step_x
            ratio = np.sqrt(ratios[0])
            for s in sizes:
                w, h = s * height / width * ratio / 2, s / ratio / 2
                out.append([cx - w, cy - h, cx + w, cy + h])
            for ratio_j in ratios[1:]:
                ratio = np.sqrt(ratio_j)
                w, h = sizes[0] * height / width * ratio / 2, sizes[0] / ratio / 2
                out.append([cx - w, cy - h, cx + w, cy + h])
    anchors = np.array(out, np.float64)
    return (np.clip(anchors, 0, 1) if clip else anchors).reshape(1, -1, 4)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    w = max(min(a[2], b[2]) - max(a[0], b[0]), 0)
    h = max(min(a[3], b[3]) - max(a[1], b[1]), 0)
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def mxnet_multibox_detection(cls_prob, loc, anchors, threshold, nms_threshold, clip=True, variances=(0.1, 0.1, 0.2, 0.2)):  # type: ignore[no-untyped-def]
    """Rows (class, score, box) of one image: each anchor's best non-background class
    scoring at least threshold, decoded, sorted by score, suppressed within its class."""
    probs, deltas, priors = cls_prob[0].astype(np.float64), loc[0].reshape(-1, 4).astype(np.float64), anchors[0]
    found = []
    for i in range(priors.shape[0]):
        cls = int(np.argmax(probs[1:, i])) + 1
        score = probs[cls, i]
        if score < threshold:
            continue
        al, at, ar, ab = priors[i]
        aw, ah = ar - al, ab - at
        ax, ay = (al + ar) / 2, (at + ab) / 2
        ox = deltas[i, 0] * variances[0] * aw + ax
        oy = deltas[i, 1] * variances[1] * ah + ay
        ow = np.exp(deltas[i, 2] * variances[2]) * aw / 2
        oh = np.exp(deltas[i, 3] * variances[3]) * ah / 2
        box = np.array([ox - ow, oy - oh, ox + ow, oy + oh])
        found.append((cls - 1, score, np.clip(box, 0, 1) if clip else box))
    found.sort(key=lambda d: -d[1])
    kept: list = []
    for det in found:
        if all(k[0] != det[0] or iou(k[2], det[2]) <= nms_threshold for k in kept):
            kept.append(det)
    return kept


def detections(out: np.ndarray) -> list[tuple]:
    """DetectionOutput's rows up to the first image_id -1 (OpenVINO ends the list there)
    as (MXNet class, score, box): its labels count the background class."""
    rows = out.reshape(-1, 7)
    end = np.flatnonzero(rows[:, 0] < 0)
    rows = rows[: end[0] if end.size else len(rows)]
    return as_set((r[1] - 1, r[2], r[3:]) for r in rows)


def as_set(rows) -> list[tuple]:  # type: ignore[no-untyped-def]
    return sorted((int(c), round(float(s), 4), *np.round(np.asarray(b, np.float64), 4)) for c, s, b in rows)


def build(twin: Twin, threshold: float = 0.5, **detection):  # type: ignore[no-untyped-def]
    x = twin.input("data", [1, 3, 16, 16])
    feat = twin.relu(twin.conv(x, "conv1", 3, 8, 3, stride=2, pad=1), "relu1")
    sym = twin.sym
    anchors = sym.op("_contrib_MultiBoxPrior", "anchors", [feat[0]], sizes=(0.3, 0.5), ratios=(1, 2, 0.5), clip=False)
    cls = twin.conv(feat, "cls", 8, 4 * 3, 3, pad=1)
    cls_mx = sym.op("transpose", "cls_t", [cls[0]], axes=(0, 2, 3, 1))
    cls_mx = sym.op("Reshape", "cls_r", [cls_mx], shape=(0, -1, 3))
    cls_mx = sym.op("transpose", "cls_t2", [cls_mx], axes=(0, 2, 1))
    cls_prob = sym.op("SoftmaxActivation", "cls_prob", [cls_mx], mode="channel")
    cls_onnx = twin.onnx("Reshape", [twin.onnx("Transpose", [cls[1]], perm=[0, 2, 3, 1]), twin.init(np.array([1, -1, 3], np.int64))])
    cls_onnx = twin.onnx("Softmax", [twin.onnx("Transpose", [cls_onnx], perm=[0, 2, 1])], axis=1)
    loc = twin.conv(feat, "loc", 8, 4 * 4, 3, pad=1)
    loc_mx = sym.op("Flatten", "loc_flat", [sym.op("transpose", "loc_t", [loc[0]], axes=(0, 2, 3, 1))])
    loc_onnx = twin.onnx("Flatten", [twin.onnx("Transpose", [loc[1]], perm=[0, 2, 3, 1])], axis=1)
    det = sym.op("_contrib_MultiBoxDetection", "detection", [cls_prob, loc_mx, anchors], threshold=threshold, nms_threshold=0.45, clip=True, **detection)
    return (det, ""), (anchors, ""), (cls_prob, cls_onnx), (loc_mx, loc_onnx)


@pytest.mark.parametrize("threshold", [0.5, 0.05])
def test_ssd_head(tmp_path: Path, threshold: float) -> None:
    """At 0.05 both foreground classes of many anchors pass: MXNet keeps each anchor's best."""
    from tests.backends.ir_xml_support import run_openvino
    from irforge.tools.ir_convert import convert

    twin = Twin(seed=21)
    det, anchors, cls_prob, loc = build(twin, threshold)
    params = twin.sym.save(tmp_path, "ssd", [det[0], anchors[0]])
    feed = np.random.default_rng(22).standard_normal((1, 3, 16, 16)).astype(np.float32) * 2
    probs, deltas = ort_session_run(twin.model([cls_prob[1], loc[1]]), {"data": feed})
    want_anchors = mxnet_multibox_prior(8, 8, [0.3, 0.5], [1, 2, 0.5])
    want = as_set(mxnet_multibox_detection(probs, deltas, want_anchors, threshold, 0.45))
    assert 10 <= len(want) < 256  # some anchors pass the threshold, some do not

    argv = ["--input_model", str(params), "--input_shape", "[1,3,16,16]"]
    got = run(import_args(*argv), {"data": feed})
    np.testing.assert_allclose(got["anchors"], want_anchors, atol=1e-6)
    assert detections(got["detection"]) == want

    convert([*argv, "-o", str(tmp_path / "ir"), "-n", "net"])
    ov = run_openvino(tmp_path / "ir" / "net.xml", {"data": feed})
    np.testing.assert_allclose(ov["anchors"], want_anchors, atol=1e-5)
    assert detections(ov["detection"]) == want


def test_nms_topk_over_all_classes_is_refused(tmp_path: Path) -> None:
    twin = Twin(seed=21)
    det, anchors, _, _ = build(twin, 0.05, nms_topk=20)
    params = twin.sym.save(tmp_path, "ssd", [det[0], anchors[0]])
    with pytest.raises(IrforgeError, match="nms_topk 20"):
        import_args("--input_model", str(params), "--input_shape", "[1,3,16,16]")


def test_multibox_prior_steps_and_clip() -> None:
    """Non-square map, given steps and clipping, as PriorBoxClustered computes them."""
    from tests.frontends.mxnet.support import import_args as _  # noqa: F401  (same table)
    from irforge.frontends.mxnet import Weights, import_mxnet
    from irforge.frontends.mxnet.symbol import parse_symbol
    from irforge.testing.mxnet_models import SymbolBuilder

    b = SymbolBuilder()
    x = b.var("feat", __shape__=(1, 2, 3, 5))
    y = b.op("_contrib_MultiBoxPrior", "anchors", [x], sizes=(0.4, 0.9), ratios=(2, 1, 3), steps=(0.25, 0.2), offsets=(0.5, 0.5), clip=True)
    symbol = parse_symbol(b.symbol_json([y]), Path("anchors-symbol.json"))
    model = import_mxnet(symbol, Weights({}))
    got = run(model, {"feat": np.zeros((1, 2, 3, 5), np.float32)})["anchors"]
    want = mxnet_multibox_prior(3, 5, [0.4, 0.9], [2, 1, 3], steps=(0.25, 0.2), clip=True)
    np.testing.assert_allclose(got, want, atol=1e-6)
