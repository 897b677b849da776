"""Random single-purpose models for the CPU kernels session 13 added, on cpu (1 and 2 threads,
arena NaN-filled before the run: a lane a kernel leaves unwritten shows) against the
reference interpreter and onnxruntime:

    python bench/fuzz_cpu_kernels.py --cases 200 --seed 1 [--kinds stride2,scaled,grouped,tails,attention]

- stride2: 3x3 stride-2 convolutions (`ops.winograd.STRIDE2`): square and odd / even planes
  7..57, pads 0 / 1 / 2 and asymmetric ones, channels around 32, batch 1 or 2, with a bias,
  a residual, Relu or Clip after;
- scaled: squeeze-excite x * s into the next 1x1 layer's B pack (`linear.SCALED_PACK`): x read
  elsewhere too, s of shape [N, C, 1, 1] / [1, C, 1, 1] / [C, 1, 1], x * s also an output;
- grouped: grouped 3x3 / 1x1 layers (`gemm.BALANCED_ROWS`), groups of 2..32 rows;
- tails: MatMul / 1x1 layers of 1..4 columns past whole panels and K left-overs
  (`gemm.COLUMN_K_UNROLL`), Gemm with a constant B;
- attention: softmax(q k^T * c [+ mask | Where(keep, s, fill)]) v fused, keys 1..70
  (`attention.PACK_KEYS` / `WHOLE_ROWS`), run-time, padding and causal masks.

Prints a count per verdict (agree / differ / refused / crashed) and each finding with its
settings (rerun: the same --seed and --cases).
"""

from __future__ import annotations

import argparse
import random
import sys
import traceback
from collections import Counter
from typing import Any

import numpy as np

FMIN = float(np.finfo(np.float32).min)


class Net:
    """An onnx.helper graph under construction."""

    def __init__(self, rng: random.Random) -> None:
        self.rng, self.nodes, self.inits, self.inputs, self.outputs, self.n = rng, [], [], [], [], 0
        self.np = np.random.default_rng(rng.randrange(1 << 30))

    def name(self, tag: str) -> str:
        self.n += 1
        return f"{tag}{self.n}"

    def node(self, op: str, ins: list[str], **attrs: Any) -> str:
        from onnx import helper

        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def const(self, array: np.ndarray) -> str:
        from onnx import numpy_helper

        name = self.name("c")
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def input(self, shape: list[int], dtype: int = 1) -> str:
        from onnx import helper

        name = self.name("in")
        self.inputs.append(helper.make_tensor_value_info(name, dtype, shape))
        return name

    def weights(self, *shape: int) -> str:
        fan_in = int(np.prod(shape[1:])) or 1
        return self.const((self.np.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32))

    def conv(self, x: str, cin: int, cout: int, k: int, bias: bool, **attrs: Any) -> str:
        group = attrs.get("group", 1)
        ins = [x, self.weights(cout, cin // group, k, k)]
        if bias:
            ins.append(self.const(self.np.uniform(-0.5, 0.5, cout).astype(np.float32)))
        return self.node("Conv", ins, kernel_shape=[k, k], **attrs)

    def epilogue(self, y: str, cout: int, residual_shape: list[int] | None) -> str:
        r = self.rng.random()
        if residual_shape is not None and self.rng.random() < 0.4:
            y = self.node("Add", [y, self.input(residual_shape)])
        if r < 0.3:
            y = self.node("Relu", [y])
        elif r < 0.5:
            y = self.node("Clip", [y, self.const(np.float32(0)), self.const(np.float32(6))])
        elif r < 0.6:
            y = self.node("Clip", [y, self.const(np.float32(-1))])
        return y

    def model(self) -> Any:
        from onnx import TensorProto as T
        from onnx import helper

        graph = helper.make_graph(self.nodes, "g", self.inputs, [helper.make_tensor_value_info(o, T.FLOAT, None) for o in self.outputs], self.inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        model.ir_version = 8
        return model


def out_size(size: int, k: int, stride: int, lo: int, hi: int) -> int:
    return (size + lo + hi - k) // stride + 1


def stride2(net: Net) -> str:
    r = net.rng
    n, cin, cout = r.choice([1, 1, 2]), r.choice([31, 32, 33, 48, 64]), r.choice([30, 32, 33, 64])
    h = r.randint(7, 57)
    w = h if r.random() < 0.6 else r.randint(7, 57)
    pads = r.choice([[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [0, 0, 1, 1], [1, 1, 0, 0], [0, 1, 1, 0], [1, 0, 2, 1]])
    x = net.input([n, cin, h, w])
    y = net.conv(x, cin, cout, 3, r.random() < 0.7, strides=[2, 2], pads=pads)
    shape = [n, cout, out_size(h, 3, 2, pads[0], pads[2]), out_size(w, 3, 2, pads[1], pads[3])]
    net.outputs.append(net.epilogue(y, cout, shape))
    if r.random() < 0.3:  # a second layer on the same input (the plane read twice)
        net.outputs.append(net.conv(x, cin, cout, 3, True, strides=[2, 2], pads=[1, 1, 1, 1]))
    return f"stride2 n={n} {cin}->{cout} {h}x{w} pads={pads}"


def scaled(net: Net) -> str:
    r = net.rng
    n, c, cout, h = r.choice([1, 2]), r.choice([16, 32, 48, 96]), r.choice([8, 32, 40, 64]), r.choice([5, 7, 14, 17, 28])
    x = net.input([n, c, h, h])
    if r.random() < 0.5:
        x = net.node("Relu", [x])
    squeeze = net.node("GlobalAveragePool", [x])
    hidden = max(4, c // 4)
    s = net.node("Sigmoid", [net.conv(net.node("Relu", [net.conv(squeeze, c, hidden, 1, True)]), hidden, c, 1, True)])
    shape_kind = r.choice(["nc11", "1c11", "c11"])
    if shape_kind == "1c11" and n == 1 or shape_kind == "c11":
        s = net.node("Reshape", [s, net.const(np.array([c, 1, 1] if shape_kind == "c11" else [1, c, 1, 1], np.int64))]) if n == 1 else s
    y = net.node("Mul", [x, s] if r.random() < 0.5 else [s, x])
    net.outputs.append(net.epilogue(net.conv(y, c, cout, 1, r.random() < 0.7), cout, None))
    extras = []
    if r.random() < 0.4:
        net.outputs.append(y)
        extras.append("x*s out")
    if r.random() < 0.4:
        net.outputs.append(net.node("Tanh", [x]))
        extras.append("x read again")
    return f"scaled n={n} c={c}->{cout} {h}x{h} s={shape_kind} {extras}"


def grouped(net: Net) -> str:
    r = net.rng
    n = r.choice([1, 2])
    per = r.choice([2, 4, 8, 16, 32])
    groups = r.choice([2, 4, 8, 32])
    c = per * groups
    h = r.choice([7, 14, 15, 28])
    k = r.choice([1, 3])
    stride = r.choice([1, 1, 2])
    x = net.input([n, c, h, h])
    y = net.conv(x, c, c, k, r.random() < 0.7, group=groups, pads=[k // 2] * 4, strides=[stride, stride])
    side = out_size(h, k, stride, k // 2, k // 2)
    net.outputs.append(net.epilogue(y, c, [n, c, side, side]))
    return f"grouped n={n} c={c} groups={groups} {h}x{h} k={k} s={stride}"


def tails(net: Net) -> str:
    r = net.rng
    if r.random() < 0.5:
        m, k = r.randint(1, 40), r.randint(1, 70)
        ncols = r.choice([1, 2, 3, 4]) + 16 * r.randint(0, 3)
        a = net.input([m, k])
        b = net.weights(k, ncols) if r.random() < 0.6 else net.input([k, ncols])
        y = net.node("MatMul", [a, b]) if r.random() < 0.6 else net.node("Gemm", [a, b, net.const(net.np.standard_normal(ncols).astype(np.float32))])
        net.outputs.append(net.epilogue(y, ncols, None))
        return f"tails matmul {m}x{k} @ {k}x{ncols}"
    n, cin, cout = r.choice([1, 2]), r.randint(1, 70), r.choice([8, 16, 32, 33])
    h, w = r.randint(1, 9), r.randint(1, 9)
    x = net.input([n, cin, h, w])
    net.outputs.append(net.epilogue(net.conv(x, cin, cout, 1, r.random() < 0.7), cout, [n, cout, h, w]))
    return f"tails 1x1 n={n} {cin}->{cout} {h}x{w}"


def attention(net: Net) -> str:
    r = net.rng
    b, heads, l, s, d = r.choice([1, 2]), r.choice([1, 2, 3]), r.randint(1, 40), r.randint(1, 70), r.choice([8, 16, 32, 64])
    q, k, v = net.input([b, heads, l, d]), net.input([b, heads, s, d]), net.input([b, heads, s, d])
    scaled_q = net.node("Mul", [q, net.const(np.float32(1 / np.sqrt(d)))])
    scores = net.node("MatMul", [scaled_q, net.node("Transpose", [k], perm=[0, 1, 3, 2])])
    kind = r.choice(["none", "add", "add_pad", "where_pad", "where_causal", "where_rt"])
    if kind == "add":
        scores = net.node("Add", [scores, net.input([b, 1, l, s])])
    elif kind == "add_pad":
        scores = net.node("Add", [scores, net.input([b, 1, 1, s])])
    elif kind == "where_pad":
        scores = net.node("Where", [net.input([b, 1, 1, s], 9), scores, net.const(np.float32(r.choice([FMIN, -np.inf])))])
    elif kind == "where_causal":
        keep = np.tril(np.ones((l, s), bool), s - l).reshape(1, 1, l, s)
        scores = net.node("Where", [net.const(keep), scores, net.const(np.float32(r.choice([FMIN, -np.inf, -1e9])))])
    elif kind == "where_rt":
        scores = net.node("Where", [net.input([b, 1, l, s], 9), scores, net.const(np.float32(FMIN))])
    net.outputs.append(net.node("MatMul", [net.node("Softmax", [scores], axis=-1), v]))
    return f"attention b={b} h={heads} l={l} s={s} d={d} mask={kind}"


KINDS = {"stride2": stride2, "scaled": scaled, "grouped": grouped, "tails": tails, "attention": attention}


def feeds_for(model: Any, rng: np.random.Generator, poison: bool) -> dict[str, np.ndarray]:
    from onnx import helper

    feeds = {}
    for vi in model.graph.input:
        t = vi.type.tensor_type
        dims = [d.dim_value for d in t.shape.dim]
        dtype = np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))
        if dtype == np.bool_:
            array = rng.random(dims) < 0.7
            if array.size and rng.random() < 0.3:
                array.reshape(-1, dims[-1])[0] = False  # a row masked throughout
            feeds[vi.name] = array
        else:
            feeds[vi.name] = rng.standard_normal(dims).astype(dtype)
            if poison and feeds[vi.name].size:
                feeds[vi.name].reshape(-1)[rng.integers(feeds[vi.name].size)] = rng.choice([np.inf, -np.inf, np.nan])
    return feeds


def cpu_outputs(model: Any, feeds: dict[str, np.ndarray], threads: int) -> dict[str, np.ndarray]:
    from irforge.backends.cpu import compile_model

    compiled = compile_model(model, threads=threads, cache_dir=False)
    try:
        compiled._executable.arena[:] = np.nan  # a lane a kernel leaves unwritten shows
        with np.errstate(all="ignore"):
            return compiled(feeds)
    finally:
        compiled.close()


def close(got: np.ndarray, want: np.ndarray) -> bool:
    if got.shape != want.shape:
        return False
    return bool(np.all(np.isclose(got, want, rtol=1e-3, atol=1e-4, equal_nan=True) | (~np.isfinite(got) & ~np.isfinite(want))))


def one_case(kind: str, rng: random.Random) -> tuple[str, str]:
    import onnxruntime as ort

    from irforge.backends.reference import run
    from irforge.errors import IrforgeError
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    net = Net(rng)
    what = KINDS[kind](net)
    proto = net.model()
    poison = rng.random() < 0.2
    feeds = feeds_for(proto, np.random.default_rng(rng.randrange(1 << 30)), poison)
    what += " poisoned" * poison
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    want = dict(zip([o.name for o in proto.graph.output], session.run(None, feeds)))
    try:
        model = import_onnx(proto)
        apply_pipeline(model.module, DEFAULT_PIPELINE)
        with np.errstate(all="ignore"):
            ref = run(model, feeds)
        got = {f"cpu@{t}": cpu_outputs(model, feeds, t) for t in (1, 2)}
    except IrforgeError as error:
        return "refused", f"{what}: {str(error).splitlines()[0]}"
    except Exception:  # noqa: BLE001  (an internal error: a finding)
        return "crashed", f"{what}: {traceback.format_exc(limit=3)}"
    wrong = []
    for name, expected in want.items():
        for device, outputs in (("ref", ref), *got.items()):
            if not close(outputs[name], expected):
                diff = np.abs(np.nan_to_num(outputs[name].astype(np.float64)) - np.nan_to_num(expected.astype(np.float64)))
                wrong.append(f"{device} {name} max {float(diff.max()):.3g} ({int((~np.isclose(outputs[name], expected, rtol=1e-3, atol=1e-4, equal_nan=True)).sum())} values)")
    return ("differ", f"{what}: {wrong}") if wrong else ("agree", what)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--kinds", default=",".join(KINDS))
    args = p.parse_args()
    rng = random.Random(args.seed)
    kinds = args.kinds.split(",")
    counts: Counter[str] = Counter()
    for case in range(args.cases):
        kind = kinds[case % len(kinds)]
        verdict, note = one_case(kind, rng)
        counts[verdict] += 1
        if verdict != "agree":
            print(f"#{case} {verdict}: {note}", flush=True)
        if (case + 1) % 25 == 0:
            print(f"after {case + 1}: {dict(counts)}", flush=True)
    print(dict(counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
