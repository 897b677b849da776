"""`ir-run MODEL --bisect ORIGINAL`: the first layer of MODEL whose output on the device
diverges from the framework's.

ORIGINAL gives every layer's value for the same seeded inputs: an `.onnx` file is run by
onnxruntime with every node's output exposed (optimisations off); any other model is imported
by its frontend without the conversion pipeline and run by the reference interpreter. MODEL's
layers are matched to ORIGINAL's by layer name (irforge names layers after the framework's
nodes). Fusion changes what a layer computes (a Convolution that absorbed its BatchNorm and
ReLU gives the ReLU's value), so a layer matches when its output agrees with its namesake's
or with one of the single-consumer, same-shape layers that follow it (up to four).

On `--device ref` every layer's value comes from one interpreter run; on `cpu` and `gpu` the
search bisects: MODEL cut after a layer (its output the only output) is compiled and run,
log2(layers) times, keeping the backend's fusion of everything before that layer. It assumes
that once a layer diverges the layers after it do too, and reports the first diverging layer,
its error and the last matching layer before it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, StringAttr
from xdsl.dialects.func import ReturnOp

from irforge.dialects.nn.base import NNOp
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.model import Model, input_names
from irforge.tools import onnxruntime_runs

FOLLOW = 4
"""How many single-consumer, same-shape layers after a namesake may carry a fused layer's value."""


@dataclass
class Original:
    """Every layer's first output by layer name, and the layers that follow each."""

    source: str
    values: dict[str, np.ndarray] = field(default_factory=dict)
    followers: dict[str, list[str]] = field(default_factory=dict)

    def candidates(self, name: str) -> list[tuple[str, np.ndarray]]:
        return [(n, self.values[n]) for n in [name, *self.followers.get(name, [])] if n in self.values]


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max |got - want| / max |want| (inf when the shapes differ)."""
    if got.shape != want.shape:
        return float("inf")
    if not want.size:
        return 0.0
    g, w = got.astype(np.float64), want.astype(np.float64)
    worst = float(np.nanmax(np.where(np.isnan(g) & np.isnan(w), 0.0, np.abs(g - w))))
    scale = float(np.nanmax(np.abs(w))) if np.isfinite(w).any() else 0.0
    return worst / scale if scale > 0 else worst


def onnx_original(path: str, inputs: Mapping[str, np.ndarray]) -> Original:
    """onnxruntime on ORIGINAL with every node output exposed; layers named as irforge's
    importer names them (the node's name, else op type + first output)."""
    import onnx

    proto = onnxruntime_runs.load_onnx(path)
    graph = proto.graph
    outputs = {o.name for o in graph.output}
    for node in graph.node:
        graph.output.extend(onnx.ValueInfoProto(name=t) for t in node.output if t and t not in outputs)
        outputs.update(node.output)
    session = onnxruntime_runs.session(proto.SerializeToString(), path)
    feeds = {i.name: inputs[i.name] for i in session.get_inputs() if i.name in inputs}
    missing = [i.name for i in session.get_inputs() if i.name not in inputs]
    if missing:
        raise IrforgeError(f"--bisect: ORIGINAL's inputs {', '.join(missing)} are not inputs of MODEL",
                           fix="bisect a MODEL converted without cutting or renaming inputs", code="E891")
    tensors = dict(zip([o.name for o in session.get_outputs()], onnxruntime_runs.run(session, feeds, path)))
    original = Original(f"{Path(path).name} (onnxruntime)")
    name_of = {}
    consumers: dict[str, list[str]] = {}
    for node in graph.node:
        name = node.name or (f"{node.op_type}_{node.output[0]}" if node.output else node.op_type)
        name_of[node.output[0] if node.output else name] = name
        if node.output and node.output[0] in tensors:
            original.values[name] = np.asarray(tensors[node.output[0]])
        for tensor in node.input:
            consumers.setdefault(tensor, []).append(name)
    output_of = {v: k for k, v in name_of.items()}
    for name in original.values:
        original.followers[name] = _chain(name, lambda n: consumers.get(output_of.get(n, ""), []), original.values)
    return original


def _chain(name: str, users: Callable[[str], list[str]], values: Mapping[str, np.ndarray]) -> list[str]:
    chain, current = [], name
    while len(chain) < FOLLOW:
        following = users(current)
        if len(following) != 1 or following[0] not in values or values[following[0]].shape != values[name].shape:
            break
        current = following[0]
        chain.append(current)
    return chain


def layer_values(model: Model, inputs: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The reference interpreter's value of every named layer's first result."""
    from irforge.backends.reference.interpreter import check_input, constant_value
    from irforge.backends.reference.registry import evaluate

    func = model.func
    values = {arg: check_input(n, arg, inputs[n]) for n, arg in zip(input_names(func), func.args)}
    by_layer: dict[str, np.ndarray] = {}
    with np.errstate(all="ignore"):
        for op in func.body.block.ops:
            if isinstance(op, ReturnOp):
                break
            if isinstance(op, Constant):
                values[op.output] = constant_value(op, model.store)
                continue
            values.update(zip(op.results, evaluate(op, [values[v] for v in op.operands])))
            if isinstance(op, NNOp) and op.layer_name is not None and op.results:
                by_layer[op.layer_name.data] = values[op.results[0]]
    return by_layer


def reference_original(path: str, inputs: Mapping[str, np.ndarray]) -> Original:
    """ORIGINAL imported by its frontend, no passes, run by the reference interpreter."""
    from irforge.frontends.registry import frontend_for
    from irforge.tools.ir_convert import build_parser

    options = build_parser().parse_args(["--input_model", path])
    options.weights = None
    model = frontend_for(path).import_model(options)
    original = Original(f"{Path(path).name} (reference interpreter, unoptimised import)")
    original.values = layer_values(model, inputs)
    users: dict[str, list[str]] = {}
    for op in model.func.body.block.ops:
        if isinstance(op, NNOp) and op.layer_name is not None and op.results:
            users[op.layer_name.data] = [u.operation.layer_name.data for u in op.results[0].uses
                                         if isinstance(u.operation, NNOp) and u.operation.layer_name is not None]
    for name in original.values:
        original.followers[name] = _chain(name, lambda n: users.get(n, []), original.values)
    return original


def truncated(model: Model, index: int) -> Model:
    """A copy of MODEL whose only output is the first result of its `index`-th op."""
    from irforge.passes.cut import erase_dead_ops

    module = model.module.clone()
    copy = Model(module, model.store)
    func = copy.func
    op = list(func.body.block.ops)[index]
    assert isinstance(op, NNOp) and op.layer_name is not None
    value = op.results[0]
    ret = func.body.block.last_op
    assert isinstance(ret, ReturnOp)
    ret.detach()
    ret.erase()
    func.body.block.add_op(ReturnOp(value))
    func.function_type = FunctionType.from_lists(list(func.function_type.inputs.data), [value.type])
    func.res_attrs = ArrayAttr([DictionaryAttr({"nn.name": StringAttr(op.layer_name.data)})])
    erase_dead_ops(func)
    return copy


@dataclass
class Step:
    index: int
    """Position of the op in MODEL's function body."""
    label: str
    name: str
    error: float = float("nan")
    against: str = ""


def compare(step: Step, got: np.ndarray, original: Original) -> float:
    best = float("inf")
    for name, want in original.candidates(step.name):
        error = relative_error(got, want)
        if error < best:
            best, step.against = error, name
    step.error = best
    return best


def bisect(model: Model, inputs: Mapping[str, np.ndarray], original: Original, device: str,
           run_one: Callable[[Model], np.ndarray], tolerance: float, say: Callable[[str], None]) -> None:
    """Find and print the first diverging layer (see the module docstring)."""
    ops = list(model.func.body.block.ops)
    steps = [Step(i, op.label, op.layer_name.data) for i, op in enumerate(ops)
             if isinstance(op, NNOp) and op.layer_name is not None and op.results and original.candidates(op.layer_name.data)]
    if not steps:
        raise IrforgeError("--bisect: no layer of MODEL has a namesake in ORIGINAL",
                           fix="give the framework model MODEL was converted from", code="E891")
    say(f"bisect: {len(steps)} layers of MODEL have a namesake in {original.source}; device {device}, tolerance {tolerance:g}")
    if device == "ref":
        values = layer_values(model, inputs)
        diverged = lambda k: compare(steps[k], values[steps[k].name], original) > tolerance  # noqa: E731
    else:
        diverged = lambda k: compare(steps[k], run_one(truncated(model, steps[k].index)), original) > tolerance  # noqa: E731
    if device == "ref":
        first = next((k for k in range(len(steps)) if diverged(k)), None)
    else:
        first = _first_true(len(steps), diverged)
    if first is None:
        last = steps[-1]
        say(f"no layer diverges: the last one compared, {last.label}, is within {last.error:.3e} of ORIGINAL's '{last.against}'")
        return
    step = steps[first]
    say(f"first diverging layer: {step.label} (#{first + 1} of {len(steps)}): max_rel_error={step.error:.3e} "
        f"against ORIGINAL's '{step.against or step.name}' (max |a-b| / max |ORIGINAL|)")
    if first > 0:
        before = steps[first - 1]
        if before.against == "":
            diverged(first - 1)
        say(f"last matching layer before it: {before.label}: max_rel_error={before.error:.3e}")


def _first_true(count: int, predicate: Callable[[int], bool]) -> int | None:
    """The first k with predicate(k), by bisection (predicate assumed monotone); None if the last is False."""
    if not predicate(count - 1):
        return None
    lo, hi = 0, count - 1  # predicate(hi) is True
    while lo < hi:
        mid = (lo + hi) // 2
        if predicate(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo
