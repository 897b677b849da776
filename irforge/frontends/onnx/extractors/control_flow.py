"""ONNX If and Loop, folded at import: the taken branch of an If whose condition is known is
imported in its place; a Loop whose trip count (and condition, every iteration) is known is
unrolled, its body imported once per iteration. Anything else is refused naming the node
(OpenVINO's If / Loop with bodies as regions are not in nn yet).

A body reads the values of the enclosing graph by name; its own names are scoped to one
import of it, so each iteration's values replace the previous iteration's, and its nodes are
renamed `<node>/iter<i>` so that layer names stay unique.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Unsqueeze
from irforge.errors import IrforgeError, NotConstantError
from irforge.frontends.onnx.registry import DEFAULT_DOMAINS, NodeContext, find_extractor, onnx_extractor

MAX_UNROLL = 256
"""Loops with more iterations are refused rather than unrolled into a huge graph."""


def nested_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from nested_nodes(attr.g)


def check_body(ctx: NodeContext, body: onnx.GraphProto) -> None:
    """The body's ops all have extractors (check_supported sees only the top graph)."""
    missing = sorted({n.op_type for n in nested_nodes(body) if find_extractor(n.domain if n.domain not in DEFAULT_DOMAINS else "", n.op_type) is None})
    if missing:
        raise IrforgeError(f"unsupported ONNX ops in a subgraph: {', '.join(missing)}", where=ctx.where, fix="add extractors for them (--extensions)", code="E190")


def import_body(ctx: NodeContext, body: onnx.GraphProto, bound: dict[str, SSAValue], suffix: str) -> list[SSAValue]:
    """Import the body's nodes with its inputs bound to `bound`; its outputs' values."""
    importer = ctx.importer
    check_body(ctx, body)
    importer.values.update(bound)
    for tensor in body.initializer:
        importer._initializers[tensor.name] = tensor  # read lazily by name, as the top graph's
        importer.values.pop(tensor.name, None)
    importer.used_names.update(name for node in body.node for name in node.input)
    importer.used_names.update(vi.name for vi in body.output)
    for node in body.node:
        renamed = onnx.NodeProto()
        renamed.CopyFrom(node)
        renamed.name = f"{node.name or importer.generated_name(node)}{suffix}"
        for out in node.output:
            importer.values.pop(out, None)  # a previous iteration's value of this name
        importer._import_node(renamed)
    return [importer.value(vi.name) for vi in body.output]


@onnx_extractor("If")
def if_(ctx: NodeContext) -> list[SSAValue]:
    condition = ctx.constant_input(0)
    if condition is None:
        raise NotConstantError(
            "If with a condition known only at run time is not supported (it is folded when the condition is constant)",
            ctx.node.input[0], where=ctx.where, fix="give static input shapes or freeze the inputs the condition depends on", code="E191",
        )  # fmt: skip
    branch = ctx.attr("then_branch") if bool(np.asarray(condition).reshape(-1)[0]) else ctx.attr("else_branch")
    return import_body(ctx, branch, {}, "")


def trip_count(ctx: NodeContext) -> int:
    if not ctx.has_input(0):
        raise IrforgeError("Loop without a trip count is not supported (only loops with a constant one are unrolled)", where=ctx.where, fix="export the loop with a constant trip count", code="E192")
    count = ctx.constant_input(0)
    if count is None:
        raise NotConstantError(
            "Loop with a trip count known only at run time is not supported (only constant ones are unrolled)",
            ctx.node.input[0], where=ctx.where, fix="give static input shapes so the trip count folds", code="E192",
        )  # fmt: skip
    count = int(np.asarray(count).reshape(-1)[0])
    if count > MAX_UNROLL:
        raise IrforgeError(f"Loop of {count} iterations is too long to unroll (at most {MAX_UNROLL})", where=ctx.where, fix="shorten the loop", code="E193")
    return count


def known_condition(ctx: NodeContext, value: SSAValue | None, tensor: str) -> bool:
    """The loop condition's value; a run-time one names `tensor` (the node's input, which
    may be frozen, or the body output computing it)."""
    if value is None:
        return True
    known = ctx.importer.constant_value(value)
    if known is None:
        raise NotConstantError(
            "Loop whose condition is known only at run time is not supported (it cannot be unrolled)",
            tensor, where=ctx.where, fix="export the loop with a constant condition", code="E194",
        )  # fmt: skip
    return bool(np.asarray(known).reshape(-1)[0])


@onnx_extractor("Loop")
def loop(ctx: NodeContext) -> list[SSAValue]:
    body: onnx.GraphProto = ctx.attr("body")
    count = trip_count(ctx)
    condition = ctx.optional_input(1)
    carried = [ctx.input(i) for i in range(2, ctx.num_inputs)]
    scans: list[list[SSAValue]] = [[] for _ in range(len(body.output) - 1 - len(carried))]
    for i in range(count):
        if not known_condition(ctx, condition, ctx.node.input[1] if i == 0 else body.output[0].name):
            break
        names = [vi.name for vi in body.input]
        bound = dict(zip(names, [ctx.constant(np.array(i, np.int64), f"/iter{i}/index"), condition or ctx.constant(np.array(True), f"/iter{i}/cond"), *carried]))
        outputs = import_body(ctx, body, {k: v for k, v in bound.items() if k}, f"/iter{i}")
        condition, carried = outputs[0], outputs[1 : 1 + len(carried)]
        for scan, value in zip(scans, outputs[1 + len(carried) :]):
            scan.append(ctx.value(Unsqueeze, [value], suffix=f"/iter{i}/scan", axes=[0]))
    if any(not scan for scan in scans):
        raise IrforgeError("Loop with scan outputs that runs no iteration is not supported (their shape is unknown)", where=ctx.where, fix="export the loop with at least one iteration", code="E195")
    stacked = [scan[0] if len(scan) == 1 else ctx.value(Concat, scan, suffix=f"/scan{k}", axis=0) for k, scan in enumerate(scans)]
    return [*carried, *stacked]
