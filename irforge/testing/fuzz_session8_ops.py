"""Seeds and bad values for the code of session 8, added to `fuzz_new_ops`'s sets (so
`fuzz_campaign --focus session8`, `bench/fuzz_numbers.py --only session8` and
`bench/fuzz_node_models.py --ops session8` see them): ONNX Pad with run-time pads
(`nn.pad_by`, every mode, negative pads; its IR XML is a Pad-12 with an input pads port),
constant negative Pad (a crop), Resize antialias / exclude_outside (a constant matrix per
axis), integer / float64 ArgMax / ArgMin (a cpu host step), a run-time dim Expanded to a
constant shape, attention probabilities shared by several value products
(`attention_shared.py`), the IR writer's OpenVINO workarounds (a Slice feeding
GatherElements, Maximum(x, x) before a Convolution of a spatially scaled input, SDPA with q / k
of a rank below v's) and quantized dequantization kept as (q - z) * s by fuse-linear-ops.
The IR XML of the workaround / pad seeds is a seed too (`IR_SEEDS`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from irforge.testing.fuzz_session5_ops import _t, _vi  # the same small onnx.helper shorthands
from irforge.testing.fuzz_session7_ops import _model


def _f(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def pad_run_time() -> bytes:
    """Pad with pads from a model input (`pads` [4], `crop` [4] negated: a run-time crop):
    constant (value 0.5), reflect, edge of x [3, 5]; opset 18's axes with reflect."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Pad", ["x", "pads", "half"], ["c"], mode="constant"),
             helper.make_node("Pad", ["x", "pads"], ["r"], mode="reflect"),
             helper.make_node("Neg", ["crop"], ["ncrop"]),
             helper.make_node("Pad", ["x", "ncrop"], ["e"], mode="edge"),
             helper.make_node("Slice", ["pads", "zero", "two"], ["half_pads"]),
             helper.make_node("Pad", ["x", "half_pads", "", "axis1"], ["a"], mode="reflect")]
    inits = [_t("half", np.float32(0.5)), _t("zero", np.array([0], np.int64)), _t("two", np.array([2], np.int64)),
             _t("axis1", np.array([1], np.int64))]
    inputs = [_vi("x", T.FLOAT, [3, 5]), _vi("pads", T.INT64, [4]), _vi("crop", T.INT64, [4])]
    return _model(nodes, inputs, [_vi(n, T.FLOAT, None) for n in "crea"], inits, opset=18)


def pad_from_shape() -> bytes:
    """Pad by a run-time count (NonZero of x > 0: YOLO nms=True's tail): rows of x [6, 4]
    padded to 6 + count with edge, and wrap by a constant (the mode run-time pads refuse)."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Greater", ["s", "zf"], ["m"]), helper.make_node("NonZero", ["m"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["nzs"]), helper.make_node("Gather", ["nzs", "one"], ["count"], axis=0),
             helper.make_node("Concat", ["zero", "zero", "count", "zero"], ["p"], axis=0),
             helper.make_node("Pad", ["x", "p"], ["y"], mode="edge"),
             helper.make_node("Pad", ["x", "wrap_pads"], ["w"], mode="wrap")]
    inits = [_t("zf", np.float32(0)), _t("one", np.array([1], np.int64)), _t("zero", np.array([0], np.int64)),
             _t("wrap_pads", np.array([1, 2, 1, 0], np.int64))]
    return _model(nodes, [_vi("s", T.FLOAT, [5]), _vi("x", T.FLOAT, [6, 4])], [_vi("y", T.FLOAT, None), _vi("w", T.FLOAT, None)], inits,
                  opset=19)


def pad_negative() -> bytes:
    """Constant Pad with negative pads (timm NASNet's stem crops): x [1, 2, 6, 7] cropped by one
    row / two columns and padded by one, value -1; opset 18 axes [3, 2]."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Pad", ["x", "pads", "v"], ["y"], mode="constant"),
             helper.make_node("Pad", ["x", "pads2", "", "axes"], ["z"], mode="constant")]
    inits = [_t("pads", np.array([0, 0, -1, 1, 0, 0, 1, -2], np.int64)), _t("v", np.float32(-1)),
             _t("pads2", np.array([-2, 1, 0, -1], np.int64)), _t("axes", np.array([3, 2], np.int64))]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 2, 6, 7])], [_vi("y", T.FLOAT, None), _vi("z", T.FLOAT, None)], inits, opset=18)


def resize_antialias() -> bytes:
    """Resize cubic antialias=1 exclude_outside=1 to sizes [1, 2, 3, 5] of x [1, 2, 9, 7] (torch's
    antialiased interpolate through dynamo) and linear antialias by scales 0.5."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="cubic", antialias=1, exclude_outside=1, cubic_coeff_a=-0.75),
             helper.make_node("Resize", ["x", "", "scales"], ["z"], mode="linear", antialias=1)]
    inits = [_t("sizes", np.array([1, 2, 3, 5], np.int64)), _t("scales", np.array([1, 1, 0.5, 0.5], np.float32))]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 2, 9, 7])], [_vi("y", T.FLOAT, None), _vi("z", T.FLOAT, None)], inits, opset=19)


def argmax_types() -> bytes:
    """ArgMax of int64 ids (open_clip's end-of-text token), ArgMin of int32 with
    select_last_index, ArgMax of float64 keeping dims."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("ArgMax", ["ids"], ["a"], axis=-1, keepdims=0),
             helper.make_node("ArgMin", ["i32"], ["b"], axis=1, keepdims=1, select_last_index=1),
             helper.make_node("ArgMax", ["f64"], ["c"], axis=0)]
    inputs = [_vi("ids", T.INT64, [2, 7]), _vi("i32", T.INT32, [2, 5, 3]), _vi("f64", T.DOUBLE, [4, 3])]
    return _model(nodes, inputs, [_vi(n, T.INT64, None) for n in "abc"], opset=13)


def expand_run_time() -> bytes:
    """A run-time dim (x [8] sliced to its first k values) Expanded to the constant shape [2, 3]
    (JetMoE's routed tokens through dynamo: 1 or the target's dim, only the run knows), and
    NonZero's count of s > 1.5 Expanded to [4, 1]."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Slice", ["x", "zero", "k"], ["head"]), helper.make_node("Expand", ["head", "shape"], ["y"]),
             helper.make_node("Greater", ["x", "thr"], ["m"]), helper.make_node("NonZero", ["m"], ["nz"]),
             helper.make_node("Cast", ["nz"], ["nzf"], to=T.FLOAT), helper.make_node("Expand", ["nzf", "col"], ["z"])]
    inits = [_t("zero", np.array([0], np.int64)), _t("shape", np.array([2, 3], np.int64)), _t("thr", np.float32(1.5)),
             _t("col", np.array([4, 1], np.int64))]
    return _model(nodes, [_vi("x", T.FLOAT, [8]), _vi("k", T.INT64, [1])], [_vi("y", T.FLOAT, None), _vi("z", T.FLOAT, None)], inits)


def attention_shared() -> bytes:
    """DiffLlama's differential attention (dynamo): one masked, NaN-guarded softmax of
    q k^T shared by two value products, y = p v0 - 0.4 p v1."""
    from onnx import TensorProto as T
    from onnx import helper

    shape = [1, 2, 6, 8]
    root = np.array(math.sqrt(1 / math.sqrt(8)), np.float32)
    nodes = [helper.make_node("Mul", ["q", "root"], ["qs"]), helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("Mul", ["kt", "root"], ["kts"]), helper.make_node("MatMul", ["qs", "kts"], ["sc"]),
             helper.make_node("Where", ["keep", "sc", "ninf"], ["msc"]), helper.make_node("Softmax", ["msc"], ["p"], axis=-1),
             helper.make_node("IsNaN", ["p"], ["nan"]), helper.make_node("Where", ["nan", "zf", "p"], ["pg"]),
             helper.make_node("MatMul", ["pg", "v0"], ["y0"]), helper.make_node("MatMul", ["pg", "v1"], ["y1"]),
             helper.make_node("Mul", ["y1", "lam"], ["y1l"]), helper.make_node("Sub", ["y0", "y1l"], ["y"])]
    inits = [_t("root", root), _t("ninf", np.array(-np.inf, np.float32)), _t("zf", np.float32(0)), _t("lam", np.float32(0.4))]
    inputs = [_vi(n, T.FLOAT, shape) for n in ("q", "k", "v0", "v1")] + [_vi("keep", T.BOOL, [1, 1, 6, 6])]
    return _model(nodes, inputs, [_vi("y", T.FLOAT, None)], inits)


def slice_gather_elements() -> bytes:
    """x [1, 6, 5]: channels [1, 4) of axis 2 sliced, then GatherElements along axis 1 (YOLO26's
    pose / seg heads; the IR writer's StridedSlice)."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Slice", ["x", "s", "e", "a"], ["d"]), helper.make_node("GatherElements", ["d", "i"], ["y"], axis=1)]
    inits = [_t("s", np.array([1], np.int64)), _t("e", np.array([4], np.int64)), _t("a", np.array([2], np.int64))]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 6, 5]), _vi("i", T.INT64, [1, 3, 3])], [_vi("y", T.FLOAT, None)], inits)


def conv_spatial_scale() -> bytes:
    """x [1, 4, 7, 7] divided by a [7, 7] count, then a 7x7 Conv with padding 3 (timm CSATv2's
    adaptive pool; the IR writer's Maximum(x, x) barrier); a per-channel Mul into a 3x3 Conv."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(81)
    nodes = [helper.make_node("Div", ["x", "cnt"], ["t"]), helper.make_node("Conv", ["t", "w"], ["y"], pads=[3, 3, 3, 3]),
             helper.make_node("Mul", ["x", "ch"], ["u"]), helper.make_node("Conv", ["u", "w3", "b3"], ["z"], pads=[1, 1, 1, 1])]
    inits = [_t("cnt", rng.uniform(1, 4, (7, 7)).astype(np.float32)), _t("w", _f(rng, 2, 4, 7, 7)),
             _t("ch", rng.uniform(0.5, 2, (4, 1, 1)).astype(np.float32)), _t("w3", _f(rng, 3, 4, 3, 3)), _t("b3", _f(rng, 3))]
    return _model(nodes, [_vi("x", T.FLOAT, [1, 4, 7, 7])], [_vi("y", T.FLOAT, None), _vi("z", T.FLOAT, None)], inits)


def sdpa_rank_mix() -> bytes:
    """softmax(q k^T * 0.35) v with q, k [4, 6, 8] / [4, 5, 8] and v [1, 4, 5, 8] (GroupViT's
    dynamo export; the IR writer unsqueezes q and k to v's rank)."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]), helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "c"], ["sc"]), helper.make_node("Softmax", ["sc"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    inputs = [_vi("q", T.FLOAT, [4, 6, 8]), _vi("k", T.FLOAT, [4, 5, 8]), _vi("v", T.FLOAT, [1, 4, 5, 8])]
    return _model(nodes, inputs, [_vi("y", T.FLOAT, None)], [_t("c", np.float32(0.35))])


def qdq_exact() -> bytes:
    """QuantizeLinear -> Cast -> DequantizeLinear at a huge scale with z = 100 (quantized
    Inception v3's last layer: (q - z) * s must stay exact) and an int8 QDQ into a MatMul."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(82)
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]), helper.make_node("Cast", ["q"], ["qc"], to=T.UINT8),
             helper.make_node("DequantizeLinear", ["qc", "s", "z"], ["y"]),
             helper.make_node("QuantizeLinear", ["x", "s8", "z8"], ["q8"]), helper.make_node("DequantizeLinear", ["q8", "s8", "z8"], ["d8"]),
             helper.make_node("MatMul", ["d8", "w"], ["m"])]
    inits = [_t("s", np.float32(6.908603e10)), _t("z", np.uint8(100)), _t("s8", np.float32(0.0123)), _t("z8", np.int8(-37)),
             _t("w", _f(rng, 12, 3))]
    return _model(nodes, [_vi("x", T.FLOAT, [2, 12])], [_vi("y", T.FLOAT, None), _vi("m", T.FLOAT, None)], inits)


SEEDS = {"padrt.onnx": pad_run_time, "padcount.onnx": pad_from_shape, "padneg.onnx": pad_negative, "resizeaa.onnx": resize_antialias,
         "argtypes.onnx": argmax_types, "expandrt.onnx": expand_run_time, "attnshared.onnx": attention_shared,
         "slicege.onnx": slice_gather_elements, "convscale.onnx": conv_spatial_scale, "sdparank.onnx": sdpa_rank_mix,
         "qdqexact.onnx": qdq_exact}
IR_SEEDS = ("padrt", "padneg", "resizeaa", "slicege", "convscale", "sdparank", "qdqexact")
"""Seeds whose IR XML (Pad-12 with input pads, StridedSlice, the Maximum barrier, unsqueezed
SDPA inputs) and .mlir are seeds too."""

BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Pad": [("mode", "wrap"), ("mode", "Reflect"), ("mode", ""), ("mode", "symmetric"), ("pads", [1, 1, 1, 1]), ("value", 2.0)],
    "Resize": [("antialias", 2), ("antialias", -1), ("exclude_outside", 2), ("cubic_coeff_a", float("nan")), ("cubic_coeff_a", float("inf")),
               ("mode", "nearest"), ("coordinate_transformation_mode", "tf_crop_and_resize"), ("keep_aspect_ratio_policy", "not_smaller"),
               ("axes", [3, 2]), ("axes", [2, 2]), ("extrapolation_value", float("nan"))],
    "ArgMax": [("axis", 2), ("axis", -3), ("axis", 2**40), ("keepdims", 2), ("select_last_index", 2), ("select_last_index", -1)],
    "ArgMin": [("axis", 3), ("axis", -4), ("keepdims", -1), ("select_last_index", 7)],
    "Expand": [("shape", [3, 4])],
    "GatherElements": [("axis", 3), ("axis", -4), ("axis", 2), ("axis", 0)],
    "Softmax": [("axis", 4), ("axis", -5), ("axis", 2)],
    "QuantizeLinear": [("axis", 2), ("axis", 1), ("saturate", 0), ("output_dtype", 3), ("block_size", 4)],
}

VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Pad": [("mode", "constant"), ("mode", "reflect"), ("mode", "edge"), ("mode", "wrap")],
    "Resize": [("antialias", 0), ("exclude_outside", 0), ("exclude_outside", 1), ("mode", "linear"), ("cubic_coeff_a", -0.5),
               ("coordinate_transformation_mode", "align_corners"), ("coordinate_transformation_mode", "pytorch_half_pixel"),
               ("coordinate_transformation_mode", "asymmetric")],
    "ArgMax": [("keepdims", 1), ("keepdims", 0), ("select_last_index", 1), ("axis", 0)],
    "ArgMin": [("select_last_index", 0), ("axis", -1), ("keepdims", 0)],
    "GatherElements": [("axis", 0), ("axis", 2)],
    "Softmax": [("axis", 2), ("axis", -2)],
}

BAD_CONSTANTS = [
    np.array([0, 0, -7, 1, 0, 0, 1, -9], np.int64), np.array([-1, -1, -1, -1], np.int64), np.array([2**40, 0, 0, 0], np.int64),
    np.array([-2**62, 0, 0, 0], np.int64), np.array([1, 2, 3], np.int64), np.array([0, 0, 0, 0, 0, 0, 0, 0], np.int32),
    np.array([1.5, 0.5], np.float32), np.array([3, 3], np.int64), np.array([5, 5], np.int64), np.array([-1], np.int64),
    np.array([1, 2, 0, 5], np.int64), np.array([1, 2, 3, 2**31], np.int64), np.array([1, 1, 0.0, 2.0], np.float32),
    np.array([1, 1, 1e-9, 1e9], np.float32), np.array(np.nan, np.float32), np.array(0.0, np.float32), np.array(np.inf, np.float32),
    np.array(255, np.uint8), np.array([0, 1], np.uint8), np.array([[1.0, 2.0]], np.float32), np.zeros([7, 7, 1], np.float32),
    np.array([3, 4, 5], np.int64), np.array([0, 4], np.int64), np.array([-1, 4], np.int64),
]
BAD_INPUT_TYPES = [  # (elem_type, shape)
    (7, [5]), (7, [2]), (6, [4]), (1, [4]), (7, [8]), (7, []), (7, [4, 1]), (1, [3]), (1, [5, 3]), (1, [2, 5, 6, 7]), (11, [1, 2, 9, 7]),
    (10, [1, 2, 9, 7]), (9, [2, 7]), (2, [2, 7]), (3, [2, 5, 3]), (12, [2, 5, 3]), (13, [4, 3]), (1, [4, 3]), (11, [4, 3]), (7, [2, 7, 1]),
    (1, [1, 2, 6, 9]), (1, [2, 6, 8]), (1, [1, 1, 6, 6]), (9, [1, 2, 6, 6]), (9, [6]), (1, [1, 6, 5, 2]), (7, [1, 3, 5]), (6, [1, 3, 3]),
    (1, [1, 4, 8, 8]), (1, [1, 3, 7, 7]), (1, [4, 6, 5]), (1, [2, 4, 5, 8]), (10, [2, 12]), (1, [2, 11]), (11, [2, 12]),
]

__all__ = ["VALID_ATTRIBUTES", "BAD_ATTRIBUTES", "BAD_CONSTANTS", "BAD_INPUT_TYPES", "SEEDS", "IR_SEEDS"]
