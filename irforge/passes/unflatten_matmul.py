"""unflatten-matmul: a MatMul between a Reshape that flattens the leading axes and one that
restores them runs on the unflattened tensor.

TensorFlow's Tensordot (every Keras Dense on a tensor of rank > 2) flattens [B.., K] to
[prod(B..), K], multiplies by the [K, N] kernel and reshapes the result to [B.., N]. A MatMul
broadcasts leading axes itself, so the two Reshapes are not needed; without them an NHWC
Dense is a MatMul on the channel axis that convert-layout's transposes can pass next to.

    %f = nn.reshape %x {shape = array<i64: 16, 32>} : (tensor<1x16x32xf32>) -> tensor<16x32xf32>
    %m = nn.matmul %f, %w : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
    %y = nn.reshape %m {shape = array<i64: 1, 16, 64>} : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
becomes
    %y = nn.matmul %x, %w : (tensor<1x16x32xf32>, tensor<32x64xf32>) -> tensor<1x16x64xf32>
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern

from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.linear import MatMul
from irforge.dialects.nn.shape import Reshape
from irforge.passes.patterns.compose import layer_of


class MatMulBetweenFlattenAndRestore(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Reshape) or not isinstance(matmul := op.operands[0].owner, MatMul):
            return
        flatten = matmul.operands[0].owner
        if not isinstance(flatten, Reshape) or matmul.bool_prop("transpose_a") or len(tuple(matmul.results[0].uses)) != 1:
            return
        x, b = flatten.operands[0], matmul.operands[1]
        x_shape, b_shape = tuple(x.type.get_shape()), tuple(b.type.get_shape())  # type: ignore[attr-defined]
        out = tuple(op.output.type.get_shape())  # type: ignore[attr-defined]
        if len(x_shape) < 3 or len(b_shape) != 2 or DYN in x_shape + out:
            return
        lead, k = x_shape[:-1], x_shape[-1]
        n = b_shape[0] if matmul.bool_prop("transpose_b") else b_shape[1]
        if tuple(flatten.output.type.get_shape()) != (math.prod(lead), k) or out != (*lead, n):  # type: ignore[attr-defined]
            return
        new = build(MatMul, [x, b], transpose_b=matmul.bool_prop("transpose_b"), name=layer_of(op))
        rewriter.replace(op, new, [new.results[0]])
        rewriter.erase(matmul)


@dataclass(frozen=True)
class UnflattenMatMulPass(ModulePass):
    name = "unflatten-matmul"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([MatMulBetweenFlattenAndRestore()])).rewrite_module(op)
