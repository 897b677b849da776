"""Seeds and bad values for the code of session 9, added to `fuzz_new_ops`'s sets (so
`fuzz_campaign --focus session9`, `bench/fuzz_numbers.py --only session9` and
`bench/fuzz_node_models.py --ops session9` see them): the CPU backend's blocked attention
kernel (`codegen/attention.py`: float masks of every broadcast shape, -inf in a mask, a
scale attribute, long and odd sequences, head dims 1 and 128, several blocks of query rows),
the attention fusion's x * C causal product (`attention_chains.causal_product`) and HF's
(1 - m) * finfo.min + C padding mask (the IR writer's `hits_ov_affine_shift_bug` rewrite),
T5's pow(x, 2) as x * x (`elementwise.SQUARE_AS_PRODUCT`) beside other exponents, depthwise
convolutions through padded stack planes (`depthwise.PADDED_STACK_MAX`: kernels 3 / 5 / 7,
strides 1 / 2, dilation, asymmetric pads, planes 1 .. 40 columns), average pools through the
row kernel (`pool.ROW_AVG`: count_include_pad both, ceil_mode, pads, strides) and stride-2
convolutions through the phase planes and the shifted GEMM's gap stores (`codegen/phases.py`).
The IR XML of most (`IR_SEEDS`) is a seed too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irforge.testing.fuzz_session5_ops import _t, _vi  # the same small onnx.helper shorthands
from irforge.testing.fuzz_session7_ops import _model


def _f(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def _holes(rng: np.random.Generator, shape: tuple[int, ...], fill: float = -np.inf) -> np.ndarray:
    """A float mask of `shape`: small values, `fill` at a quarter of the places but never a
    whole row (the last axis keeps its first element)."""
    mask = (rng.standard_normal(shape) * 0.5).astype(np.float32)
    drop = rng.random(shape) < 0.25
    drop[..., 0] = False
    mask[drop] = fill
    return mask


def attention_masks() -> bytes:
    """ONNX Attention-23 on 4-D q [2, 3, 5, 8], k [2, 3, 7, 8], v [2, 3, 7, 6] with constant
    float masks of every broadcast shape onnxruntime takes ([1, 1, 5, 7], [5, 7], [1, 3, 5, 7],
    [2, 1, 5, 7], the full [2, 3, 5, 7]; masks broadcast along the rows are `attention_chain`'s),
    -inf holes, the scale attribute on two of them."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(91)
    shapes = {"m1": (1, 1, 5, 7), "m2": (5, 7), "m3": (1, 3, 5, 7), "m4": (2, 1, 5, 7), "m5": (2, 3, 5, 7)}
    nodes, inits = [], []
    for i, (name, shape) in enumerate(shapes.items()):
        attrs = {"scale": 0.3} if i % 2 else {}
        nodes.append(helper.make_node("Attention", ["q", "k", "v", name], [f"y{i}"], **attrs))
        inits.append(_t(name, _holes(rng, shape)))
    inputs = [_vi("q", T.FLOAT, [2, 3, 5, 8]), _vi("k", T.FLOAT, [2, 3, 7, 8]), _vi("v", T.FLOAT, [2, 3, 7, 6])]
    return _model(nodes, inputs, [_vi(f"y{i}", T.FLOAT, None) for i in range(len(shapes))], inits, opset=23)


def attention_blocks() -> bytes:
    """Attention-23 where the kernel splits the query rows into blocks: q [1, 1, 130, 3] over
    S = 600 keys (a block of 104 rows, a tail of 26) with a [130, 600] additive mask; L = 1 and
    a head dim of 128; L = 17, S = 33, D = 5 odd sizes with a run-time [1, 1, 17, 33] mask."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(92)
    nodes = [helper.make_node("Attention", ["q", "k", "v", "big"], ["y"], scale=0.5),
             helper.make_node("Attention", ["q1", "k1", "v1"], ["y1"]),
             helper.make_node("Attention", ["q2", "k2", "v2", "m2"], ["y2"])]
    inputs = [_vi("q", T.FLOAT, [1, 1, 130, 3]), _vi("k", T.FLOAT, [1, 1, 600, 3]), _vi("v", T.FLOAT, [1, 1, 600, 4]),
              _vi("q1", T.FLOAT, [2, 2, 1, 128]), _vi("k1", T.FLOAT, [2, 2, 9, 128]), _vi("v1", T.FLOAT, [2, 2, 9, 1]),
              _vi("q2", T.FLOAT, [1, 2, 17, 5]), _vi("k2", T.FLOAT, [1, 2, 33, 5]), _vi("v2", T.FLOAT, [1, 2, 33, 7]),
              _vi("m2", T.FLOAT, [1, 1, 17, 33])]
    return _model(nodes, inputs, [_vi(n, T.FLOAT, None) for n in ("y", "y1", "y2")], [_t("big", _holes(rng, (130, 600), -1e9))],
                  opset=23)


def attention_causal() -> bytes:
    """Attention-23 is_causal with L = S = 300 and a head dim of 1 (not the blocked kernel: the
    phases), a bool mask [4, 6] (ditto), and q [1, 2, 4, 6] / k [1, 2, 6, 6] with a float mask
    holding a whole -inf row beside a NaN (both give a NaN row)."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(93)
    odd = _holes(rng, (4, 6))
    odd[1, :] = -np.inf
    odd[2, 3] = np.nan
    keep = rng.random((4, 6)) < 0.7
    keep[:, 0] = True
    nodes = [helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1),
             helper.make_node("Attention", ["a", "b", "b", "keep"], ["z"]),
             helper.make_node("Attention", ["a", "b", "b", "odd"], ["w"], scale=0.25)]
    inputs = [_vi("q", T.FLOAT, [1, 1, 300, 1]), _vi("k", T.FLOAT, [1, 1, 300, 1]), _vi("v", T.FLOAT, [1, 1, 300, 2]),
              _vi("a", T.FLOAT, [1, 2, 4, 6]), _vi("b", T.FLOAT, [1, 2, 6, 6])]
    return _model(nodes, inputs, [_vi(n, T.FLOAT, None) for n in "yzw"], [_t("keep", keep), _t("odd", odd)], opset=23)


def attention_chain() -> bytes:
    """softmax((q @ k^T) * 0.125 + mask) @ v as separate nodes (the attention fusion), the
    mask a run-time input [1, 1, 6, 6] beside constants [6, 6] and [2, 1, 1, 6] (broadcast
    along the rows: the blocked kernel's zero row stride) with -inf holes."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(94)
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "c"], ["sc"]), helper.make_node("Add", ["sc", "mask"], ["sm"]),
             helper.make_node("Add", ["sm", "holes"], ["sh"]), helper.make_node("Add", ["sh", "rows"], ["sr"]),
             helper.make_node("Softmax", ["sr"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    inits = [_t("c", np.float32(0.125)), _t("holes", _holes(rng, (6, 6))), _t("rows", _holes(rng, (2, 1, 1, 6)))]
    inputs = [_vi("q", T.FLOAT, [2, 4, 6, 16]), _vi("k", T.FLOAT, [2, 4, 6, 16]), _vi("v", T.FLOAT, [2, 4, 6, 16]),
              _vi("mask", T.FLOAT, [1, 1, 6, 6])]
    return _model(nodes, inputs, [_vi("y", T.FLOAT, None)], inits)


def causal_product() -> bytes:
    """GPT-1's masked scores w * b + -1e4 * (1 - b) (b = tril of ones: `causal_product`), one
    with b's first row all zeros (a row whose keys are all masked), and HF's padding mask
    (1 - m) * finfo.min plus a constant causal mask (the IR writer's affine-shift rewrite)."""
    from onnx import TensorProto as T
    from onnx import helper

    tril = np.tril(np.ones((5, 5), np.float32))
    shifted = np.tril(np.ones((5, 5), np.float32), k=-1)
    causal = np.triu(np.full((5, 5), -1e4, np.float32), k=1)
    def scores(out: str) -> list[Any]:  # one MatMul per chain: the fusion takes single-use chains only
        return [helper.make_node("Transpose", ["k"], [out + "t"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", out + "t"], [out])]

    nodes = [*scores("s"), helper.make_node("Mul", ["s", "b"], ["sb"]), helper.make_node("Add", ["sb", "fill"], ["x"]),
             helper.make_node("Softmax", ["x"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"]),
             *scores("s0"), helper.make_node("Mul", ["s0", "b0"], ["sb0"]), helper.make_node("Add", ["sb0", "fill0"], ["x0"]),
             helper.make_node("Softmax", ["x0"], ["p0"], axis=-1), helper.make_node("MatMul", ["p0", "v"], ["y0"]),
             helper.make_node("Sub", ["one", "m"], ["inv"]), helper.make_node("Mul", ["inv", "fmin"], ["pad"]),
             helper.make_node("Add", ["pad", "causal"], ["bias"]), *scores("s1"), helper.make_node("Add", ["s1", "bias"], ["xs"]),
             helper.make_node("Softmax", ["xs"], ["ps"], axis=-1), helper.make_node("MatMul", ["ps", "v"], ["z"])]
    inits = [_t("b", tril), _t("fill", (-1e4 * (1 - tril)).astype(np.float32)), _t("b0", shifted),
             _t("fill0", (-1e4 * (1 - shifted)).astype(np.float32)), _t("one", np.float32(1)),
             _t("fmin", np.float32(np.finfo(np.float32).min)), _t("causal", causal)]
    inputs = [_vi("q", T.FLOAT, [1, 2, 5, 4]), _vi("k", T.FLOAT, [1, 2, 5, 4]), _vi("v", T.FLOAT, [1, 2, 5, 4]),
              _vi("m", T.FLOAT, [1, 1, 1, 5])]
    return _model(nodes, inputs, [_vi(n, T.FLOAT, None) for n in ("y", "y0", "z")], inits)


def pow_forms() -> bytes:
    """Pow(x, 2) (T5's LayerNorm: x * x on cpu), a per-column exponent of all 2s, a 2 that
    broadcasts x up, exponents 3, 0.5 and -2 (negative bases: NaN for 0.5, as onnxruntime)."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("Pow", ["x", "two"], ["a"]), helper.make_node("Pow", ["x", "twos"], ["b"]),
             helper.make_node("Pow", ["x", "col2"], ["c"]), helper.make_node("Pow", ["x", "three"], ["d"]),
             helper.make_node("Pow", ["x", "half"], ["e"]), helper.make_node("Pow", ["x", "mtwo"], ["f"])]
    inits = [_t("two", np.float32(2)), _t("twos", np.full([5], 2, np.float32)), _t("col2", np.full([2, 1, 1], 2, np.float32)),
             _t("three", np.float32(3)), _t("half", np.float32(0.5)), _t("mtwo", np.float32(-2))]
    return _model(nodes, [_vi("x", T.FLOAT, [3, 5])], [_vi(n, T.FLOAT, None) for n in "abcdef"], inits)


def depthwise_planes() -> bytes:
    """Depthwise convolutions (group = channels) over planes 1, 9, 23 and 40 columns wide:
    kernel 3 stride 1, kernel 5 stride 2 with asymmetric pads, kernel 7 dilation 2, kernel 3
    stride 2 over a one-column plane, with biases."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(95)
    nodes = [helper.make_node("Conv", ["x", "w3", "b"], ["a"], group=4, pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w5"], ["c"], group=4, strides=[2, 2], pads=[2, 1, 1, 2]),
             helper.make_node("Conv", ["y", "w7", "b"], ["d"], group=4, dilations=[2, 2], pads=[6, 6, 6, 6]),
             helper.make_node("Conv", ["n", "w3", "b"], ["e"], group=4, strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["y", "w5"], ["f"], group=4, pads=[0, 2, 3, 1])]
    inits = [_t("w3", _f(rng, 4, 1, 3, 3)), _t("w5", _f(rng, 4, 1, 5, 5)), _t("w7", _f(rng, 4, 1, 7, 7)), _t("b", _f(rng, 4))]
    inputs = [_vi("x", T.FLOAT, [1, 4, 11, 40]), _vi("y", T.FLOAT, [1, 4, 9, 23]), _vi("n", T.FLOAT, [2, 4, 7, 1])]
    return _model(nodes, inputs, [_vi(n, T.FLOAT, None) for n in "acdef"], inits)


def average_pools() -> bytes:
    """AveragePool 3x3 stride 1 pads 1 with count_include_pad 0 and 1, 3x3 stride 2 ceil_mode
    over a 13-column plane, 2x2 stride 2 (DenseNet's), asymmetric pads, a 5x3 window."""
    from onnx import TensorProto as T
    from onnx import helper

    nodes = [helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("AveragePool", ["x"], ["b"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
             helper.make_node("AveragePool", ["x"], ["c"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
             helper.make_node("AveragePool", ["x"], ["d"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("AveragePool", ["x"], ["e"], kernel_shape=[5, 3], pads=[2, 0, 1, 2], count_include_pad=1),
             helper.make_node("AveragePool", ["w"], ["f"], kernel_shape=[3, 3], strides=[1, 2], pads=[0, 1, 2, 1], ceil_mode=1)]
    inputs = [_vi("x", T.FLOAT, [1, 3, 11, 13]), _vi("w", T.FLOAT, [1, 2, 6, 37])]
    return _model(nodes, inputs, [_vi(n, T.FLOAT, None) for n in "abcdef"], opset=19)


def stride2_convs() -> bytes:
    """Stride-2 convolutions (phase planes, the shifted GEMM): 3x3 pads 1 over [1, 8, 15, 17],
    5x5 pads 2 over a 4x4 plane (its rows shorter than half a vector), 3x3 pads [0, 1, 1, 0],
    a 1x1 stride-2 projection, each with a bias and a Relu."""
    from onnx import TensorProto as T
    from onnx import helper

    rng = np.random.default_rng(96)
    nodes = [helper.make_node("Conv", ["x", "w3", "b"], ["a0"], strides=[2, 2], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["a0"], ["a"]),
             helper.make_node("Conv", ["s", "w5", "b"], ["c"], strides=[2, 2], pads=[2, 2, 2, 2]),
             helper.make_node("Conv", ["x", "w3", "b"], ["d"], strides=[2, 2], pads=[0, 1, 1, 0]),
             helper.make_node("Conv", ["x", "w1", "b"], ["e"], strides=[2, 2])]
    inits = [_t("w3", _f(rng, 16, 8, 3, 3)), _t("w5", _f(rng, 16, 8, 5, 5)), _t("w1", _f(rng, 16, 8, 1, 1)), _t("b", _f(rng, 16))]
    inputs = [_vi("x", T.FLOAT, [1, 8, 15, 17]), _vi("s", T.FLOAT, [1, 8, 4, 4])]
    return _model(nodes, inputs, [_vi(n, T.FLOAT, None) for n in "acde"], inits)


SEEDS = {"attnmasks.onnx": attention_masks, "attnblocks.onnx": attention_blocks, "attncausal.onnx": attention_causal,
         "attnchain.onnx": attention_chain, "causalprod.onnx": causal_product, "powforms.onnx": pow_forms,
         "dwplanes.onnx": depthwise_planes, "avgpools.onnx": average_pools, "stride2.onnx": stride2_convs}
IR_SEEDS = ("attnmasks", "attnchain", "causalprod", "powforms", "dwplanes", "avgpools", "stride2")
"""Seeds whose IR XML (SDPA with masks, the Unsqueeze / Squeeze around the affine shift,
GroupConvolution, AvgPool) and .mlir are seeds too."""

BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Attention": [("scale", float("nan")), ("scale", float("inf")), ("scale", 0.0), ("scale", -1e30), ("is_causal", 2),
                  ("is_causal", -1), ("softcap", float("nan")), ("qk_matmul_output_mode", 7)],
    "AveragePool": [("ceil_mode", 2), ("count_include_pad", 2), ("count_include_pad", -1), ("kernel_shape", [0, 3]),
                    ("kernel_shape", [14, 3]), ("strides", [0, 1]), ("pads", [3, 3, 3, 3]), ("pads", [-1, 0, 0, 0]),
                    ("dilations", [2, 2]), ("auto_pad", "SAME_LOWER")],
    "Conv": [("group", 3), ("group", 0), ("group", 2**40), ("dilations", [0, 2]), ("strides", [2**31, 1]), ("pads", [-3, 0, 0, 0]),
             ("pads", [40, 40, 40, 40]), ("kernel_shape", [2, 2]), ("auto_pad", "SAME_UPPER"), ("auto_pad", "VALID")],
    "Pow": [],
}

VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Attention": [("scale", 1.0), ("scale", 2.5), ("scale", 1e-3), ("is_causal", 1), ("is_causal", 0)],
    "AveragePool": [("ceil_mode", 0), ("ceil_mode", 1), ("count_include_pad", 0), ("count_include_pad", 1), ("strides", [2, 2]),
                    ("strides", [1, 2]), ("pads", [0, 0, 0, 0]), ("pads", [1, 0, 0, 1])],
    "Conv": [("strides", [2, 2]), ("strides", [1, 2]), ("strides", [2, 1]), ("dilations", [2, 2]), ("dilations", [1, 3]),
             ("pads", [0, 0, 0, 0]), ("pads", [2, 0, 1, 3]), ("auto_pad", "SAME_UPPER"), ("auto_pad", "SAME_LOWER")],
}

BAD_CONSTANTS = [
    np.full([7], np.nan, np.float32), np.full([5, 7], -np.inf, np.float32), np.full([5, 7], np.inf, np.float32),
    np.array([[0.0, 1.0], [1.0, 0.0]], np.float32), np.full([5, 5], 3e38, np.float32), np.array(np.float32(-0.0)),
    np.array(2.0, np.float64), np.array(2, np.int64), np.full([4, 1, 3, 3], np.nan, np.float32), np.zeros([4, 1, 0, 3], np.float32),
    np.ones([4, 2, 3, 3], np.float32), np.ones([16, 8, 3, 1], np.float32), np.array(np.float32(1e-45)),
    np.tril(np.ones((5, 5), np.float32)) * 2, np.where(np.tril(np.ones((5, 5), bool)), np.float32(np.inf), np.float32(0)),
]
BAD_INPUT_TYPES = [  # (elem_type, shape)
    (1, [2, 3, 5, 1]), (1, [2, 3, 7, 9]), (1, [2, 1, 7, 8]), (1, [2, 6, 7, 8]), (10, [2, 3, 5, 8]), (11, [2, 3, 7, 8]),
    (1, [1, 1, 1, 600]), (1, [1, 1, 130, 4]), (1, [1, 2, 33, 17]), (1, [17, 33]), (9, [1, 1, 17, 33]), (1, [1, 1, 300, 3]),
    (1, [1, 1, 5, 5]), (1, [1, 1, 5, 1]), (1, [5]), (7, [4]), (6, [3, 5]), (1, [5, 3]), (1, [1, 4, 11, 1]), (1, [1, 4, 1, 40]),
    (1, [1, 3, 11, 13]), (1, [1, 3, 2, 2]), (1, [1, 8, 1, 1]), (1, [1, 8, 3, 17]), (1, [2, 4, 7, 0]), (10, [1, 8, 4, 4]),
]

__all__ = ["VALID_ATTRIBUTES", "BAD_ATTRIBUTES", "BAD_CONSTANTS", "BAD_INPUT_TYPES", "SEEDS", "IR_SEEDS"]
