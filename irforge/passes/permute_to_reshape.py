"""permute-to-reshape: a Permute that only moves axes of size 1 is a Reshape.

Moving size-1 axes does not change the order of the elements in memory, so such a transpose
is a reshape (which canonicalize then composes with its neighbours). Squeeze-excite blocks
of an NHWC graph keep a transpose on each [1, 1, 1, C] tensor after convert-layout; as a
Reshape it costs nothing and often folds away.

    %t = nn.permute %x {order = array<i64: 0, 3, 1, 2>} : (tensor<1x1x1x8xf32>) -> tensor<1x8x1x1xf32>
becomes
    %t = nn.reshape %x {shape = array<i64: 1, 8, 1, 1>} : (tensor<1x1x1x8xf32>) -> tensor<1x8x1x1xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern

from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.shape import Permute, Reshape
from irforge.passes.canonicalize import CanonicalizePass
from irforge.passes.patterns.compose import layer_of


def moves_only_unit_axes(shape: tuple[int, ...], order: tuple[int, ...]) -> bool:
    """True when the axes longer than 1 keep their relative order under `order`."""
    kept = [axis for axis in order if shape[axis] != 1]
    return kept == sorted(kept)


class PermuteOfUnitAxesToReshape(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Permute):
            return
        shape = op.operand_shape(0)
        out = tuple(op.output.type.get_shape())  # type: ignore[attr-defined]
        if DYN in shape or not moves_only_unit_axes(shape, op.ints("order")):
            return
        new = build(Reshape, [op.operands[0]], shape=list(out), special_zero=False, name=layer_of(op))
        rewriter.replace(op, new, [new.output])


@dataclass(frozen=True)
class PermuteToReshapePass(ModulePass):
    name = "permute-to-reshape"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([PermuteOfUnitAxesToReshape()])).rewrite_module(op)
        CanonicalizePass(fold_constants=False).apply(ctx, op)
