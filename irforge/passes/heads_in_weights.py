"""heads-in-weights: multi-head attention's head split and merge moved into the projection
weights, so no Transpose is left around the attention.

Attention wants q, k, v as [B, H, S, D]; exporters project to [B, S, H*D], reshape to
[B, S, H, D] and transpose, and undo it after (transpose back, reshape to [B, S, H*D],
project). A constant projection can produce the head-major layout itself: with
W' = W as [C, H, D] moved to [H, C, D], `x[B, 1, S, C] @ W'` is the transposed tensor, and
`a[B, H, S, D] @ Wo'[H, D, N]` summed over H is the output projection of the merged heads.

    %m = nn.matmul %x, %w : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
    %r = nn.reshape %m {shape = array<i64: 1, 16, 4, 8>}
    %q = nn.permute %r {order = array<i64: 0, 2, 1, 3>} : ... -> tensor<1x4x16x8xf32>
becomes
    %u = nn.reshape %x {shape = array<i64: 1, 1, 16, 32>}
    %q = nn.matmul %u, %w_heads : (tensor<1x1x16x32xf32>, tensor<4x32x8xf32>) -> tensor<1x4x16x8xf32>
and
    %t = nn.permute %a {order = array<i64: 0, 2, 1, 3>} : (tensor<1x4x16x8xf32>) -> tensor<1x16x4x8xf32>
    %r = nn.reshape %t {shape = array<i64: 1, 16, 32>}
    %y = nn.matmul %r, %wo : (tensor<1x16x32xf32>, tensor<32x32xf32>) -> tensor<1x16x32xf32>
becomes
    %p = nn.matmul %a, %wo_heads : (tensor<1x4x16x8xf32>, tensor<4x8x32xf32>) -> tensor<1x4x16x32xf32>
    %y = nn.reduce %p {operation = "sum", axes = array<i64: 1>, keep_dims = false}

A bias added to the projection (before the reshape, [H*D], or after it, [H, D]) goes along as
[H, 1, D]. Only constant projections of rank-3 inputs, used once, change.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern

from irforge.backends.reference.interpreter import constant_value
from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Eltwise
from irforge.dialects.nn.linear import MatMul
from irforge.dialects.nn.reduce import Reduce
from irforge.dialects.nn.shape import Permute, Reshape
from irforge.model import store_of
from irforge.passes.canonicalize import CanonicalizePass
from irforge.passes.patterns.affine import add_constant
from irforge.passes.patterns.compose import layer_of

HEAD_SWAP = (0, 2, 1, 3)


def shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def single_use(value: SSAValue) -> bool:
    return len(tuple(value.uses)) == 1


def const_array(value: SSAValue) -> np.ndarray | None:
    owner = value.owner
    return constant_value(owner, store_of(owner)) if isinstance(owner, Constant) else None


def projection(value: SSAValue) -> tuple[SSAValue, np.ndarray, MatMul] | None:
    """(x, W [C, N]) when `value` is a single-use MatMul of a rank-3 x by a constant matrix."""
    op = value.owner
    if not isinstance(op, MatMul) or op.bool_prop("transpose_a") or not single_use(value):
        return None
    w = const_array(op.operands[1])
    if w is None or w.ndim != 2 or len(shape(op.operands[0])) != 3:
        return None
    return op.operands[0], (w.T if op.bool_prop("transpose_b") else w), op


def bias_of(value: SSAValue) -> tuple[SSAValue, np.ndarray | None]:
    """(what the bias is added to, the bias) for a single-use sum with a constant; else (value, None)."""
    op = value.owner
    if isinstance(op, Eltwise) and op.str_prop("operation") == "sum" and single_use(value):
        for k in (0, 1):
            b = const_array(op.operands[1 - k])
            if b is not None:
                return op.operands[k], b
    return value, None


class SplitHeadsInWeights(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Permute) or tuple(op.ints("order")) != HEAD_SWAP:
            return
        split, bias_after = bias_of(op.operands[0])
        reshape = split.owner
        if not isinstance(reshape, Reshape) or not single_use(split):
            return
        flat, bias_before = bias_of(reshape.operands[0])
        found = projection(flat)
        b, s, h, d = shape(split) if len(shape(split)) == 4 else (DYN,) * 4
        if found is None or DYN in (b, s, h, d) or (bias_before is not None and bias_after is not None):
            return
        x, w, matmul = found
        if shape(x)[:2] != (b, s) or w.shape[1] != h * d:
            return
        bias = bias_after if bias_after is not None else bias_before
        if bias is not None and bias.size != h * d:
            return  # a bias that broadcasts over more than the heads' features
        name = layer_of(op)
        heads = add_constant(w.reshape(-1, h, d).transpose(1, 0, 2), w.dtype, op, f"{name}/heads")
        unsqueezed = build(Reshape, [x], shape=[b, 1, s, shape(x)[2]], special_zero=False, name=f"{name}/heads_input")
        product = build(MatMul, [unsqueezed.output, heads.output], name=name)
        new: list[Operation] = [heads, unsqueezed, product]
        if bias is not None:
            shift = add_constant(bias.reshape(h, 1, d), bias.dtype, op, f"{name}/bias")
            new += [shift, build(Eltwise, [product.results[0], shift.output], operation="sum", name=f"{name}/bias")]
        rewriter.replace(op, new, [new[-1].results[0]])
        for dead in (split.owner, reshape, flat.owner, matmul):
            if dead is not None and dead.parent is not None and all(not r.uses for r in dead.results):
                rewriter.erase(dead)


class MergeHeadsInWeights(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MatMul):
            return
        reshape = op.operands[0].owner
        if not isinstance(reshape, Reshape) or not single_use(op.operands[0]) or not isinstance(permute := reshape.operands[0].owner, Permute):
            return
        w = const_array(op.operands[1])
        if w is None or w.ndim != 2 or op.bool_prop("transpose_a") or tuple(permute.ints("order")) != HEAD_SWAP or not single_use(reshape.operands[0]):
            return
        w = w.T if op.bool_prop("transpose_b") else w
        heads = permute.operands[0]
        b, h, s, d = shape(heads) if len(shape(heads)) == 4 else (DYN,) * 4
        if DYN in (b, h, s, d) or shape(op.operands[0]) != (b, s, h * d) or w.shape[0] != h * d:
            return
        name = layer_of(op)
        weights = add_constant(w.reshape(h, d, -1), w.dtype, op, f"{name}/heads")
        product = build(MatMul, [heads, weights.output], name=f"{name}/heads")
        total = build(Reduce, [product.results[0]], operation="sum", axes=[1], keep_dims=False, name=name)
        rewriter.replace(op, [weights, product, total], [total.output])
        rewriter.erase(reshape)
        rewriter.erase(permute)


@dataclass(frozen=True)
class HeadsInWeightsPass(ModulePass):
    name = "heads-in-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([SplitHeadsInWeights(), MergeHeadsInWeights()])).rewrite_module(op)
        CanonicalizePass(fold_constants=False).apply(ctx, op)
