"""A Loop of run-time length that appends one tensor per iteration to a sequence (empty or of
elements known at import before the loop), read only
by ConcatFromSequence (or SequenceAt at a constant position): the sequence becomes the loop's
scan output, which OpenVINO's Loop concatenates itself (port_map axis 0).

This is what TorchScript writes for a Python list grown in a loop whose trip count or
condition is data (`items = []; for i in range(n): items.append(f(x, i)); torch.cat(items)`):
SequenceEmpty -> Loop(carried: the list; body: SequenceInsert(list, item)) ->
ConcatFromSequence. Rewritten, the body yields the item as a scan output (stacked on a new
axis 0), and ConcatFromSequence becomes a Permute (new_axis=1) or a Permute + Reshape that
merges the iteration axis into the concatenation axis (new_axis=0).

Anything else a sequence carried through a run-time loop does (an insertion at a position,
SequenceAt inside the body, the sequence read after the loop by another op) stays E195.
"""

from __future__ import annotations

import onnx
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Permute, Reshape, Unsqueeze
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx.registry import NodeContext
from irforge.frontends.onnx.sequences import SequenceValue, StackedSequence


def readers(graph: onnx.GraphProto, name: str) -> list[onnx.NodeProto]:
    """The nodes of `graph` and its subgraphs that read `name`."""
    found = []
    for node in graph.node:
        if name in node.input:
            found.append(node)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                found += readers(attr.g, name)
    return found


def appended_items(ctx: NodeContext) -> dict[int, str] | None:
    """For each carried sequence (index into the carried values) the body value it appends,
    when every carried sequence is appended to exactly once per iteration at the end and
    read by nothing else in the body (its initial elements are known at import), and the loop's result is read only by
    ConcatFromSequence / SequenceAt; else None."""
    body: onnx.GraphProto = ctx.attr("body")
    carried = [ctx.any_input(i) for i in range(2, ctx.num_inputs)]
    graph_outputs = {vi.name for vi in ctx.importer.graph.output}
    items: dict[int, str] = {}
    for k, value in enumerate(carried):
        if not isinstance(value, SequenceValue):
            continue
        if 2 + k >= len(body.input) or 1 + k >= len(body.output) or k >= len(ctx.node.output):
            return None
        seq_in, seq_out, result = body.input[2 + k].name, body.output[1 + k].name, ctx.node.output[k]
        users = readers(body, seq_in)
        if len(users) != 1 or users[0].op_type != "SequenceInsert" or len([n for n in users[0].input if n]) != 2:
            return None
        insert = users[0]
        if insert.input[0] != seq_in or insert.output[0] != seq_out or readers(body, seq_out) or seq_out in {n for n in insert.input}:
            return None
        if result in graph_outputs or any(n.op_type not in ("ConcatFromSequence", "SequenceAt") for n in readers(ctx.importer.graph, result)):
            return None
        items[k] = insert.input[1]
    return items or None


def scan_rewritten(ctx: NodeContext, items: dict[int, str]) -> list[object] | None:
    """The Loop with the appended sequences turned into scan outputs, imported as nn.loop;
    its results with StackedSequence in the sequences' places."""
    from irforge.frontends.onnx.extractors.control_flow import region_loop

    body: onnx.GraphProto = ctx.attr("body")
    carried_count = ctx.num_inputs - 2
    new_body = onnx.GraphProto()
    new_body.CopyFrom(body)
    drop_nodes = {body.input[2 + k].name for k in items}
    kept_nodes = [n for n in body.node if not (n.op_type == "SequenceInsert" and n.input[0] in drop_nodes)]
    del new_body.node[:]
    new_body.node.extend(kept_nodes)
    del new_body.input[:]
    new_body.input.extend([vi for i, vi in enumerate(body.input) if i - 2 not in items])
    outputs = list(body.output)
    scans = outputs[1 + carried_count :]
    kept_out = [outputs[0]] + [vi for k, vi in enumerate(outputs[1 : 1 + carried_count]) if k not in items]
    appended = [onnx.helper.make_empty_tensor_value_info(items[k]) for k in sorted(items)]
    del new_body.output[:]
    new_body.output.extend([*kept_out, *scans, *appended])
    node = onnx.NodeProto()
    node.CopyFrom(ctx.node)
    node.name = ctx.name
    del node.input[:]
    node.input.extend([n for i, n in enumerate(ctx.node.input) if i - 2 not in items])
    del node.output[:]
    out_names = list(ctx.node.output)
    carried_names = [n for k, n in enumerate(out_names[:carried_count]) if k not in items]
    node.output.extend([*carried_names, *out_names[carried_count:], *[f"{ctx.name}/appended{k}" for k in sorted(items)]])
    for attr in node.attribute:
        if attr.name == "body":
            attr.g.CopyFrom(new_body)
    inner = NodeContext(ctx.importer, node, ctx.opset)
    results = region_loop(inner)
    kept_carried = iter(results[: len(carried_names)])
    scan_results = results[len(carried_names) : len(carried_names) + len(scans)]
    stacked = iter(results[len(carried_names) + len(scans) :])
    mapped: list[object] = [StackedSequence(with_prefix(ctx, ctx.any_input(2 + k), next(stacked), k)) if k in items else next(kept_carried) for k in range(carried_count)]
    return [*mapped, *scan_results]


def with_prefix(ctx: NodeContext, initial: SequenceValue, scan: SSAValue, k: int) -> SSAValue:
    """The loop's scan output after the sequence's initial elements (`items = [x]` before the
    loop), all stacked on axis 0."""
    if not len(initial):
        return scan
    first = [ctx.value(Unsqueeze, [item], suffix=f"/initial{k}_{i}", axes=[0]) for i, item in enumerate(initial.items)]
    return ctx.value(Concat, [*first, scan], suffix=f"/stacked{k}", axis=0)


def concat_stacked(ctx: NodeContext, sequence: StackedSequence) -> SSAValue:
    """ConcatFromSequence of a stacked sequence: the stack itself moved to `axis` (new_axis=1),
    or its iteration axis merged into `axis` (new_axis=0)."""
    stacked = sequence.stacked
    shape = list(stacked.type.get_shape())  # type: ignore[attr-defined]
    rank = len(shape) - 1  # of one element
    axis, new_axis = int(ctx.attr("axis")), int(ctx.attr("new_axis", 0))
    if new_axis:
        if not -rank - 1 <= axis <= rank:
            raise ctx.fail(f"axis {axis} is out of range for new_axis=1 on tensors of rank {rank}")
        axis %= rank + 1
        if axis == 0:
            return stacked
        order = [*range(1, axis + 1), 0, *range(axis + 1, rank + 1)]
        return ctx.value(Permute, [stacked], order=order)
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for tensors of rank {rank}")
    axis %= rank
    moved = stacked
    if axis:
        moved = ctx.value(Permute, [stacked], suffix="/iterations_to_axis", order=[*range(1, axis + 1), 0, *range(axis + 1, rank + 1)])
    trailing = shape[axis + 2 :]
    if any(d == DYN for d in trailing):
        from irforge.errors import IrforgeError

        raise IrforgeError(
            f"ConcatFromSequence of a sequence grown in a run-time loop, along axis {axis} of elements of shape {shape[1:]}: the dims after the axis must be static",
            where=ctx.where, fix="give static input shapes (--input_shape)", code="E195",
        )  # fmt: skip
    return ctx.value(Reshape, [moved], shape=[0] * axis + [-1] + [int(d) for d in trailing])
