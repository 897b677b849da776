"""Importing an ONNX subgraph (If branch, Loop body): inline into the current block (for
folding and unrolling) or as the block of an `nn.if` / `nn.loop` region.

A region is isolated from above: the values of the enclosing graphs that the subgraph reads
by name (ONNX's implicit outer-scope references) become block arguments, bound to explicit
operands of the op (`bind_outer`), except constants, which are copied into the body (so
that they still fold there and OpenVINO sees them as body Constants).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import onnx
from xdsl.ir import Attribute, Block, BlockArgument, SSAValue

from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.control_flow import Yield
from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import DEFAULT_DOMAINS, NodeContext, find_extractor


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
    return [importer.any_value(vi.name) for vi in body.output]  # sequences too (sequences.py)


def import_region(ctx: NodeContext, body: onnx.GraphProto, arg_types: Sequence[Attribute], arg_names: Sequence[str], flatten: Callable[[list], list[SSAValue]] | None = None) -> tuple[Block, list[SSAValue]]:  # type: ignore[type-arg]
    """`body` imported into a new block whose arguments (of `arg_types`) are the subgraph's
    inputs `arg_names`, ended by nn.yield of its outputs (through `flatten`, which turns
    sequences into their elements: sequences.py); and the outer values it reads, in order of
    first use (not yet arguments: see `bind_outer`)."""
    importer = ctx.importer
    block = Block(arg_types=list(arg_types))
    saved_block, saved_values = importer.builder.block, dict(importer.values)
    importer.builder.block = block
    try:
        bound = {name: arg for name, arg in zip(arg_names, block.args) if name}
        outputs = import_body(ctx, body, bound, "")
        if flatten is not None:
            outputs = flatten(outputs)
        if not all(isinstance(v, SSAValue) for v in outputs):
            raise IrforgeError(
                "a sequence or optional value leaves a run-time If/Loop body, and OpenVINO has no sequence type",
                where=ctx.where, fix="make the condition / trip count constants of the model so that the node folds or unrolls", code="E195",
            )  # fmt: skip
        block.add_op(Yield(*outputs))
    finally:  # the subgraph's names are its own: the enclosing graph's values come back
        importer.builder.block = saved_block
        importer.values.clear()
        importer.values.update(saved_values)
    return block, outer_values(importer, block)


def defined_in(value: SSAValue, block: Block) -> bool:
    if isinstance(value, BlockArgument):
        return value.block is block
    return value.owner.parent_block() is block  # type: ignore[union-attr]


def outer_values(importer, block: Block) -> list[SSAValue]:  # type: ignore[no-untyped-def]
    """The values from outside `block` that its ops read; constants among them are copied
    into the block instead (and their uses redirected)."""
    outer: list[SSAValue] = []
    copies: dict[SSAValue, SSAValue] = {}
    for op in list(block.ops):
        for index, value in enumerate(op.operands):
            if defined_in(value, block):
                continue
            if isinstance(value.owner, Constant):
                if value not in copies:
                    copy = value.owner.clone()
                    block.insert_op_before(copy, block.first_op)  # type: ignore[arg-type]
                    copies[value] = copy.output
                    known = importer.constant_value(value)
                    if known is not None:
                        importer.constants[copy.output] = known
                op.operands[index] = copies[value]
            elif value not in outer:
                outer.append(value)
    return outer


def bind_outer(block: Block, outer: Sequence[SSAValue]) -> None:
    """Append a block argument per value of `outer` and make the block read it instead."""
    for value in outer:
        arg = block.insert_arg(value.type, len(block.args))
        for op in block.ops:
            for index, operand in enumerate(op.operands):
                if operand is value:
                    op.operands[index] = arg
