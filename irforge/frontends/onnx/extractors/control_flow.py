"""ONNX If and Loop. Folded at import where their control is known: the taken branch of an
If whose condition is constant is imported in its place; a Loop whose trip count (and
condition, every iteration) is constant is unrolled, its body imported once per iteration, up
to MAX_UNROLL iterations. Anything else becomes `nn.if` / `nn.loop` with the ONNX subgraphs
imported as their body regions (`region_import.py`).

When unrolling, a body reads the values of the enclosing graph by name; its own names are
scoped to one import of it, so each iteration's values replace the previous iteration's, and
its nodes are renamed `<node>/iter<i>` so that layer names stay unique.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import Block, Operation, SSAValue

from irforge.dialects.nn import Concat, Unsqueeze
from irforge.dialects.nn.control_flow import BOOL, INDEX, build_if, build_loop, merge_types
from irforge.errors import IrforgeError, NotConstantError
from irforge.frontends.onnx.region_import import bind_outer, import_body, import_region
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.frontends.onnx.sequence_scan import appended_items, scan_rewritten
from irforge.frontends.onnx.sequences import BranchStructure, is_structured

MAX_UNROLL = 256
"""Loops with more iterations stay nn.loop rather than being unrolled into a huge graph."""


class NotUnrollable(Exception):
    """The loop's control is not known at import: it stays an nn.loop."""


@onnx_extractor("If")
def if_(ctx: NodeContext) -> list[SSAValue]:
    condition = ctx.constant_input(0)
    if condition is not None:
        if np.asarray(condition).size != 1:
            raise ctx.fail(f"the condition has {np.asarray(condition).size} values (shape {list(np.shape(condition))}); If takes one boolean")
        branch = ctx.attr("then_branch") if bool(np.asarray(condition).reshape(-1)[0]) else ctx.attr("else_branch")
        return import_body(ctx, branch, {}, "")
    # sequences of one length in both branches: one If output per element (sequences.py)
    then_shape, else_shape = BranchStructure(), BranchStructure()
    then_block, then_outer = import_region(ctx, ctx.attr("then_branch"), [], [], then_shape.flatten)
    else_block, else_outer = import_region(ctx, ctx.attr("else_branch"), [], [], else_shape.flatten)
    if then_shape.shapes != else_shape.shapes:
        raise structure_needs_constant(ctx, [0], f"its branches give sequences / optionals of different structure ({then_shape.shapes} and {else_shape.shapes})")
    inputs = then_outer + [v for v in else_outer if v not in then_outer]
    bind_outer(then_block, inputs)
    bind_outer(else_block, inputs)
    op = checked(ctx, lambda: build_if(ctx.input(0), inputs, then_block, else_block, ctx.name), "E191")
    ctx.importer.builder.block.add_op(op)
    return then_shape.rebuild(list(op.results))  # type: ignore[return-value]


def structured_type(vi: onnx.ValueInfoProto) -> bool:
    return vi.type.WhichOneof("value") in ("sequence_type", "optional_type")


def structure_needs_constant(ctx: NodeContext, inputs: list[int], why: str) -> IrforgeError:
    """E195: the node would carry a sequence/optional through an OpenVINO If/Loop, which has
    no such type; names the first of `inputs` (condition, trip count) that is not constant,
    so that freezing it folds or unrolls the node."""
    what = f"{why}, and OpenVINO has no sequence type: the node must fold or unroll at conversion time"
    fix = "make the condition / trip count constants of the model (freeze the inputs they come from)"
    unknown = [i for i in inputs if ctx.has_input(i) and ctx.constant_input(i) is None]
    if unknown:
        return NotConstantError(f"{what}, which needs '{ctx.node.input[unknown[0]]}' known", ctx.node.input[unknown[0]], where=ctx.where, fix=fix, code="E195")
    return IrforgeError(f"{what} (its condition depends on data, or it runs more than {MAX_UNROLL} times)", where=ctx.where, fix=fix, code="E195")


def checked(ctx: NodeContext, make, code: str):  # type: ignore[no-untyped-def]
    """What `make` builds; bodies that do not verify (branches of different ranks, a carried
    value changing rank) are an error naming the node: E191 for If, E194 for Loop."""
    from xdsl.utils.exceptions import VerifyException

    try:
        return make()
    except VerifyException as error:
        raise IrforgeError(f"cannot express this node as OpenVINO If/Loop: {error}", where=ctx.where, fix="export the model so that both branches / every iteration give tensors of one rank and element type", code=code) from None


def constant_trip_count(ctx: NodeContext) -> int | None:
    """The trip count when it is known and small enough to unroll, else None."""
    if not ctx.has_input(0):
        return None
    count = ctx.constant_input(0)
    if count is None:
        return None
    count = np.asarray(count)
    if count.dtype.kind not in "iu" or count.size != 1:
        # ONNX's M is an int64 scalar: a float (NaN, inf) or a list has no trip count to read
        raise ctx.fail(f"the trip count M must be one int64 value, got {count.dtype} of shape {list(count.shape)}",
                       fix="give Loop's first input as an int64 scalar")
    value = int(count.reshape(-1)[0])
    return value if value <= MAX_UNROLL else None


def known_condition(ctx: NodeContext, value: SSAValue | None) -> bool:
    if value is None:
        return True
    known = ctx.importer.constant_value(value)
    if known is None:
        raise NotUnrollable
    if np.asarray(known).size != 1:  # a condition is one boolean
        raise ctx.fail(f"the loop condition has {np.asarray(known).size} values, one boolean is needed")
    return bool(np.asarray(known).reshape(-1)[0])


@onnx_extractor("Loop")
def loop(ctx: NodeContext) -> list[SSAValue]:
    count = constant_trip_count(ctx)
    if count is not None:
        importer = ctx.importer
        mark, values, names = importer.builder.block.last_op, dict(importer.values), importer._names.copy()
        try:
            return unrolled(ctx, count)
        except NotUnrollable:  # a condition computed from data: undo the iterations imported so far
            rollback(importer.builder.block, mark)
            importer.values.clear()
            importer.values.update(values)
            importer._names = names  # the layer names generated for them are free again
    return region_loop(ctx)


def rollback(block: Block, mark: Operation | None) -> None:
    """Erase the ops of `block` after `mark` (all of them when None), last first."""
    ops = []
    op = mark.next_op if mark is not None else block.first_op
    while op is not None:
        ops.append(op)
        op = op.next_op
    for op in reversed(ops):
        block.erase_op(op)


def unrolled(ctx: NodeContext, count: int) -> list[SSAValue]:
    body: onnx.GraphProto = ctx.attr("body")
    condition = ctx.optional_input(1)
    carried = [ctx.any_input(i) for i in range(2, ctx.num_inputs)]  # sequences too (sequences.py)
    scans: list[list[SSAValue]] = [[] for _ in range(len(body.output) - 1 - len(carried))]
    for i in range(count):
        if not known_condition(ctx, condition):
            break
        names = [vi.name for vi in body.input]
        bound = dict(zip(names, [ctx.constant(np.array(i, np.int64), f"/iter{i}/index"), condition or ctx.constant(np.array(True), f"/iter{i}/cond"), *carried]))
        outputs = import_body(ctx, body, {k: v for k, v in bound.items() if k}, f"/iter{i}")
        condition, carried = outputs[0], outputs[1 : 1 + len(carried)]
        for scan, value in zip(scans, outputs[1 + len(carried) :]):
            if is_structured(value):
                raise IrforgeError("a Loop's scan output is a sequence or optional (ONNX allows only tensors there)", where=ctx.where, fix="check the model with onnx.checker", code="E188")
            scan.append(ctx.value(Unsqueeze, [value], suffix=f"/iter{i}/scan", axes=[0]))
    if any(not scan for scan in scans):
        raise NotUnrollable  # no iteration: nn.loop gives the empty scan outputs their shape
    stacked = [scan[0] if len(scan) == 1 else ctx.value(Concat, scan, suffix=f"/scan{k}", axis=0) for k, scan in enumerate(scans)]
    return [*carried, *stacked]


def body_region(ctx: NodeContext, body: onnx.GraphProto, types: list, names: list[str]) -> tuple[Block, list[SSAValue]]:  # type: ignore[type-arg]
    """The body as a region; a body op that needs a value known at conversion time which
    changes per iteration (a Slice starting at the iteration number) makes the loop one to
    unroll: the error then names the trip count or initial condition that is not constant
    (freezing it unrolls the loop)."""
    try:
        return import_region(ctx, body, types, names)
    except NotConstantError as error:
        unknown = [i for i in (0, 1) if ctx.has_input(i) and ctx.constant_input(i) is None]
        if not unknown:
            raise
        raise NotConstantError(
            f"this Loop must be unrolled, which needs its trip count and condition known at conversion time: its body needs a constant ({error.what})",
            ctx.node.input[unknown[0]], where=ctx.where, fix="make the trip count and initial condition constants of the model (initializers), so that the loop unrolls", code="E193",
        ) from None  # fmt: skip


def region_loop(ctx: NodeContext) -> list[SSAValue]:
    """The Loop as nn.loop, its body imported as the region. A carried value whose shape
    the body changes is imported again with those sizes dynamic."""
    body: onnx.GraphProto = ctx.attr("body")
    trip, condition = ctx.optional_input(0), ctx.optional_input(1)
    if trip is None and condition is None:
        raise IrforgeError("Loop without a trip count and without a condition is not supported (it never stops)", where=ctx.where, fix="export the loop with a trip count or a condition", code="E192")
    items = appended_items(ctx)
    if items:  # a list appended to once per iteration: a scan output (sequence_scan.py)
        return scan_rewritten(ctx, items)  # type: ignore[return-value]
    if any(is_structured(ctx.any_input(i)) for i in range(2, ctx.num_inputs)) or any(structured_type(vi) for vi in body.output):
        raise structure_needs_constant(ctx, [0, 1], "it carries a sequence or optional")
    carried = [ctx.input(i) for i in range(2, ctx.num_inputs)]
    names = [vi.name for vi in body.input]
    types = [v.type for v in carried]
    for _ in range(4):  # each pass can only make more sizes dynamic
        block, outer = body_region(ctx, body, [INDEX, BOOL, *types], names)
        yielded = [v.type for v in block.last_op.operands][1 : 1 + len(carried)]  # type: ignore[union-attr]
        merged = [checked(ctx, lambda t=t, y=y: merge_types(ctx.name, "a loop-carried value", t, y), "E194") for t, y in zip(types, yielded)]
        if merged == types:
            break
        types = merged
        rollback(block, None)
    bind_outer(block, outer)
    op = checked(ctx, lambda: build_loop(trip, condition, [*carried, *outer], len(carried), block, ctx.name), "E194")
    ctx.importer.builder.block.add_op(op)
    return list(op.results)
