"""Seeds and bad values for the code of session 13, added to `fuzz_new_ops`'s sets (so
`fuzz_campaign --focus session13` and `bench/fuzz_numbers.py --only session13` see them):
3x3 stride-2 convolutions by Winograd (`ops.winograd.STRIDE2`: odd and even planes,
asymmetric pads, channels around 32, bias / residual / Relu / Clip after, two samples), the
squeeze-excite scale applied in the next 1x1 layer's B pack (`linear.SCALED_PACK`: x read
again, x * s an output), grouped layers whose rows are cut into balanced blocks
(`gemm.BALANCED_ROWS`), GEMM column tails of 1-4 columns with K left-overs
(`gemm.COLUMN_K_UNROLL`) and attention whose kernel packs its keys into whole-vector rows
(`attention.PACK_KEYS` / `WHOLE_ROWS`: key counts off a multiple of 8, padding and causal
masks, a Where with float32's min). `bench/fuzz_cpu_kernels.py` draws the same families at
random on cpu.
The IR XML of most (`IR_SEEDS`) is a seed too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irforge.testing.fuzz_session5_ops import _vi
from irforge.testing.fuzz_session10_ops import _bytes, _conv, _graph

FMIN = float(np.finfo(np.float32).min)


def _six(g: Any) -> list[str]:
    return [g.tensor(np.float32(0), "lo"), g.tensor(np.float32(6), "hi")]


def stride2_convs() -> bytes:
    """3x3 stride-2 layers: 32 -> 32 over 15x15 pads 1 + bias + Relu, 33 -> 32 over 16x16 no
    pads, 32 -> 48 over 14x13 pads [0, 1, 1, 0] + a residual, 64 -> 33 over 29x29 pads 2 +
    Clip(0, 6), two samples 32 -> 32 over 21x21 pads 1."""
    from onnx import TensorProto as T

    g = _graph(131)
    outs = [g.node("Relu", [_conv(g, "a", 32, 32, k=3, strides=[2, 2], pads=[1, 1, 1, 1])])]
    outs.append(_conv(g, "b", 33, 32, k=3, bias=False, strides=[2, 2]))
    outs.append(g.node("Add", [_conv(g, "c", 32, 48, k=3, strides=[2, 2], pads=[0, 1, 1, 0]), "r"]))
    outs.append(g.node("Clip", [_conv(g, "d", 64, 33, k=3, strides=[2, 2], pads=[2, 2, 2, 2]), *_six(g)]))
    outs.append(_conv(g, "two", 32, 32, k=3, strides=[2, 2], pads=[1, 1, 1, 1]))
    inputs = [_vi("a", T.FLOAT, [1, 32, 15, 15]), _vi("b", T.FLOAT, [1, 33, 16, 16]), _vi("c", T.FLOAT, [1, 32, 14, 13]),
              _vi("r", T.FLOAT, [1, 48, 7, 6]), _vi("d", T.FLOAT, [1, 64, 29, 29]), _vi("two", T.FLOAT, [2, 32, 21, 21])]
    return _bytes(g, inputs, outs)


def _excite(g: Any, x: str, c: int) -> str:
    squeeze = g.node("GlobalAveragePool", [x])
    return g.node("Sigmoid", [_conv(g, g.node("Relu", [_conv(g, squeeze, c, max(4, c // 4))]), max(4, c // 4), c)])


def scaled_pack() -> bytes:
    """Squeeze-excite x * s into a 1x1 layer: 48 channels over 14x14 -> 64; x also read by a
    Tanh; x * s also an output; s as x's left operand; two samples over 7x7; s a constant
    [C, 1, 1]."""
    from onnx import TensorProto as T

    g = _graph(132)
    x = g.node("Relu", ["x"])
    s = _excite(g, x, 48)
    outs = [_conv(g, g.node("Mul", [x, s]), 48, 64), g.node("Tanh", [x])]
    y = g.node("Mul", [s, x])
    outs += [y, g.node("Relu", [_conv(g, y, 48, 32, bias=False)])]
    t = g.node("Relu", ["two"])
    outs.append(_conv(g, g.node("Mul", [t, _excite(g, t, 32)]), 32, 40))
    scale = g.tensor(np.linspace(0.5, 1.5, 48, dtype=np.float32).reshape(48, 1, 1), "scale")
    outs.append(_conv(g, g.node("Mul", [x, scale]), 48, 16))
    return _bytes(g, [_vi("x", T.FLOAT, [1, 48, 14, 14]), _vi("two", T.FLOAT, [2, 32, 7, 7])], outs)


def grouped_tails() -> bytes:
    """Grouped 3x3 layers (8 groups of 8 rows over 14x14, 32 groups of 4 over 7x7, stride 2),
    a grouped 1x1; MatMuls of 1, 3 and 17 columns with K 5, 19 and 70; a 1x1 layer over 7x7
    (49 positions: one column past three panels) with K 37."""
    from onnx import TensorProto as T

    g = _graph(133)
    outs = [g.node("Relu", [_conv(g, "x", 64, 64, k=3, group=8, pads=[1, 1, 1, 1])])]
    outs.append(_conv(g, "y", 128, 128, k=3, group=32, pads=[1, 1, 1, 1], strides=[2, 2]))
    outs.append(_conv(g, "x", 64, 32, group=4))
    for cols, k in ((1, 5), (3, 19), (17, 70)):
        w = g.tensor((g.rng.standard_normal((k, cols)) / np.sqrt(k)).astype(np.float32), "w")
        outs.append(g.node("MatMul", [f"a{k}", w]))
    outs.append(_conv(g, "p", 37, 24))
    inputs = [_vi("x", T.FLOAT, [1, 64, 14, 14]), _vi("y", T.FLOAT, [1, 128, 7, 7]), _vi("a5", T.FLOAT, [6, 5]),
              _vi("a19", T.FLOAT, [3, 19]), _vi("a70", T.FLOAT, [9, 70]), _vi("p", T.FLOAT, [2, 37, 7, 7])]
    return _bytes(g, inputs, outs)


def packed_keys() -> bytes:
    """softmax(q k^T / 8 [+ mask | Where(keep, s, float32's min)]) v over 1, 7, 9, 33 and 70
    keys: no mask, a run-time additive [1, 1, L, S] mask, a padding Where [1, 1, 1, S], a
    constant causal Where."""
    from onnx import TensorProto as T

    g = _graph(134)
    outs, inputs = [], []
    fill = g.tensor(np.array(FMIN, np.float32), "fill")
    for tag, keys, mask in (("a", 1, None), ("b", 7, "add"), ("c", 9, "pad"), ("d", 33, "causal"), ("e", 70, "pad")):
        inputs += [_vi(f"{tag}q", T.FLOAT, [1, 2, 5, 64]), _vi(f"{tag}k", T.FLOAT, [1, 2, keys, 64]), _vi(f"{tag}v", T.FLOAT, [1, 2, keys, 64])]
        s = g.node("MatMul", [g.node("Mul", [f"{tag}q", g.tensor(np.float32(0.125), "scale")]), g.node("Transpose", [f"{tag}k"], perm=[0, 1, 3, 2])])
        if mask == "add":
            inputs.append(_vi(f"{tag}m", T.FLOAT, [1, 1, 5, keys]))
            s = g.node("Add", [s, f"{tag}m"])
        elif mask == "pad":
            inputs.append(_vi(f"{tag}m", T.BOOL, [1, 1, 1, keys]))
            s = g.node("Where", [f"{tag}m", s, fill])
        elif mask == "causal":
            keep = np.tril(np.ones((5, keys), bool), keys - 5).reshape(1, 1, 5, keys)
            s = g.node("Where", [g.tensor(keep, "causal"), s, fill])
        outs.append(g.node("MatMul", [g.node("Softmax", [s], axis=-1), f"{tag}v"]))
    return _bytes(g, inputs, outs)


SEEDS = {"stride2.onnx": stride2_convs, "scaledpack.onnx": scaled_pack, "groupedtails.onnx": grouped_tails, "packedkeys.onnx": packed_keys}
IR_SEEDS = ("stride2", "scaledpack", "groupedtails")
"""Seeds whose IR XML (Convolution, GroupConvolution, Multiply, MatMul) and .mlir are seeds too."""

BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Conv": [("strides", [2, 0]), ("pads", [1, 1, -1, 1]), ("group", 3), ("kernel_shape", [3, 2])],
}

VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Conv": [("strides", [2, 1]), ("pads", [0, 2, 1, 0]), ("dilations", [2, 2]), ("auto_pad", "SAME_UPPER")],
}

BAD_CONSTANTS = [np.full((48, 1, 1), np.nan, np.float32), np.zeros((1, 1, 5, 33), bool), np.array([[np.inf]], np.float32)]
BAD_INPUT_TYPES = [  # (elem_type, shape)
    (1, [1, 32, 2, 2]), (1, [1, 31, 15, 15]), (1, [2, 48, 14, 14]), (1, [1, 64, 14]), (9, [1, 1, 1, 9]), (1, [1, 2, 5, 63]),
]

__all__ = ["VALID_ATTRIBUTES", "BAD_ATTRIBUTES", "BAD_CONSTANTS", "BAD_INPUT_TYPES", "SEEDS", "IR_SEEDS"]
