"""MXNet dot, batch_dot, Embedding and the reductions mean, sum, max, min, prod."""

from __future__ import annotations

from xdsl.dialects.builtin import i32
from xdsl.ir import SSAValue

from irforge.dialects.nn import Clamp, Convert, Gather, MatMul, Reduce, Reshape
from irforge.dialects.nn.base import product
from irforge.frontends.mxnet.registry import NodeContext, mxnet_extractor


@mxnet_extractor("dot")
def dot(ctx: NodeContext) -> SSAValue:
    """dot contracts the last axis of a with the first axis of b (a tensordot, not a
    batched matmul): a [..., K] . b [K, ...] -> [..., ...]."""
    a, b = ctx.shape(0), ctx.shape(1)
    ta, tb = ctx.attrs.bool("transpose_a", False), ctx.attrs.bool("transpose_b", False)
    ctx.attrs.str("forward_stype", "None")
    if len(a) == 2 and len(b) == 2:
        return ctx.value(MatMul, [ctx.input(0), ctx.input(1)], transpose_a=ta, transpose_b=tb)
    if ta or tb:
        raise ctx.fail(f"transpose_a/transpose_b on operands of rank {len(a)} and {len(b)} are not supported")
    if a[-1] != b[0]:
        raise ctx.fail(f"cannot contract {list(a)} with {list(b)}")
    left = ctx.value(Reshape, [ctx.input(0)], suffix="/a2d", shape=[product(a[:-1]), a[-1]], special_zero=False) if len(a) != 2 else ctx.input(0)
    right = ctx.value(Reshape, [ctx.input(1)], suffix="/b2d", shape=[b[0], product(b[1:])], special_zero=False) if len(b) != 2 else ctx.input(1)
    y = ctx.value(MatMul, [left, right], suffix="/matmul")
    return ctx.value(Reshape, [y], shape=[*a[:-1], *b[1:]], special_zero=False)


@mxnet_extractor("batch_dot")
def batch_dot(ctx: NodeContext) -> SSAValue:
    ctx.attrs.str("forward_stype", "None")
    if len(ctx.shape(0)) != 3 or len(ctx.shape(1)) != 3:
        raise ctx.fail(f"batch_dot takes rank-3 operands, got {list(ctx.shape(0))} and {list(ctx.shape(1))}")
    return ctx.value(
        MatMul,
        [ctx.input(0), ctx.input(1)],
        transpose_a=ctx.attrs.bool("transpose_a", False),
        transpose_b=ctx.attrs.bool("transpose_b", False),
    )


@mxnet_extractor("Embedding", weights=(1,))
def embedding(ctx: NodeContext) -> SSAValue:
    """weight[clip(int(x), 0, input_dim - 1)]: MXNet's indices are floats, clipped."""
    rows, width = ctx.attrs.int("input_dim", 0), ctx.attrs.int("output_dim", 0)
    ctx.attrs.str("sparse_grad", "False")
    if ctx.attrs.str("dtype", "float32") != "float32":
        raise ctx.fail(f"dtype {ctx.attrs.str('dtype', '')} is not supported")
    table = ctx.weight(1, [rows, width])
    clipped = ctx.value(Clamp, [ctx.input(0)], suffix="/clip", min=0.0, max=float(rows - 1))
    indices = ctx.value(Convert, [clipped], suffix="/indices", destination_type=i32)
    return ctx.value(Gather, [table, indices], axis=0)


REDUCTIONS = {"mean": "mean", "sum": "sum", "sum_axis": "sum", "max": "max", "max_axis": "max", "min": "min", "min_axis": "min", "prod": "prod", "nansum": "sum"}


@mxnet_extractor(*REDUCTIONS)
def reduce(ctx: NodeContext) -> SSAValue:
    if ctx.op == "nansum":
        raise ctx.fail("nansum is not supported")
    rank = len(ctx.shape(0))
    axes = [a % rank for a in ctx.attrs.ints("axis", []) or []]
    if ctx.attrs.bool("exclude", False):
        axes = [a for a in range(rank) if a not in axes]
    elif not axes:
        axes = list(range(rank))
    keep = ctx.attrs.bool("keepdims", False)
    if not axes:
        return ctx.value(Reshape, [ctx.input(0)], shape=list(ctx.shape(0)), special_zero=False)
    if len(axes) == rank and not keep:  # MXNet (without numpy semantics) gives shape (1,)
        y = ctx.value(Reduce, [ctx.input(0)], suffix="/reduce", operation=REDUCTIONS[ctx.op], axes=axes, keep_dims=True)
        return ctx.value(Reshape, [y], shape=[1], special_zero=False)
    return ctx.value(Reduce, [ctx.input(0)], operation=REDUCTIONS[ctx.op], axes=axes, keep_dims=keep)

