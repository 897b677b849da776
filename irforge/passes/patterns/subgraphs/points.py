"""Sub-graph replacement by points: everything between start and end layers becomes one op.

The transformations config (`--transformations_config`, `replace-subgraph{config=...}`) is the
Model Optimizer's JSON: a list of replacements, each

    {"id": "MyBlock", "match_kind": "points", "op": "ext.block",
     "custom_attributes": {"factor": 2.0},
     "instances": {"start_points": ["conv1"], "end_points": ["relu2"]}}

with layers named by their `name` property. The sub-graph is found as the guide describes:
walk forward from the start layers to the end layers (or to layers without users), then
backward from every non-start layer of it to collect what those read (constants only: a walk
back that reaches a model input means a value enters the sub-graph other than through the
start layers). The new op (`op`, registered by irforge or an extension, with
`custom_attributes` as its properties and `name` or else `id` as its layer name) takes the
start layers' non-constant operands from outside the sub-graph, in start_points order, and
gives the end layers' results, in end_points order. `include_inputs_to_sub_graph` and
`include_outputs_to_sub_graph` may be given, but only as true (the guide requires it).

A config that cannot be read, a point that names no layer, an end not reached from the starts,
a sub-graph value with a consumer outside it (other than the end layers' results) or an op that
is not registered is a one-line error.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from irforge.dialects.nn.base import NNOp, build
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.model import input_names, main_function
from irforge.passes.cut import layers_by_name

FIX_CONFIG = "see the Model Optimizer's sub-graph replacement config: a list of {id, match_kind, op, instances}"


@dataclass(frozen=True)
class PointsReplacement:
    id: str
    op: str
    start_points: tuple[str, ...]
    end_points: tuple[str, ...]
    attributes: dict[str, object] = field(default_factory=dict)
    layer_name: str | None = None

    def fail(self, what: str, fix: str | None = None) -> IrforgeError:
        return IrforgeError(f"replacement '{self.id}': {what}", fix=fix, code="E744")


def _read_json(path: str) -> object:
    p = Path(path)
    if not p.is_file():
        raise IrforgeError(
            f"transformations config '{path}' does not exist", fix="check the path given to --transformations_config", code="E744"
        )
    try:
        return json.loads(p.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise IrforgeError(f"cannot parse transformations config '{path}': {e}", fix="it must be valid JSON", code="E744") from None


def _point_list(entry: dict, key: str, rid: str) -> tuple[str, ...]:  # type: ignore[type-arg]
    points = entry["instances"].get(key)
    if not isinstance(points, list) or not points or not all(isinstance(p, str) for p in points):
        raise IrforgeError(
            f"replacement '{rid}': instances.{key} must be a non-empty list of layer names", fix=FIX_CONFIG, code="E744"
        )
    return tuple(points)


def _replacement(entry: object, index: int, path: str) -> PointsReplacement:
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        raise IrforgeError(f"replacement #{index} of '{path}' has no \"id\"", fix=FIX_CONFIG, code="E744")
    rid = entry["id"]
    kind = entry.get("match_kind")
    if kind != "points":
        raise IrforgeError(
            f"replacement '{rid}': match kind {json.dumps(kind)} is not supported",
            fix="irforge replaces sub-graphs by points: \"match_kind\": \"points\" with start_points and end_points",
            code="E744",
        )
    if "instances" not in entry:
        raise IrforgeError(f"replacement '{rid}': no instances are defined", fix=FIX_CONFIG, code="E744")
    if not isinstance(entry["instances"], dict):
        raise IrforgeError(
            f"replacement '{rid}': the instance must be a single dictionary",
            fix='give "instances": {"start_points": [...], "end_points": [...]}',
            code="E744",
        )
    if not isinstance(entry.get("op"), str):
        raise IrforgeError(
            f"replacement '{rid}': names no op",
            fix="add \"op\": the name of a registered op (the sub-graph is replaced by one op)",
            code="E744",
        )
    for key in ("include_inputs_to_sub_graph", "include_outputs_to_sub_graph"):
        if entry.get(key, True) is not True:
            raise IrforgeError(
                f"replacement '{rid}': {key} must be true", fix="the start and end layers are always part of the sub-graph", code="E744"
            )
    attributes = entry.get("custom_attributes", {})
    if not isinstance(attributes, dict):
        raise IrforgeError(f"replacement '{rid}': custom_attributes must be an object", fix=FIX_CONFIG, code="E744")
    return PointsReplacement(
        rid,
        entry["op"],
        _point_list(entry, "start_points", rid),
        _point_list(entry, "end_points", rid),
        attributes,
        entry.get("name"),
    )


def load_config(path: str) -> list[PointsReplacement]:
    data = _read_json(path)
    if not isinstance(data, list):
        raise IrforgeError(f"transformations config '{path}' is not a list of replacements", fix=FIX_CONFIG, code="E744")
    return [_replacement(entry, i, path) for i, entry in enumerate(data)]


def _layers(func: FuncOp, names: tuple[str, ...], what: str, r: PointsReplacement) -> list[NNOp]:
    layers = layers_by_name(func)
    missing = [n for n in names if n not in layers]
    if missing:
        raise r.fail(f"{what} '{missing[0]}' names no layer of the model", fix="use the layers' `name` properties")
    return [layers[n] for n in names]


def _forward(starts: list[NNOp], ends: list[NNOp]) -> set[Operation]:
    """The starts and every op reached from them, stopping at the ends."""
    inside: set[Operation] = set(starts)
    stack: list[Operation] = list(starts)
    stop = set(ends)
    while stack:
        op = stack.pop()
        if op in stop:
            continue
        for result in op.results:
            for use in result.uses:
                user = use.operation
                if not isinstance(user, ReturnOp) and user not in inside:
                    inside.add(user)
                    stack.append(user)
    return inside


def _backward(func: FuncOp, inside: set[Operation], starts: list[NNOp], r: PointsReplacement) -> None:
    """Add what the non-start ops read; a model input reached that way is an error."""
    names = dict(zip(func.args, input_names(func)))
    stack = [op for op in inside if op not in starts]
    while stack:
        op = stack.pop()
        for value in op.operands:
            owner = value.owner
            if isinstance(owner, Block):
                raise r.fail(
                    f"the sub-graph reads model input '{names.get(value, '?')}' other than through its start points",
                    fix="add the layer that reads it to start_points",
                )
            if owner not in inside:
                inside.add(owner)
                stack.append(owner)


def _check_leaks(inside: set[Operation], ends: list[NNOp], r: PointsReplacement) -> None:
    for op in inside:
        if op in ends:
            continue
        for result in op.results:
            for use in result.uses:
                if use.operation not in inside:
                    user = "a model output" if isinstance(use.operation, ReturnOp) else _label(use.operation)
                    raise r.fail(
                        f"{_label(op)} inside the sub-graph is also used by {user} outside it",
                        fix="add that layer to end_points, or choose other points",
                    )


def _label(op: Operation) -> str:
    return op.label if isinstance(op, NNOp) else op.name


def _inputs(starts: list[NNOp], inside: set[Operation]) -> list[SSAValue]:
    inputs: list[SSAValue] = []
    for start in starts:
        for value in start.operands:
            if value.owner not in inside and not isinstance(value.owner, Constant) and value not in inputs:
                inputs.append(value)
    return inputs


def _new_op(ctx: Context, r: PointsReplacement, inputs: list[SSAValue], outputs: list[SSAValue]) -> NNOp:
    cls = ctx.get_optional_op(r.op)
    if cls is None or not issubclass(cls, NNOp):
        raise r.fail(
            f"op '{r.op}' is not a registered nn op",
            fix="load the extension that defines it with --extensions (it must derive from NNOp)",
        )
    try:
        new = build(cls, inputs, num_results=len(outputs), name=r.layer_name or r.id, **r.attributes)
    except VerifyException as e:
        raise r.fail(f"cannot build {r.op}: {e}", fix="check custom_attributes and the start points") from None
    for i, (old, result) in enumerate(zip(outputs, new.results)):
        if old.type != result.type:
            new.erase()
            raise r.fail(
                f"{r.op} gives {result.type} for output {i} where the sub-graph gives {old.type}",
                fix="check custom_attributes and the end points",
            )
    return new


def _place(
    block: Block, new: NNOp, inputs: list[SSAValue], outputs: list[SSAValue], inside: set[Operation], r: PointsReplacement
) -> None:
    """Insert `new` after its inputs are computed and before any outside user of its outputs."""
    order = {op: i for i, op in enumerate(block.ops)}
    after = max((order[v.owner] for v in inputs if isinstance(v.owner, Operation)), default=-1)
    users = [order[u.operation] for v in outputs for u in v.uses if u.operation not in inside]
    if users and min(users) <= after:
        new.erase()
        raise r.fail("the sub-graph's outputs are used before all its inputs are computed", fix="choose other points")
    ops = list(block.ops)
    if after + 1 < len(ops):
        block.insert_op_before(new, ops[after + 1])
    else:
        block.add_op(new)


def replace_points(ctx: Context, module: ModuleOp, r: PointsReplacement) -> None:
    func = main_function(module)
    starts = _layers(func, r.start_points, "start point", r)
    ends = _layers(func, r.end_points, "end point", r)
    inside = _forward(starts, ends)
    unreached = [e for e in ends if e not in inside]
    if unreached:
        raise r.fail(
            f"end point '{unreached[0].layer_name.data}' is not reached from the start points",  # type: ignore[union-attr]
            fix="choose end points after the start points",
        )
    _backward(func, inside, starts, r)
    _check_leaks(inside, ends, r)
    inputs = _inputs(starts, inside)
    outputs = [result for end in ends for result in end.results]
    new = _new_op(ctx, r, inputs, outputs)
    _place(func.body.block, new, inputs, outputs, inside, r)
    for old, result in zip(outputs, new.results):
        old.replace_all_uses_with(result)
    absorbed = {v.owner for op in inside for v in op.operands if isinstance(v.owner, Constant)}
    for op in inside:
        op.detach()  # before any erase: erasing drops the references other inside ops check
    for op in inside:
        op.drop_all_references()
    for op in inside:
        op.erase()
    for constant in absorbed - inside:
        if not constant.output.uses:  # type: ignore[attr-defined]
            constant.detach()
            constant.erase()
