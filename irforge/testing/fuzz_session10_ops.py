"""Seeds and bad values for the code of session 10, added to `fuzz_new_ops`'s sets (so
`fuzz_campaign --focus session10`, `bench/fuzz_numbers.py --only session10` and
`bench/fuzz_node_models.py --ops session10` see them): the CPU backend's convolution result
stored over its residual (`fusion.residual_in_place`, `GemmSpec.accumulate`: a residual read
later, a model output, the convolution's own input, several K blocks, two samples, groups,
3x3 and stride-2 windows through im2col), the squeeze-excite scale folded into the next 1x1
convolution's weights (`ops/excite.py`, `codegen/scale_panels.py`: the Mul on either side, a
[c, 1, 1] or constant scale, the product read twice, K tails of 1-3 rows and a second K
block, more outputs than positions), dilated depthwise windows on the padded plane
(`depthwise.PADDED_DILATED_OW_MAX`: dilations 2..6, planes 1..60 columns, asymmetric pads),
depthwise layers sharing one kernel across channel counts (`SHARE_CHANNELS`), FC K blocks
(`linear.FC_KC`: K 1..5000), attention with run-time-shaped masks and keys
(`attention_sizes.py`), keys in parts (`attention_split_keys.py`), dynamo's run-time k^T
(`runtime_transpose.py`) and rows a Where masks throughout (`attention_chains.
uniform_when_masked`: fills -inf, float32's min, -1e4, -1e8, positive, NaN; factors after
the Where; run-time conditions; samples of length 0).
The IR XML of most (`IR_SEEDS`) is a seed too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from irforge.testing.fuzz_session5_ops import _vi

FMIN = float(np.finfo(np.float32).min)


def _graph(rng_seed: int = 0) -> Any:
    from irforge.testing.onnx_models import GraphBuilder

    return GraphBuilder(seed=rng_seed)


def _bytes(g: Any, inputs: list[Any], outputs: list[str], opset: int = 18) -> bytes:
    from onnx import TensorProto as T
    from onnx import helper

    graph = helper.make_graph(g.nodes, "g", inputs, [_vi(o, T.FLOAT, None) for o in outputs], g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model.SerializeToString()


def _w(g: Any, *shape: int) -> str:
    fan_in = int(np.prod(shape[1:])) or 1
    return g.tensor((g.rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), "w")


def _b(g: Any, n: int) -> str:
    return g.tensor(g.rng.uniform(-0.5, 0.5, n).astype(np.float32), "b")


def _conv(g: Any, x: str, cin: int, cout: int, k: int = 1, bias: bool = True, **attrs: Any) -> str:
    group = attrs.get("group", 1)
    inputs = [x, _w(g, cout, cin // group, k, k)] + ([_b(g, cout)] if bias else [])
    return g.node("Conv", inputs, kernel_shape=[k, k], **attrs)


def residual_in_place() -> bytes:
    """Convolutions + residual Add (+ Relu) whose result may go over the residual: one whose
    residual a later op reads (a Mul after), one whose residual is a model output, one whose
    residual is its own input, K = 400 (two K blocks of the convolutions' 384), two samples,
    two groups, a 3x3 window over a 3x3 plane and a stride-2 3x3 (im2col), two in a row."""
    from onnx import TensorProto as T

    g = _graph(101)
    r = g.node("Sigmoid", ["x"])  # [1, 16, 5, 5]: an arena tensor
    own = g.node("Relu", [g.node("Add", [_conv(g, r, 16, 16), r])])  # the conv reads its residual
    h = g.node("Tanh", ["x"])
    a = g.node("Add", [_conv(g, own, 16, 16), h])  # h read again below
    later = g.node("Mul", [h, g.node("Relu", [a])])
    out_res = g.node("Abs", ["x"])  # a model output, and a residual
    b = g.node("Add", [out_res, _conv(g, later, 16, 16, bias=False)])
    c = g.node("Relu", [g.node("Add", [_conv(g, g.node("Relu", [b]), 16, 16), g.node("Neg", [b])])])  # two in a row
    d = g.node("Add", [_conv(g, c, 16, 16), c])
    wide = g.node("Sigmoid", ["w"])  # [1, 400, 2, 3]: K = 400
    k2 = g.node("Relu", [g.node("Add", [_conv(g, wide, 400, 16), g.node("Tanh", ["y"])])])
    two = g.node("Sin", ["n"])  # [2, 8, 4, 4]: two samples
    e = g.node("Add", [_conv(g, two, 8, 8), two])
    grouped = g.node("Cos", ["n"])
    f = g.node("Relu", [g.node("Add", [_conv(g, grouped, 8, 8, group=2), grouped])])
    small = g.node("Sigmoid", ["s"])  # [1, 8, 3, 3]
    h3 = g.node("Add", [_conv(g, small, 8, 8, k=3, pads=[1, 1, 1, 1]), small])
    s2 = g.node("Add", [_conv(g, small, 8, 8, k=3, strides=[2, 2], pads=[1, 1, 1, 1]), g.node("Tanh", ["t"])])
    inputs = [_vi("x", T.FLOAT, [1, 16, 5, 5]), _vi("w", T.FLOAT, [1, 400, 2, 3]), _vi("y", T.FLOAT, [1, 16, 2, 3]),
              _vi("n", T.FLOAT, [2, 8, 4, 4]), _vi("s", T.FLOAT, [1, 8, 3, 3]), _vi("t", T.FLOAT, [1, 8, 2, 2])]
    return _bytes(g, inputs, [own, later, out_res, d, k2, e, f, h3, s2])


def _excite(g: Any, x: str, c: int, squeeze: int) -> str:
    """s = sigmoid(conv(relu(conv(mean over the plane)))) of shape [1, c, 1, 1]."""
    pooled = g.node("GlobalAveragePool", [x])
    return g.node("Sigmoid", [_conv(g, g.node("Relu", [_conv(g, pooled, c, squeeze)]), squeeze, c)])


def excite_fold() -> bytes:
    """Squeeze-excite blocks ending in x * s before a 1x1 convolution: c = 24 (s on the
    right), c = 5 (a K tail of 1 row; s on the left), c = 387 (a second K block of 3 rows),
    s reshaped to [c, 1, 1], a constant s, the product read by two convolutions, more outputs
    than plane positions (not folded), a padded 1x1 after it (not plain)."""
    from onnx import TensorProto as T

    g = _graph(102)
    s = _excite(g, "x", 24, 6)
    a = _conv(g, g.node("Mul", ["x", s]), 24, 20)
    s5 = _excite(g, "f", 5, 2)
    b = g.node("Relu", [_conv(g, g.node("Mul", [s5, "f"]), 5, 7)])
    s387 = _excite(g, "k", 387, 8)
    c = _conv(g, g.node("Mul", ["k", s387]), 387, 9, bias=False)
    flat = g.node("Reshape", [_excite(g, "x", 24, 4), g.tensor(np.array([24, 1, 1], np.int64), "shape")])
    d = _conv(g, g.node("Mul", ["x", flat]), 24, 16)
    const = g.tensor(g.rng.uniform(0.1, 2.0, (1, 24, 1, 1)).astype(np.float32), "scale")
    e = _conv(g, g.node("Mul", [const, "x"]), 24, 12)
    twice = g.node("Mul", ["x", _excite(g, "x", 24, 3)])
    f1, f2 = _conv(g, twice, 24, 8), _conv(g, twice, 24, 4)
    many = _conv(g, g.node("Mul", ["x", _excite(g, "x", 24, 5)]), 24, 40)  # 40 outputs > 25 positions
    padded = _conv(g, g.node("Mul", ["x", _excite(g, "x", 24, 2)]), 24, 8, pads=[1, 0, 0, 1])
    inputs = [_vi("x", T.FLOAT, [1, 24, 5, 5]), _vi("f", T.FLOAT, [1, 5, 3, 4]), _vi("k", T.FLOAT, [1, 387, 2, 5])]
    return _bytes(g, inputs, [a, b, c, d, e, f1, f2, many, padded])


def dilated_depthwise() -> bytes:
    """Depthwise 3x3 / 5x5 windows at dilations 2..6 over planes 1, 7, 33, 47, 48, 49 and 60
    columns wide (the padded plane up to 48), pads symmetric and not, one at stride 2."""
    from onnx import TensorProto as T

    g = _graph(103)
    outs = []
    for width, k, d, pads in ((1, 3, 2, [2, 2, 2, 2]), (7, 3, 3, [3, 0, 1, 3]), (33, 5, 2, [4, 4, 4, 4]), (47, 3, 6, [6, 6, 6, 6]),
                              (48, 3, 4, [0, 4, 4, 0]), (49, 5, 2, [4, 4, 4, 4]), (60, 3, 5, [5, 1, 2, 5]), (33, 3, 2, [2, 1, 2, 1])):
        x = g.node("Relu", [f"x{width}"]) if width != 33 or k == 3 else f"x{width}"
        outs.append(_conv(g, x, 4, 4, k=k, group=4, dilations=[d, d], pads=pads, bias=k == 3))
    outs.append(_conv(g, "x60", 4, 4, k=3, group=4, dilations=[2, 2], strides=[2, 2], pads=[2, 2, 2, 2]))
    outs.append(g.node("Relu", [g.node("Add", [_conv(g, "x48", 4, 4, k=3, group=4, dilations=[2, 2], pads=[2, 2, 2, 2]), "x48"])]))
    inputs = [_vi(f"x{w}", T.FLOAT, [1, 4, 9, w]) for w in (1, 7, 33, 47, 48, 49, 60)]
    return _bytes(g, inputs, outs)


def shared_depthwise() -> bytes:
    """Depthwise layers of one geometry at 3, 8, 16 and 17 channels (one kernel, the count
    at run time), with and without bias, a Relu / Clip epilogue, a residual, two samples."""
    from onnx import TensorProto as T

    g = _graph(104)
    outs = []
    for c, bias, act in ((3, True, "Relu"), (8, True, None), (16, False, "Relu"), (17, True, None), (8, False, None)):
        y = _conv(g, f"c{c}", c, c, k=3, group=c, pads=[1, 1, 1, 1], bias=bias)
        outs.append(g.node(act, [y]) if act else y)
    outs.append(g.node("Add", [_conv(g, "c16", 16, 16, k=3, group=16, pads=[1, 1, 1, 1]), "c16"]))
    outs.append(g.node("Clip", [_conv(g, "c3", 3, 3, k=3, group=3, pads=[1, 1, 1, 1]), g.tensor(np.float32(0), "lo"), g.tensor(np.float32(6), "hi")]))
    outs.append(_conv(g, "two", 8, 8, k=3, group=8, pads=[1, 1, 1, 1]))
    inputs = [_vi(f"c{c}", T.FLOAT, [1, c, 6, 7]) for c in (3, 8, 16, 17)] + [_vi("two", T.FLOAT, [2, 8, 6, 7])]
    return _bytes(g, inputs, outs)


def fc_blocks() -> bytes:
    """MatMul / Gemm with K of 1, 511, 512, 513, 1025 and 5000 (equal K blocks of at most
    512), a bias Add and Relu after one, a batched [2, 3, K] product, Gemm with transB."""
    from onnx import TensorProto as T

    g = _graph(105)
    outs = []
    for k in (1, 511, 512, 513, 1025, 5000):
        outs.append(g.node("MatMul", [f"a{k}", _w(g, k, 5)]))
    outs.append(g.node("Relu", [g.node("Add", [g.node("MatMul", ["a1025", _w(g, 1025, 7)]), _b(g, 7)])]))
    outs.append(g.node("MatMul", ["m", _w(g, 769, 6)]))
    outs.append(g.node("Gemm", ["a513", _w(g, 3, 513), _b(g, 3)], transB=1, alpha=0.5, beta=2.0))
    inputs = [_vi(f"a{k}", T.FLOAT, [2, k]) for k in (1, 511, 512, 513, 1025, 5000)] + [_vi("m", T.FLOAT, [2, 3, 769])]
    return _bytes(g, inputs, outs)


def _scores(g: Any, q: str, k: str, scale: float | None = 0.5) -> str:
    s = g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 1, 3, 2])])
    return g.node("Mul", [s, g.tensor(np.array(scale, np.float32), "c")]) if scale is not None else s


def masked_rows() -> bytes:
    """softmax(Where(keep, s, fill)) @ v with keep a run-time [1, 1, 4, 3] condition (rows
    masked throughout come at random) and fills -inf, float32's min, -1e4, -1e8, +5, NaN;
    factors after the Where (-0.5, 1e-6, -1, and -0.25 / 0.125 with a constant condition that
    masks row 0 throughout and two keys of row 1); two Wheres of float32's min; a
    Where(drop, fill, s) form; the constant condition alone, then + a constant mask of +2e4 or
    +50 on two keys (GPT-Neo's form)."""
    from onnx import TensorProto as T

    g = _graph(106)
    outs = []
    for fill in (-np.inf, FMIN, -1e4, -1e8, 5.0, np.nan):
        x = g.node("Where", ["keep", _scores(g, "q", "k"), g.tensor(np.array(fill, np.float32), "fill")])
        outs.append(g.node("MatMul", [g.node("Softmax", [x], axis=-1), "v"]))
    rows = np.ones((1, 1, 4, 3), bool)
    rows[..., 0, :] = False
    rows[..., 1, 1:] = False
    for condition, fill, factor in (("keep", -1e8, -0.5), ("keep", -1e4, -0.5), ("keep", -1e8, 1e-6), ("keep", FMIN, -1.0),
                                    ("rows", -1e4, -0.25), ("rows", -1e4, 0.125)):
        keep = g.tensor(rows, "rows") if condition == "rows" else condition
        x = g.node("Where", [keep, _scores(g, "q", "k", None), g.tensor(np.array(fill, np.float32), "fill")])
        x = g.node("Mul", [x, g.tensor(np.array(factor, np.float32), "factor")])
        outs.append(g.node("MatMul", [g.node("Softmax", [x], axis=-1), "v"]))
    x = g.node("Where", ["keep", _scores(g, "q", "k"), g.tensor(np.array(FMIN, np.float32), "fill")])
    x = g.node("Where", ["keep2", x, g.tensor(np.array(FMIN, np.float32), "fill")])
    outs.append(g.node("MatMul", [g.node("Softmax", [x], axis=-1), "v"]))
    x = g.node("Where", [g.node("Not", ["keep"]), g.tensor(np.array(-1e4, np.float32), "fill"), _scores(g, "q", "k")])
    outs.append(g.node("MatMul", [g.node("Softmax", [x], axis=-1), "v"]))
    x = g.node("Where", [g.tensor(rows, "rows"), _scores(g, "q", "k"), g.tensor(np.array(-1e4, np.float32), "fill")])
    outs.append(g.node("MatMul", [g.node("Softmax", [x], axis=-1), "v"]))
    for lift in (2e4, 50.0):  # GPT-Neo's Where + mask, the constant mask lifting the fill or not
        bias = np.zeros((1, 1, 4, 3), np.float32)
        bias[..., 1:] = lift
        x = g.node("Where", [g.tensor(rows, "rows"), _scores(g, "q", "k"), g.tensor(np.array(-1e4, np.float32), "fill")])
        x = g.node("Add", [x, g.tensor(bias, "bias")])
        outs.append(g.node("MatMul", [g.node("Softmax", [x], axis=-1), "v"]))
    inputs = [_vi("q", T.FLOAT, [1, 2, 4, 8]), _vi("k", T.FLOAT, [1, 2, 3, 8]), _vi("v", T.FLOAT, [1, 2, 3, 5]),
              _vi("keep", T.BOOL, [1, 1, 4, 3]), _vi("keep2", T.BOOL, [1, 2, 1, 3])]
    return _bytes(g, inputs, outs)


def padded_lengths() -> bytes:
    """torchaudio Emformer's padding mask through dynamo: Range(0, max(lengths)) >= lengths
    as a [N, 1, 1, ?] Where with -1e8 (its own fill) and float32's min, heads in the batch,
    q scaled; `lengths` [3, 4] and `lens0` [0, 4] (a sample of length 0: fuzz_numbers feeds
    both)."""
    from onnx import TensorProto as T

    g = _graph(107)
    n, h, length, e = 2, 2, 4, 8
    outs = []
    for lengths, fill in (("lengths", -1e8), ("lens0", -1e8), ("lens0", FMIN), ("lengths", -1e4)):
        q = g.node("Mul", ["q", g.tensor(np.array([[[e ** -0.5]]], np.float32), "scale")])
        scores = g.node("MatMul", [q, g.node("Transpose", ["k"], perm=[0, 2, 1])])
        scores = g.node("Reshape", [scores, g.tensor(np.array([n, h, length, -1], np.int64), "split")])
        longest = g.node("ReduceMax", [lengths], keepdims=0)
        keys = g.node("Range", [g.tensor(np.array(0, np.int64), "zero"), longest, g.tensor(np.array(1, np.int64), "one")])
        padded = g.node("GreaterOrEqual", [keys, g.node("Unsqueeze", [lengths, g.tensor(np.array([1], np.int64), "col")])])
        padded = g.node("Unsqueeze", [padded, g.tensor(np.array([1, 2], np.int64), "heads")])
        scores = g.node("Where", [padded, g.tensor(np.array(fill, np.float32), "fill"), scores])
        scores = g.node("Reshape", [scores, g.tensor(np.array([n * h, length, -1], np.int64), "join")])
        outs.append(g.node("MatMul", [g.node("Softmax", [scores], axis=-1), "v"]))
    inputs = [_vi(name, T.FLOAT, [n * h, length, e]) for name in ("q", "k", "v")]
    inputs += [_vi("lengths", T.INT64, [n]), _vi("lens0", T.INT64, [n])]
    return _bytes(g, inputs, outs)


def runtime_keys() -> bytes:
    """Keys up to a run-time length S (a KV cache: k, v [N, H, S, E]) with a run-time
    padding condition [N, 1, 1, S] and an additive bias [N, 1, L, S]; a run-time number of
    queries with no view (queries and keys cut to max(lengths))."""
    from onnx import TensorProto as T

    g = _graph(108)
    q = g.node("Mul", ["q", g.tensor(np.array(8 ** -0.5, np.float32), "scale")])
    kt = g.node("Transpose", ["k"], perm=[0, 1, 3, 2])
    where = g.node("Where", ["keep", g.node("MatMul", [q, kt]), g.tensor(np.array(FMIN, np.float32), "fill")])
    y1 = g.node("MatMul", [g.node("Softmax", [where], axis=-1), "v"])
    q2 = g.node("Mul", ["q", g.tensor(np.array(8 ** -0.5, np.float32), "scale")])
    added = g.node("Add", [g.node("MatMul", [q2, g.node("Transpose", ["k"], perm=[0, 1, 3, 2])]), "bias"])
    y2 = g.node("MatMul", [g.node("Softmax", [added], axis=-1), "v"])
    longest = g.node("Reshape", [g.node("ReduceMax", ["lengths"], keepdims=1), g.tensor(np.array([1], np.int64), "one")])
    zero = g.tensor(np.array([0], np.int64), "zero")

    def cut(x: str, axes: list[int]) -> str:
        return g.node("Slice", [x, g.node("Concat", [zero] * len(axes), axis=0), g.node("Concat", [longest] * len(axes), axis=0),
                                g.tensor(np.array(axes, np.int64), "axes")])

    s = g.node("Add", [g.node("MatMul", [cut("q", [2]), g.node("Transpose", [cut("q", [2])], perm=[0, 1, 3, 2])]), cut("qbias", [2, 3])])
    s = g.node("Div", [s, g.tensor(np.array(np.sqrt(8), np.float32), "root")])
    y3 = g.node("MatMul", [g.node("Softmax", [s], axis=-1), cut("q", [2])])
    inputs = [_vi("q", T.FLOAT, [2, 2, 5, 8]), _vi("k", T.FLOAT, [2, 2, "S", 8]), _vi("v", T.FLOAT, [2, 2, "S", 8]),
              _vi("keep", T.BOOL, [2, 1, 1, "S"]), _vi("bias", T.FLOAT, [2, 1, 5, "S"]), _vi("qbias", T.FLOAT, [2, 2, 5, 5]),
              _vi("lengths", T.INT64, [2])]
    return _bytes(g, inputs, [y1, y2, y3])


def split_keys() -> bytes:
    """PEGASUS-X's block-local attention: the global keys' and each block's own scores joined,
    masked by a run-time [1, 1, N, 1, G + K] mask, split for two value products and added;
    one with 1 block, one with 3 blocks whose probabilities are also a model output."""
    from onnx import TensorProto as T

    g = _graph(109)
    b, h, k, gl, e = 1, 2, 4, 3, 8
    outs = []
    inputs = []
    for blocks, probs_out in ((1, False), (3, True)):
        tag = str(blocks)
        shape = lambda *d: g.tensor(np.array(d, np.int64), "shape")  # noqa: E731
        s1 = g.node("MatMul", [f"q{tag}", g.node("Transpose", [f"kg{tag}"], perm=[0, 1, 3, 2])])
        s1 = g.node("Reshape", [s1, shape(b, h, blocks, k, gl)])
        kb = g.node("Reshape", [f"kb{tag}", shape(b, h, blocks, k, e)])
        s2 = g.node("MatMul", [g.node("Reshape", [f"q{tag}", shape(b, h, blocks, k, e)]), g.node("Transpose", [kb], perm=[0, 1, 2, 4, 3])])
        x = g.node("Concat", [s1, s2], axis=-1)
        x = g.node("Add", [g.node("Mul", [x, g.tensor(np.array(e ** -0.5, np.float32), "scale")]), f"mask{tag}"])
        p = g.node("Softmax", [x], axis=-1)
        axis = g.tensor(np.array([4], np.int64), "axis")
        p1 = g.node("Slice", [p, g.tensor(np.array([0], np.int64), "b"), g.tensor(np.array([gl], np.int64), "e"), axis])
        p2 = g.node("Slice", [p, g.tensor(np.array([gl], np.int64), "b"), g.tensor(np.array([2**62], np.int64), "e"), axis])
        a1 = g.node("Reshape", [g.node("MatMul", [g.node("Reshape", [p1, shape(b, h, blocks * k, gl)]), f"vg{tag}"]), shape(b, h, blocks, k, e)])
        a2 = g.node("MatMul", [p2, g.node("Reshape", [f"vb{tag}", shape(b, h, blocks, k, e)])])
        outs += [g.node("Add", [a1, a2])] + ([p] if probs_out else [])
        inputs += [_vi(f"{n}{tag}", T.FLOAT, [b, h, blocks * k, e]) for n in ("q", "kb", "vb")]
        inputs += [_vi(f"{n}{tag}", T.FLOAT, [b, h, gl, e]) for n in ("kg", "vg")]
        inputs.append(_vi(f"mask{tag}", T.FLOAT, [b, 1, blocks, 1, gl + k]))
    return _bytes(g, inputs, outs, opset=17)


def runtime_transpose() -> bytes:
    """dynamo's k^T of a tensor with dynamic axes: a reshape to [-1, S, E] and one back to
    [.., E, S], both of shapes read from k at run time; B and L run-time sizes; the padding
    Where(keep, 0, -inf) added and the softmax's NaN rows zeroed. A second reads the sizes in
    the other order ([-1, E, S]: a reinterpretation, not k^T)."""
    from onnx import TensorProto as T

    g = _graph(110)
    e = 8
    outs = []
    for swapped in (False, True):
        root = g.tensor(np.array(e ** -0.25, np.float32), "root")
        shape = g.node("Shape", ["k"])
        part = lambda b, end: g.node("Slice", [shape, g.tensor(np.array([b], np.int64), "b"), g.tensor(np.array([end], np.int64), "e")])  # noqa: E731
        rows, width, lead = part(-2, -1), part(-1, 2**62), part(-(2**62), -2)
        first = [rows, width] if not swapped else [width, rows]
        flat = g.node("Reshape", ["k", g.node("Concat", [g.tensor(np.array([-1], np.int64), "rest"), *first], axis=0)])
        kt = g.node("Reshape", [g.node("Transpose", [flat], perm=[0, 2, 1]), g.node("Concat", [lead, width, rows], axis=0)])
        scores = g.node("MatMul", [g.node("Mul", ["q", root]), g.node("Mul", [kt, root])])
        bias = g.node("Where", ["keep", g.tensor(np.array(0.0, np.float32), "zero"), g.tensor(np.array(-np.inf, np.float32), "inf")])
        p = g.node("Softmax", [g.node("Add", [scores, bias])], axis=-1)
        p = g.node("Where", [g.node("IsNaN", [p]), g.tensor(np.array(0.0, np.float32), "none"), p])
        outs.append(g.node("MatMul", [p, "v"]))
    inputs = [_vi(n, T.FLOAT, ["B", 2, "L", e]) for n in ("q", "k", "v")] + [_vi("keep", T.BOOL, ["B", 1, 1, "L"])]
    return _bytes(g, inputs, outs, opset=17)


SEEDS = {"residual.onnx": residual_in_place, "excite.onnx": excite_fold, "dwdilated.onnx": dilated_depthwise,
         "dwshared.onnx": shared_depthwise, "fcblocks.onnx": fc_blocks, "maskedrows.onnx": masked_rows,
         "padlengths.onnx": padded_lengths, "rtkeys.onnx": runtime_keys, "splitkeys.onnx": split_keys,
         "rttranspose.onnx": runtime_transpose}
IR_SEEDS = ("residual", "excite", "dwdilated", "dwshared", "fcblocks", "maskedrows", "padlengths", "splitkeys")
"""Seeds whose IR XML (Convolution + Add, GroupConvolution with dilations, MatMul, SDPA with
Select masks and the uniform rows' ReduceMax / Select) and .mlir are seeds too."""

BAD_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Conv": [("dilations", [7, 7]), ("dilations", [0, 1]), ("dilations", [-2, 2]), ("group", 5), ("group", 16), ("pads", [0, 0, 50, 0]),
             ("strides", [0, 0]), ("kernel_shape", [1, 3])],
    "Where": [],
    "Range": [],
    "Concat": [("axis", 5), ("axis", -6)],
    "Gemm": [("transA", 1), ("transB", 2), ("alpha", float("nan")), ("beta", float("inf"))],
    "Softmax": [("axis", 4), ("axis", -5)],
}

VALID_ATTRIBUTES: dict[str, list[tuple[str, Any]]] = {
    "Conv": [("dilations", [2, 2]), ("dilations", [3, 3]), ("dilations", [6, 6]), ("dilations", [2, 5]), ("pads", [1, 0, 2, 1]),
             ("pads", [3, 3, 3, 3]), ("strides", [2, 2])],
    "Gemm": [("alpha", 1.0), ("beta", 0.0), ("alpha", -2.0)],
    "Concat": [("axis", -1)],
}

BAD_CONSTANTS = [
    np.array(np.float32(np.nan)), np.array(np.float32(5.0)), np.array(np.float32(-1e8)), np.array(np.float32(FMIN)),
    np.array(np.float32(-0.0)), np.zeros((1, 1, 4, 3), bool), np.array([0, 0], np.int64), np.array([-1, 4], np.int64),
    np.array([2, 2, -1, 8], np.int64), np.array([-1, 8, 4], np.int64), np.zeros((1, 24, 1, 1), np.float32),
    np.full((1, 24, 1, 1), np.inf, np.float32), np.zeros((512, 5), np.float32), np.ones((16, 16, 1, 1), np.float32),
]
BAD_INPUT_TYPES = [  # (elem_type, shape)
    (1, [1, 16, 5, 6]), (1, [1, 15, 5, 5]), (1, [2, 16, 5, 5]), (1, [1, 400, 2, 2]), (1, [3, 8, 4, 4]), (1, [1, 24, 1, 1]),
    (1, [1, 387, 2, 0]), (1, [1, 4, 9, 0]), (1, [1, 4, 0, 48]), (1, [1, 5, 6, 7]), (1, [2, 5001]), (1, [2, 0]), (1, [5000]),
    (9, [1, 1, 4, 4]), (1, [1, 1, 4, 3]), (7, [2]), (7, [3]), (6, [2]), (1, [2, 2, 5]), (9, [2, 1, 1, 7]), (1, [1, 2, 8, 8]),
    (1, [1, 1, 3, 1, 5]), (1, [2, 2, 3, 8]),
]

__all__ = ["VALID_ATTRIBUTES", "BAD_ATTRIBUTES", "BAD_CONSTANTS", "BAD_INPUT_TYPES", "SEEDS", "IR_SEEDS"]
