"""flatten-concats: a Concat read only by a Concat on the same axis is merged into it.

`concat(a, concat(b, c), d)` on one axis is `concat(a, b, c, d)`: Inception blocks written
as nested Concats (and the Concats convert-layout leaves after sinking transposes) become
one layer.

    %i = nn.concat %b, %c {axis = 1 : i64}
    %y = nn.concat %a, %i, %d {axis = 1 : i64}
becomes
    %y = nn.concat %a, %b, %c, %d {axis = 1 : i64}
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern

from irforge.dialects.nn.base import build
from irforge.dialects.nn.shape import Concat
from irforge.passes.canonicalize import CanonicalizePass
from irforge.passes.patterns.compose import layer_of
from irforge.passes.patterns.sink_permutes import op_props


def _axis(op: Concat) -> int:
    return op.int_prop("axis") % len(op.operand_shape(0))


class FlattenNestedConcat(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Concat):
            return
        axis = _axis(op)
        operands: list[SSAValue] = []
        merged = False
        for value in op.operands:
            inner = value.owner
            if isinstance(inner, Concat) and _axis(inner) == axis and all(use.operation is op for use in value.uses):
                operands.extend(inner.operands)
                merged = True
            else:
                operands.append(value)
        if not merged:
            return
        new = build(Concat, operands, **op_props(op), name=layer_of(op))
        rewriter.replace(op, new, [new.results[0]])


@dataclass(frozen=True)
class FlattenConcatsPass(ModulePass):
    name = "flatten-concats"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([FlattenNestedConcat()])).rewrite_module(op)
        CanonicalizePass(fold_constants=False).apply(ctx, op)
