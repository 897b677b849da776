"""Seeds and bad values for the code of session 11, added to `fuzz_new_ops`'s sets (so
`fuzz_campaign --focus session11`, `bench/fuzz_numbers.py --only session11` and
`bench/fuzz_node_models.py --ops session11` see them): the CPU backend's B packing for 1x1
layers (`linear.packs_unaligned`: planes 16..300 positions wide, unaligned and 1024-aligned,
channels 32..512, K 64..2048, and the run-time MatMul B of n % 1024 == 0,
`linear.PACK_ALIASED`), Winograd F(4x4) at 13..15-wide planes, heads-in-weights' merged
output projection (`linear.HEADS_AS_K`: D = 64 and 32, with bias and residual), FC / MatMul
results stored over their residual, native Gather / GatherElements (in-range run-time
indices made by the graph, negative ones, and raw index inputs: E858 / E880 out of range),
weights shared by several layers (`Lowering.derived_const`: packed once) and tiled
transposes (`codegen/transpose.py`: odd sizes, 1-wide, over 64).
The IR XML of most (`IR_SEEDS`) is a seed too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irforge.testing.fuzz_session5_ops import _vi
from irforge.testing.fuzz_session10_ops import _b, _bytes, _conv, _graph, _w


def packed_1x1() -> bytes:
    """1x1 convolutions whose B (the input plane) is packed: 17x16 (272 positions, not a whole
    number of vectors) 64 -> 32, 1x300 with K 128 -> 48, 32x32 (1024: rows 4 KiB apart) 64 ->
    40, 16x1 K 2048 -> 32 (under the K floor for 16 outputs), and two MatMuls of run-time
    operands with n = 1024 and 2048 (PACK_ALIASED) and n = 1000 (not)."""
    from onnx import TensorProto as T

    g = _graph(111)
    outs = [
        g.node("Relu", [_conv(g, "p272", 64, 32)]),
        _conv(g, "p300", 128, 48, bias=False),
        g.node("Add", [_conv(g, "p1024", 64, 40), g.node("Sigmoid", ["r1024"])]),
        _conv(g, "p16", 2048, 32),
        _conv(g, "p16", 2048, 16),
    ]
    for n in (1024, 2048, 1000):
        outs.append(g.node("MatMul", [g.node("Tanh", ["a"]), g.node("Sigmoid", [f"b{n}"])]))
    inputs = [_vi("p272", T.FLOAT, [1, 64, 17, 16]), _vi("p300", T.FLOAT, [1, 128, 1, 300]), _vi("p1024", T.FLOAT, [1, 64, 32, 32]),
              _vi("r1024", T.FLOAT, [1, 40, 32, 32]), _vi("p16", T.FLOAT, [1, 2048, 16, 1]), _vi("a", T.FLOAT, [3, 64])]
    inputs += [_vi(f"b{n}", T.FLOAT, [64, n]) for n in (1024, 2048, 1000)]
    return _bytes(g, inputs, outs)


def winograd_planes() -> bytes:
    """3x3 convolutions (pads 1, stride 1) over 14x14 planes (Winograd F(4x4): 4 tiles of 4
    rows, none cut), 13x13 and 15x15 (cut tiles), 14x7, with a residual and a Relu, two
    samples, 32 -> 48 channels and 48 -> 48."""
    from onnx import TensorProto as T

    g = _graph(112)
    outs = []
    for name, cin, cout in (("w14", 32, 48), ("w13", 32, 32), ("w15", 48, 48), ("w147", 32, 32)):
        outs.append(g.node("Relu", [_conv(g, name, cin, cout, k=3, pads=[1, 1, 1, 1])]))
    outs.append(g.node("Add", [_conv(g, "w14", 32, 32, k=3, pads=[1, 1, 1, 1]), "w14"]))
    outs.append(_conv(g, "two", 48, 48, k=3, pads=[1, 1, 1, 1], bias=False))
    inputs = [_vi("w14", T.FLOAT, [1, 32, 14, 14]), _vi("w13", T.FLOAT, [1, 32, 13, 13]), _vi("w15", T.FLOAT, [1, 48, 15, 15]),
              _vi("w147", T.FLOAT, [1, 32, 14, 7]), _vi("two", T.FLOAT, [2, 48, 14, 14])]
    return _bytes(g, inputs, outs)


def merged_heads() -> bytes:
    """Attention's output projection after the heads merge (heads-in-weights: a[B, H, S, D] @
    Wo[H, D, N] summed over H, one GEMM of K = H * D): H = 2, D = 64 with a residual Add
    (stored over it) and a Relu; H = 3, D = 32 (under HEADS_MIN_D: not merged); two samples
    with a bias (fuse-linear-ops makes it an FC first); the attention itself computed from
    q, k, v inputs."""
    from onnx import TensorProto as T

    g = _graph(113)
    outs = []
    for name, h, d, n, batch in (("a", 2, 64, 48, 1), ("c", 3, 32, 40, 1), ("e", 2, 64, 24, 2)):
        s = 5
        scores = g.node("MatMul", [f"{name}q", g.node("Transpose", [f"{name}k"], perm=[0, 1, 3, 2])])
        attn = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), f"{name}v"])
        merged = g.node("Reshape", [g.node("Transpose", [attn], perm=[0, 2, 1, 3]), g.tensor(np.array([batch, s, h * d], np.int64), "shape")])
        y = g.node("MatMul", [merged, _w(g, h * d, n)])
        y = g.node("Add", [y, _b(g, n)]) if name == "e" else y  # a bias: an FC then, not merged
        outs.append(g.node("Relu", [g.node("Add", [y, f"{name}r"])]) if name != "c" else y)
    inputs = [_vi(f"{name}{t}", T.FLOAT, [batch, h, 5, d]) for name, h, d, batch in (("a", 2, 64, 1), ("c", 3, 32, 1), ("e", 2, 64, 2))
              for t in "qkv"]
    inputs += [_vi("ar", T.FLOAT, [1, 5, 48]), _vi("er", T.FLOAT, [2, 5, 24])]
    return _bytes(g, inputs, outs)


def fc_over_residual() -> bytes:
    """FC / MatMul results with a bias and a residual Add (the result stored over the
    residual): the residual an arena tensor read once, read again later, a model output, the
    FC's own input (square weights); Gemm with transB; K 1 and 600 (two K blocks)."""
    from onnx import TensorProto as T

    g = _graph(114)
    r = g.node("Tanh", ["x"])
    a = g.node("Add", [g.node("Add", [g.node("MatMul", [r, _w(g, 32, 32)]), _b(g, 32)]), r])  # own input
    h = g.node("Sigmoid", ["x"])
    b = g.node("Relu", [g.node("Add", [h, g.node("MatMul", [a, _w(g, 32, 32)])])])
    later = g.node("Mul", [h, b])  # h read after the Add
    out = g.node("Abs", ["x"])  # a model output and a residual
    c = g.node("Add", [g.node("Gemm", [later, _w(g, 32, 32), _b(g, 32)], transB=1), out])
    k1 = g.node("Add", [g.node("MatMul", ["one", _w(g, 1, 32)]), g.node("Neg", ["x"])])
    k600 = g.node("Add", [g.node("MatMul", ["wide", _w(g, 600, 32)]), g.node("Cos", ["x"])])
    inputs = [_vi("x", T.FLOAT, [6, 32]), _vi("one", T.FLOAT, [6, 1]), _vi("wide", T.FLOAT, [6, 600])]
    return _bytes(g, inputs, [a, later, out, c, k1, k600])


def gathers() -> bytes:
    """Native Gather / GatherElements: DeBERTa's relative-position pattern (GatherElements of
    scores [1, 2, 6, 11] by run-time in-range indices the graph makes, Clip of a float input
    cast to int64, and ArgMax positions), negative indices from the end (-1 - them), int32
    indices, Gather of rows by an int64 input (out of range: E858) and of a 1-wide
    axis; an int64 GatherElements index input (out of range: E880)."""
    from onnx import TensorProto as T

    g = _graph(115)
    scores = g.node("Sigmoid", ["s"])  # [1, 2, 6, 11]
    pos = g.node("Cast", [g.node("Clip", ["p", g.tensor(np.float32(0), "lo"), g.tensor(np.float32(10), "hi")])], to=T.INT64)  # [1, 2, 6, 6]
    outs = [g.node("GatherElements", [scores, pos], axis=3)]
    negative = g.node("Sub", [g.tensor(np.array(-1, np.int64), "minus_one"), pos])  # -1 .. -11
    outs.append(g.node("GatherElements", [scores, negative], axis=-1))
    arg = g.node("ArgMax", ["s"], axis=2, keepdims=1)  # [1, 2, 1, 11] in [0, 6)
    outs.append(g.node("GatherElements", [scores, g.node("Cast", [arg], to=T.INT32)], axis=2))
    outs.append(g.node("GatherElements", ["s", "ei"], axis=3))
    table = g.tensor(g.rng.standard_normal((30, 16)).astype(np.float32), "table")
    outs.append(g.node("Gather", [table, "ids"], axis=0))
    outs.append(g.node("Gather", [scores, g.tensor(np.array([0, -1], np.int64), "heads")], axis=1))
    outs.append(g.node("Gather", ["one", g.node("Cast", [g.node("ArgMax", ["one"], axis=1, keepdims=0)], to=T.INT32)], axis=1))
    inputs = [_vi("s", T.FLOAT, [1, 2, 6, 11]), _vi("p", T.FLOAT, [1, 2, 6, 6]), _vi("ei", T.INT64, [1, 1, 6, 11]),
              _vi("ids", T.INT64, [2, 5]), _vi("one", T.FLOAT, [3, 1, 4])]
    return _bytes(g, inputs, outs)


def shared_weights() -> bytes:
    """One weight read by several layers (ALBERT's shared layers: packed once,
    `Lowering.derived_const`): a MatMul weight used three times in a chain, and beside it by a
    MatMul of another M; a Gemm weight with transB used twice; a convolution weight used by
    two convolutions of different planes; a weight both a MatMul's B and an Add's operand."""
    from onnx import TensorProto as T

    g = _graph(116)
    w = _w(g, 24, 24)
    h = "x"
    for _ in range(3):
        h = g.node("Relu", [g.node("Add", [g.node("MatMul", [h, w]), h])])
    other = g.node("MatMul", ["m", w])
    gw = _w(g, 24, 24)
    g1 = g.node("Gemm", ["x", gw], transB=1)
    g2 = g.node("Gemm", [g1, gw], transB=1, alpha=0.5)
    cw = _w(g, 8, 8, 3, 3)
    c1 = g.node("Conv", ["c", cw], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
    c2 = g.node("Conv", ["d", cw], kernel_shape=[3, 3])
    both = g.node("Add", [g.node("MatMul", ["sq", w]), w])
    inputs = [_vi("x", T.FLOAT, [4, 24]), _vi("m", T.FLOAT, [2, 3, 24]), _vi("c", T.FLOAT, [1, 8, 6, 6]), _vi("d", T.FLOAT, [1, 8, 9, 5]),
              _vi("sq", T.FLOAT, [24, 24])]
    return _bytes(g, inputs, [h, other, g2, c1, c2, both])


def tiled_transposes() -> bytes:
    """Transposes the tiled kernel runs: [65, 130] (over 64 both ways), [1, 67, 3] and [3, 1, 70]
    (1-wide axes), [3, 5, 7, 9] to [0, 3, 1, 2] and [2, 0, 3, 1] (odd sizes), [2, 64, 64] swap of
    the last two, an int64 and a bool tensor transposed."""
    from onnx import TensorProto as T

    g = _graph(117)
    outs = [g.node("Transpose", ["a"], perm=[1, 0]), g.node("Transpose", ["b"], perm=[2, 1, 0]), g.node("Transpose", ["c"], perm=[2, 0, 1]),
            g.node("Transpose", ["d"], perm=[0, 3, 1, 2]), g.node("Transpose", ["d"], perm=[2, 0, 3, 1]),
            g.node("Transpose", ["e"], perm=[0, 2, 1])]
    ints = g.node("Transpose", [g.node("Cast", ["a"], to=T.INT64)], perm=[1, 0])
    outs.append(g.node("Cast", [ints], to=T.FLOAT))
    flags = g.node("Transpose", [g.node("Greater", ["d", g.tensor(np.float32(0), "zero")])], perm=[3, 2, 1, 0])
    outs.append(g.node("Cast", [flags], to=T.FLOAT))
    inputs = [_vi("a", T.FLOAT, [65, 130]), _vi("b", T.FLOAT, [1, 67, 3]), _vi("c", T.FLOAT, [3, 1, 70]), _vi("d", T.FLOAT, [3, 5, 7, 9]),
              _vi("e", T.FLOAT, [2, 64, 64])]
    return _bytes(g, inputs, outs)


SEEDS = {"pack1x1.onnx": packed_1x1, "winograd14.onnx": winograd_planes, "mergedheads.onnx": merged_heads,
         "fcresidual.onnx": fc_over_residual, "gathers.onnx": gathers, "sharedw.onnx": shared_weights,
         "transposes.onnx": tiled_transposes}
IR_SEEDS = ("pack1x1", "winograd14", "mergedheads", "fcresidual", "gathers", "sharedw", "transposes")
"""Seeds whose IR XML (Convolution, MatMul, Gather / GatherElements, Transpose) and .mlir are
seeds too."""

BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "GatherElements": [("axis", 4), ("axis", -5)],
    "Gather": [("axis", 2), ("axis", -3)],
    "Transpose": [("perm", [0, 0]), ("perm", [1, 2]), ("perm", [0, 1, 2, 3, 4]), ("perm", [-1, 0])],
}

VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "GatherElements": [("axis", 0), ("axis", 2), ("axis", -2)],
    "Gather": [("axis", 1), ("axis", -1)],
    "Transpose": [("perm", [1, 0]), ("perm", [0, 2, 1]), ("perm", [3, 2, 1, 0])],
    "Conv": [("pads", [0, 0, 0, 0]), ("pads", [1, 0, 1, 0]), ("strides", [2, 1])],
}

BAD_CONSTANTS = [
    np.array([0, 30], np.int64), np.array([-31, 0], np.int64), np.array([1 << 40], np.int64), np.array([5, -7], np.int64),
    np.zeros((24, 24), np.float32), np.full((24, 24), np.nan, np.float32), np.array(np.float32(1e30)), np.array(np.float32(-0.0)),
]
BAD_INPUT_TYPES = [  # (elem_type, shape)
    (1, [1, 64, 17, 17]), (1, [1, 64, 16, 16]), (1, [1, 2048, 1, 1]), (1, [64, 1023]), (1, [64, 0]), (1, [1, 32, 14, 13]),
    (1, [1, 2, 5, 63]), (7, [1, 2, 6, 6]), (6, [2, 5]), (1, [2, 5]), (7, [3, 1, 1]), (1, [65, 129]), (1, [3, 5, 7]), (9, [65, 130]),
]

__all__ = ["VALID_ATTRIBUTES", "BAD_ATTRIBUTES", "BAD_CONSTANTS", "BAD_INPUT_TYPES", "SEEDS", "IR_SEEDS"]
