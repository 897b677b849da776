"""One op to a sub-graph: the Model Optimizer's single-operation replacements.

- SquaredDifference: squared_diff(a, b) -> d = a - b; d * d (the guide's example of
  replacing one op by several; IR consumers that lack SquaredDifference take Sub and Mul).

    %y = nn.eltwise %a, %b {operation = "squared_diff", name = "sq"}
becomes
    %d = nn.eltwise %a, %b {operation = "sub", name = "sq/sub"}
    %y = nn.eltwise %d, %d {operation = "mul", name = "sq"}

These run after the pattern replacements (the walk meets a pattern's root before its inner
ops), so an MVN written with squared_diff is still recognised as a whole.
"""

from __future__ import annotations

from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irforge.dialects.nn.base import build
from irforge.dialects.nn.elementwise import Eltwise
from irforge.passes.patterns.affine import layer_name


class DecomposeSquaredDifference(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Eltwise, rewriter: PatternRewriter) -> None:
        if op.str_prop("operation") != "squared_diff":
            return
        name = layer_name(op, "squared_diff")
        diff = build(Eltwise, [op.lhs, op.rhs], operation="sub", name=f"{name}/sub")
        square = build(Eltwise, [diff.output, diff.output], operation="mul", name=name)
        rewriter.replace(op, [diff, square], [square.output])
