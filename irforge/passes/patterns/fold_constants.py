"""Constant folding: an `nn` op whose operands are all constants becomes constants.

The values come from the op's reference kernel, so folding is exactly as correct as the
reference interpreter. Small results are inlined, larger ones become weight-store entries;
results over the folding budget (`irforge/fold_budget.py`) are left as the ops that make them.

    %a = nn.constant dense<[1, 2]> : tensor<2xi64>
    %b = nn.eltwise %a, %a {operation = "mul"} : ...
becomes
    %b = nn.constant dense<[1, 4]> : tensor<2xi64>

INT8 weights' decompression (an i8/u8 constant converted to float) is left as it is, as
OpenVINO keeps it, so an INT8 model stays INT8.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irforge.backends.reference import constant_value, evaluate
from irforge.builder import constant_op
from irforge.dialects.nn.base import NNOp
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.quantize import is_weight_decompression
from irforge.fold_budget import fold_within_budget
from irforge.model import store_of


def folded_constants(op: NNOp, producers: Sequence[Constant], hint: str) -> list[Constant] | None:
    """Constants holding `op`'s results computed from its constant `producers`.

    None when a result is over the folding budget: the op then computes it at run time.
    """
    store = store_of(op)
    inputs = [constant_value(p, store) for p in producers]
    outputs = fold_within_budget(op.result_types, lambda: evaluate(op, inputs))
    if outputs is None:
        return None
    return [constant_op(array, store, hint) for array in outputs]


class FoldConstantOperands(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, NNOp) or isinstance(op, Constant) or not op.operands or is_weight_decompression(op):
            return
        producers = [v.owner for v in op.operands]
        if not all(isinstance(p, Constant) for p in producers):
            return
        hint = op.layer_name.data if op.layer_name is not None else op.name.removeprefix("nn.")
        new_ops = folded_constants(op, producers, hint)  # type: ignore[arg-type]
        if new_ops is not None:
            rewriter.replace(op, new_ops, [c.output for c in new_ops])
