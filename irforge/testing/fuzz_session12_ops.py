"""Seeds and bad values for the code of session 12, added to `fuzz_new_ops`'s sets (so
`fuzz_campaign --focus session12`, `bench/fuzz_numbers.py --only session12` and
`bench/fuzz_node_models.py --ops session12` see them): GEMMs whose B rows lie 4 KiB apart
packed per block inside the GEMM (`linear.PACK_BLOCKS_OVER`, `GemmSpec.b_blocks`: 1x1
convolutions over 32x32 and 64x64 planes, batched MatMuls of 1024-column B, a MatMul wider
than `PACK_UNALIGNED_MAX`, Deconvolutions over 32x32), depthwise layers writing the next 1x1
layer's B panels (`depthwise.PANEL_OUTPUT`), Concat inputs stored in the output's slice
(`movement.CONCAT_IN_PLACE`: inputs read again later, a model input, a constant, nested
Concats, a Concat that is an output), native Gather / GatherElements with negative indices
(their check words E858 / E880), rows a run-time Where masks throughout
(`attention_exports.uniform_rows`) and the bound call (`runtime.BOUND_CALL`: outputs that are
inputs, each other or constants).
The IR XML of most (`IR_SEEDS`) is a seed too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irforge.testing.fuzz_session5_ops import _vi
from irforge.testing.fuzz_session10_ops import _b, _bytes, _conv, _graph, _w

FMIN = float(np.finfo(np.float32).min)


def block_packed_b() -> bytes:
    """GEMMs whose B rows alias (1024 floats apart) packed per block: 1x1 convolutions 64 -> 48
    over 32x32 (+ Relu), 96 -> 32 over 64x64 with a residual, two samples over 32x32, K 32
    (under the K floor: read in place); batched MatMuls [2, 3, 64] @ [2, 64, 1024] and a
    broadcast [3, 64] @ [2, 64, 2048]; an unbatched [4, 64] @ [64, 26624] (over
    PACK_UNALIGNED_MAX); Deconvolutions over a 32x32 input (k 2 stride 2, k 3 pads 1)."""
    from onnx import TensorProto as T

    g = _graph(121)
    outs = [
        g.node("Relu", [_conv(g, "p32", 64, 48)]),
        g.node("Add", [_conv(g, "p64", 96, 32), g.node("Tanh", ["r64"])]),
        _conv(g, "two", 64, 40, bias=False),
        _conv(g, "thin", 32, 48),
        g.node("MatMul", [g.node("Tanh", ["a"]), g.node("Sigmoid", ["b1024"])]),
        g.node("MatMul", [g.node("Tanh", ["a2"]), "b2048"]),
        g.node("MatMul", [g.node("Tanh", ["a4"]), g.node("Sigmoid", ["wide"])]),
        g.node("ConvTranspose", ["p32", _w(g, 64, 16, 2, 2), _b(g, 16)], kernel_shape=[2, 2], strides=[2, 2]),
        g.node("Relu", [g.node("ConvTranspose", ["p32", _w(g, 64, 8, 3, 3)], kernel_shape=[3, 3], pads=[1, 1, 1, 1])]),
    ]
    inputs = [_vi("p32", T.FLOAT, [1, 64, 32, 32]), _vi("p64", T.FLOAT, [1, 96, 64, 64]), _vi("r64", T.FLOAT, [1, 32, 64, 64]),
              _vi("two", T.FLOAT, [2, 64, 32, 32]), _vi("thin", T.FLOAT, [1, 32, 32, 32]), _vi("a", T.FLOAT, [2, 3, 64]),
              _vi("b1024", T.FLOAT, [2, 64, 1024]), _vi("a2", T.FLOAT, [3, 64]), _vi("b2048", T.FLOAT, [2, 64, 2048]),
              _vi("a4", T.FLOAT, [4, 64]), _vi("wide", T.FLOAT, [64, 26624])]
    return _bytes(g, inputs, outs)


def _dw(g: Any, x: str, c: int, k: int = 3, stride: int = 1, bias: bool = True) -> str:
    return _conv(g, x, c, c, k=k, group=c, pads=[k // 2] * 4, strides=[stride, stride], bias=bias)


def depthwise_panels() -> bytes:
    """Depthwise layers whose only user is a 1x1 layer that packs B (the depthwise writes its
    panels): 32 channels 14x14 + Relu -> 64, 64 channels 19x19 (unaligned) -> 32, 17
    channels 7x7 -> 24, 5x5 over 14x14, stride 2 over 14x14 (7x7 out), Clip(0, 6) between;
    not so: a depthwise output also a model output, two samples."""
    from onnx import TensorProto as T

    g = _graph(122)
    outs = [_conv(g, g.node("Relu", [_dw(g, "d14", 32)]), 32, 64)]
    outs.append(_conv(g, _dw(g, "d19", 64, bias=False), 64, 32))
    outs.append(g.node("Relu", [_conv(g, _dw(g, "d7", 17), 17, 24)]))
    outs.append(_conv(g, _dw(g, "d14", 32, k=5), 32, 40, bias=False))
    outs.append(_conv(g, _dw(g, "d14", 32, stride=2), 32, 48))
    six = [g.tensor(np.float32(0), "lo"), g.tensor(np.float32(6), "hi")]
    outs.append(_conv(g, g.node("Clip", [_dw(g, "d14", 32), *six]), 32, 32))
    shared = _dw(g, "d7", 17)
    outs += [shared, _conv(g, shared, 17, 16)]
    outs.append(_conv(g, _dw(g, "two", 16), 16, 32))
    inputs = [_vi("d14", T.FLOAT, [1, 32, 14, 14]), _vi("d19", T.FLOAT, [1, 64, 19, 19]), _vi("d7", T.FLOAT, [1, 17, 7, 7]),
              _vi("two", T.FLOAT, [2, 16, 7, 7])]
    return _bytes(g, inputs, outs)


def concat_in_place() -> bytes:
    """Concats along a contiguous axis whose inputs may be stored in the output's slice: an
    input read again after the Concat, a model input, a constant, the same tensor twice,
    nested Concats, a Concat that is a model output and read again, a convolution with a
    residual into its slice, tokens [1, T, D] along T, a Reshape view; along axis 2 of
    [1, C, H, W] (not contiguous) and over two samples (not either)."""
    from onnx import TensorProto as T

    g = _graph(123)
    a, b = g.node("Relu", ["x"]), g.node("Sigmoid", ["x"])
    outs = [g.node("Mul", [g.node("Concat", [a, b], axis=1), g.node("Concat", [b, a], axis=1)])]
    outs.append(g.node("Add", [a, b]))  # a and b read again after the Concats
    outs.append(g.node("Concat", ["x", g.node("Tanh", ["x"])], axis=1))
    const = g.tensor(g.rng.standard_normal((1, 3, 5, 6)).astype(np.float32), "const")
    outs.append(g.node("Concat", [const, g.node("Neg", ["x"])], axis=1))
    c = g.node("Cos", ["x"])
    outs.append(g.node("Concat", [c, c, g.node("Abs", ["x"])], axis=1))
    inner = g.node("Concat", [g.node("Sin", ["x"]), g.node("Exp", ["x"])], axis=1)
    nested = g.node("Concat", [inner, g.node("Softsign", ["x"])], axis=1)
    outs += [nested, g.node("Relu", [nested])]
    conv = g.node("Add", [_conv(g, "x", 3, 3), g.node("Erf", ["x"])])
    outs.append(g.node("Concat", [conv, g.node("Floor", ["x"])], axis=1))
    outs.append(g.node("Concat", [g.node("Relu", ["t"]), g.node("Tanh", ["t"]), "t"], axis=1))
    view = g.node("Reshape", [g.node("Sigmoid", ["t"]), g.tensor(np.array([1, 8, 4], np.int64), "shape")])
    outs.append(g.node("Concat", [view, g.node("Reshape", ["t", g.tensor(np.array([1, 8, 4], np.int64), "shape")])], axis=1))
    outs.append(g.node("Concat", [g.node("Relu", ["x"]), g.node("Tanh", ["x"])], axis=2))
    outs.append(g.node("Concat", [g.node("Relu", ["n"]), g.node("Tanh", ["n"])], axis=1))
    inputs = [_vi("x", T.FLOAT, [1, 3, 5, 6]), _vi("t", T.FLOAT, [1, 4, 8]), _vi("n", T.FLOAT, [2, 3, 4, 4])]
    return _bytes(g, inputs, outs)


def negative_gathers() -> bytes:
    """Native Gather / GatherElements by negative indices: a constant table by an int64 input
    made negative (-1 - i), by int32 negatives, along axis -1 and 1; GatherElements by
    -1 - (an input), and by a raw index input (out of range: E880 / E858)."""
    from onnx import TensorProto as T

    g = _graph(124)
    minus_one = g.tensor(np.array(-1, np.int64), "minus_one")
    neg = g.node("Sub", [minus_one, "ids"])  # -1 .. -4
    table = g.tensor(g.rng.standard_normal((6, 5)).astype(np.float32), "table")
    outs = [g.node("Gather", [table, neg], axis=0), g.node("Gather", ["x", neg], axis=-1)]
    outs.append(g.node("Gather", ["x", g.node("Cast", [neg], to=T.INT32)], axis=1))
    outs.append(g.node("GatherElements", ["x", g.node("Sub", [minus_one, "ei"])], axis=2))
    outs.append(g.node("GatherElements", ["x", "ei"], axis=1))
    outs.append(g.node("Gather", ["x", g.tensor(np.array([-3, 0, -1], np.int64), "heads")], axis=0))
    inputs = [_vi("ids", T.INT64, [2, 2]), _vi("x", T.FLOAT, [3, 4, 5]), _vi("ei", T.INT64, [3, 4, 5])]
    return _bytes(g, inputs, outs)


def uniform_attention() -> bytes:
    """softmax(Where(keep, q @ k^T * c, float32's min) [* 0.5]) @ v with a run-time condition
    ANDed with a constant one whose row 2 is all False (a row masked throughout): [1, 1, 4, 6]
    per row, [1, 1, 1, 6] padding, Where(drop, fill, s); the fused attention takes masked rows
    from the mean of v (`uniform_rows`)."""
    from onnx import TensorProto as T

    g = _graph(125)
    fill = g.tensor(np.array(FMIN, np.float32), "fill")
    rows = np.ones((1, 1, 4, 6), bool)
    rows[..., 2, :] = False
    keep = g.node("And", ["keep", g.tensor(rows, "rows")])
    outs = []
    for tag, condition, drop, after in (("a", keep, False, None), ("b", keep, False, 0.5), ("c", "pad", False, None),
                                        ("d", g.node("Not", [keep]), True, None)):
        s = g.node("MatMul", [g.node("Mul", [f"{tag}q", g.tensor(np.array(0.35, np.float32), "scale")]),
                              g.node("Transpose", [f"{tag}k"], perm=[0, 1, 3, 2])])
        w = g.node("Where", [condition, fill, s] if drop else [condition, s, fill])
        if after is not None:
            w = g.node("Mul", [w, g.tensor(np.array(after, np.float32), "after")])
        outs.append(g.node("MatMul", [g.node("Softmax", [w], axis=-1), f"{tag}v"]))
    inputs = [_vi("keep", T.BOOL, [1, 1, 4, 6]), _vi("pad", T.BOOL, [1, 1, 1, 6])]
    for tag in "abcd":
        inputs += [_vi(f"{tag}q", T.FLOAT, [1, 2, 4, 8]), _vi(f"{tag}k", T.FLOAT, [1, 2, 6, 8]), _vi(f"{tag}v", T.FLOAT, [1, 2, 6, 8])]
    return _bytes(g, inputs, outs)


def bound_outputs() -> bytes:
    """Outputs the bound call hands back as views: a model input as an output (Identity), a
    tensor that is two outputs, a constant output, an input's Reshape, an output also read
    by a later layer, an in-place element-wise result."""
    from onnx import TensorProto as T

    g = _graph(126)
    r = g.node("Relu", ["x"])
    outs = [g.node("Identity", ["x"]), r, g.node("Identity", [r])]
    outs.append(g.node("Identity", [g.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), "const")]))
    outs.append(g.node("Reshape", ["x", g.tensor(np.array([4, 6], np.int64), "shape")]))
    outs.append(g.node("Add", [g.node("Sigmoid", [r]), r]))
    outs.append(g.node("Mul", [g.node("Tanh", ["y"]), g.tensor(np.float32(2), "two")]))
    inputs = [_vi("x", T.FLOAT, [2, 3, 4]), _vi("y", T.FLOAT, [3, 5])]
    return _bytes(g, inputs, outs)


SEEDS = {"blockpack.onnx": block_packed_b, "dwpanels.onnx": depthwise_panels, "concatinplace.onnx": concat_in_place,
         "neggathers.onnx": negative_gathers, "uniformrows.onnx": uniform_attention, "boundout.onnx": bound_outputs}
IR_SEEDS = ("blockpack", "dwpanels", "concatinplace", "neggathers", "boundout")
"""Seeds whose IR XML (Convolution, Deconvolution, MatMul, Concat, Gather / GatherElements)
and .mlir are seeds too."""

BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Concat": [("axis", 4), ("axis", -5)],
    "ConvTranspose": [("strides", [0, 2]), ("output_padding", [2, 2]), ("pads", [-1, 0, 0, 0])],
}

VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Concat": [("axis", 0), ("axis", -1), ("axis", 3)],
    "ConvTranspose": [("output_padding", [1, 1]), ("dilations", [2, 2]), ("group", 2)],
    "Conv": [("strides", [2, 2]), ("dilations", [2, 1])],
}

BAD_CONSTANTS = [
    np.array([-7, 0], np.int64), np.array([6], np.int64), np.array(np.float32(np.inf)), np.full((1, 1, 4, 6), True),
    np.zeros((1, 1, 4, 6), bool),
]
BAD_INPUT_TYPES = [  # (elem_type, shape)
    (1, [1, 64, 32, 31]), (1, [1, 64, 33, 32]), (1, [2, 64, 1023]), (1, [1, 32, 15, 14]), (1, [1, 3, 5, 7]), (6, [2, 2]),
    (9, [1, 1, 4, 6]), (1, [1, 1, 4, 6]), (7, [3, 4, 6]), (1, [0, 3, 4]),
]

__all__ = ["VALID_ATTRIBUTES", "BAD_ATTRIBUTES", "BAD_CONSTANTS", "BAD_INPUT_TYPES", "SEEDS", "IR_SEEDS"]
