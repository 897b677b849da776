"""TF2 control flow with function bodies: While / StatelessWhile loops that are not Keras RNN
layers as nn.loop, If / StatelessIf as nn.if (folded when the condition is constant).

`tf.while_loop` freezes (TF2) into a While node naming a `cond` and a `body` function of the
graph's library; its inputs are the loop variables' initial values, `while:k` the final
value of variable k. nn.loop has ONNX's semantics, so:

- the initial condition is `cond` inlined on the initial values, in the enclosing graph;
- the body region takes (iteration, condition, variables...) and yields (`cond` of the next
  values, the next values): `body` then `cond` inlined into the block;
- every variable is loop-carried (invariants pass through the body unchanged); one whose
  shape the body changes is imported again with those sizes dynamic.

Function bodies read nothing but their arguments, so a region needs no outer operands.
Only loops whose functions use ops with extractors (no TensorList, no nested loop) are
taken (`region_whiles`); the others stay refused with E363 (importer.check_supported).
Loops in TF1 frame form (Enter/Merge/Switch/NextIteration/Exit) are not imported this way.

If / StatelessIf (tf.cond frozen with lower_control_flow=False) take the condition and the
inputs both branch functions read; each branch becomes a region over those inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.ir import Block, SSAValue
from xdsl.utils.exceptions import VerifyException

from irforge.dialects.nn.control_flow import BOOL, INDEX, Yield, build_loop, merge_types
from irforge.frontends.graph_order import dependency_order
from irforge.frontends.tf.functions import _add
from irforge.frontends.tf.loops import is_loop_op
from irforge.frontends.tf.registry import EXTRACTORS, NodeContext, tf_extractor

WHILE_OPS = ("While", "StatelessWhile")


def _library(graph_def: Any) -> dict[str, Any]:
    return {f.signature.name: f for f in graph_def.library.function}


def _flat_call(graph_def: Any, function: str, inputs: list[str], scope: str) -> tuple[list[Any], list[str]]:
    """`function` inlined (nested calls too) as nodes named `<scope>/...` reading `inputs`;
    and the references of its results."""
    library = _library(graph_def)
    call = type(graph_def.node[0])() if graph_def.node else None
    assert call is not None
    call.name, call.op = scope, function
    call.input.extend(inputs)
    flat = type(graph_def)()
    _add(flat, call, library, 0)
    nodes = list(flat.node)
    results = nodes.pop()  # the IdentityN standing for the call
    assert results.op == "IdentityN" and results.name == scope
    return nodes, [i for i in results.input if not i.startswith("^")]


def region_whiles(graph_def: Any) -> set[str]:
    """The While nodes whose cond and body functions can be imported as an nn.loop region."""
    import irforge.frontends.tf.extractors  # noqa: F401  (registers the extractors)

    library = _library(graph_def)
    taken = set()
    for node in graph_def.node:
        if node.op not in WHILE_OPS:
            continue
        names = [node.attr["cond"].func.name, node.attr["body"].func.name]
        if any(name not in library for name in names):
            continue
        args = [f"{node.name}/arg{k}" for k in range(len([i for i in node.input if not i.startswith("^")]))]
        try:
            inner = [n for name in names for n in _flat_call(graph_def, name, args, f"{node.name}/{name}")[0]]
        except Exception:  # a function irforge cannot inline: the loop stays refused, with its reason
            continue
        if all(n.op in EXTRACTORS and not is_loop_op(n.op) for n in inner):
            taken.add(node.name)
    return taken


def _import_nodes(ctx: NodeContext, nodes: list[Any]) -> None:
    """Import inlined function nodes in dependency order (they may come in any order)."""
    by_name = {n.name: n for n in nodes}
    order, stuck = dependency_order({n.name: {i.lstrip("^").split(":")[0] for i in n.input} & set(by_name) for n in nodes})
    if stuck:
        raise ctx.fail(f"the loop's functions have a cycle through {', '.join(stuck[:3])}")
    for name in order:
        ctx.importer._import_node(by_name[name])


def _call(ctx: NodeContext, function: str, inputs: list[str], scope: str) -> list[str]:
    nodes, results = _flat_call(ctx.importer.graph_def, function, inputs, scope)
    _import_nodes(ctx, nodes)
    return results


def _returns(ctx: NodeContext, results: list[str], count: int, function: str) -> list[str]:
    """`results` if there are `count` of them: a cond returns one value, a body one per loop
    variable (a corrupt function library says otherwise)."""
    if len(results) != count:
        raise ctx.fail(f"function '{function}' returns {len(results)} values, the loop needs {count}",
                       fix="check the graph's function library (the cond returns one boolean, the body one value per loop variable)")
    return results


@tf_extractor(*WHILE_OPS)
def while_(ctx: NodeContext) -> list[SSAValue]:
    importer, node = ctx.importer, ctx.node
    cond, body = node.attr["cond"].func.name, node.attr["body"].func.name
    inits = [ctx.input(i) for i in range(ctx.num_inputs)]
    (start,) = [importer.value(r) for r in _returns(ctx, _call(ctx, cond, list(ctx.data_inputs), f"{node.name}/cond_init"), 1, cond)]
    types = [v.type for v in inits]
    block = Block()
    for _ in range(4):  # each pass can only make more sizes dynamic
        block = Block(arg_types=[INDEX, BOOL, *types])
        saved_block, saved_values = importer.builder.block, dict(importer.values)
        importer.builder.block = block
        try:
            args = [f"{node.name}/arg{k}" for k in range(len(inits))]
            importer.values.update(zip(args, block.args[2:]))
            nexts = _returns(ctx, _call(ctx, body, args, f"{node.name}/{body}"), len(inits), body)
            (more,) = _call(ctx, cond, nexts, f"{node.name}/{cond}")[:1]
            block.add_op(Yield(importer.value(more), *(importer.value(r) for r in nexts)))
        finally:
            importer.builder.block = saved_block
            importer.values.clear()
            importer.values.update(saved_values)
        yielded = [v.type for v in block.last_op.operands][1:]  # type: ignore[union-attr]
        try:
            merged = [merge_types(ctx.name, f"loop variable #{k}", t, y) for k, (t, y) in enumerate(zip(types, yielded))]
        except VerifyException as error:
            raise ctx.fail(str(error)) from None
        if merged == types:
            break
        types = merged
    try:
        op = build_loop(None, start, inits, len(inits), block, ctx.name)
    except VerifyException as error:
        raise ctx.fail(str(error).splitlines()[0]) from None
    importer.builder.block.add_op(op)
    return list(op.results)


IF_OPS = ("If", "StatelessIf")


def _branch(ctx: NodeContext, function: str, types: list, tag: str) -> Block:  # type: ignore[type-arg]
    """`function` imported into a block taking the If's inputs, ending with nn.yield of its results."""
    importer, node = ctx.importer, ctx.node
    block = Block(arg_types=types)
    saved_block, saved_values = importer.builder.block, dict(importer.values)
    importer.builder.block = block
    try:
        args = [f"{node.name}/{tag}_arg{k}" for k in range(len(types))]
        importer.values.update(zip(args, block.args))
        results = _call(ctx, function, args, f"{node.name}/{function}")
        block.add_op(Yield(*(importer.value(r) for r in results)))
    finally:
        importer.builder.block = saved_block
        importer.values.clear()
        importer.values.update(saved_values)
    return block


@tf_extractor(*IF_OPS)
def if_(ctx: NodeContext) -> list[SSAValue]:
    """TF2 If / StatelessIf (tf.cond frozen with lower_control_flow=False) as nn.if; a
    condition known at conversion time imports the branch taken only."""
    from irforge.dialects.nn.control_flow import build_if, is_bool_scalar
    from irforge.errors import IrforgeError

    node = ctx.node
    branches = [node.attr["then_branch"].func.name, node.attr["else_branch"].func.name]
    library = _library(ctx.importer.graph_def)
    inputs = [ctx.input(i) for i in range(1, ctx.num_inputs)]
    missing: set[str] = set()
    for name in branches:
        if name not in library:
            raise IrforgeError(f"{node.op} calls function '{name}', which the graph's function library does not hold", where=ctx.where, fix="freeze the graph with its function library", code="E360")
        nodes, _ = _flat_call(ctx.importer.graph_def, name, list(ctx.data_inputs[1:]), f"{node.name}/{name}")
        missing |= {n.op for n in nodes if n.op not in EXTRACTORS or is_loop_op(n.op)}
    if missing:
        raise IrforgeError(f"unsupported TensorFlow ops in the branches of {node.op} '{node.name}': {', '.join(sorted(missing))}", where=ctx.where, fix="make them custom layers (ir-extgen new --framework tf), or freeze with the condition known", code="E392")
    known = ctx.constant_input(0)
    if known is not None:  # fold: the taken branch inlined
        taken = branches[0] if bool(np.asarray(known).reshape(-1)[0]) else branches[1]
        return [ctx.importer.value(r) for r in _call(ctx, taken, list(ctx.data_inputs[1:]), f"{node.name}/{taken}")]
    condition = ctx.input(0)
    if not is_bool_scalar(condition.type):
        raise ctx.fail(f"{node.op} on a condition of type {condition.type} (only one bool value is supported)")
    types = [v.type for v in inputs]
    blocks = [_branch(ctx, name, types, tag) for name, tag in zip(branches, ("then", "else"))]
    try:
        op = build_if(condition, inputs, blocks[0], blocks[1], ctx.name)
    except VerifyException as error:
        raise ctx.fail(str(error).splitlines()[0]) from None
    ctx.importer.builder.block.add_op(op)
    return list(op.results)
