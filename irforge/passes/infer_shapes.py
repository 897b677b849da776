"""infer-shapes: recompute every `nn` result type from its operands, in program order.

Each op's `infer_shapes` gives the result types; a result whose type differs is retyped,
and the function signature follows its returned values. Used after changing input shapes
(set-shapes) and by importers that create ops before all shapes are known.

    func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<?x?x?x?xf32> {
      %y = nn.relu %x : (tensor<1x3x8x8xf32>) -> tensor<?x?x?x?xf32>
    becomes
    func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
      %y = nn.relu %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irforge.dialects.nn.base import NNOp


def sync_signature(func: FuncOp) -> bool:
    """Make the function's result types those of its returned values."""
    ret = func.body.block.last_op
    if not isinstance(ret, ReturnOp):
        return False
    outputs = [v.type for v in ret.arguments]
    if list(func.function_type.outputs) == outputs:
        return False
    func.function_type = FunctionType.from_lists(func.function_type.inputs, outputs)
    return True


def infer_function(func: FuncOp) -> bool:
    """Retype the results of `func`'s ops in order; returns whether anything changed."""
    changed = False
    for op in func.body.walk():
        if isinstance(op, NNOp):
            for result, new_type in zip(op.results, op.infer_shapes(), strict=True):
                if result.type != new_type:
                    Rewriter.replace_value_with_new_type(result, new_type)
                    changed = True
    return sync_signature(func) or changed


@dataclass(frozen=True)
class InferShapesPass(ModulePass):
    name = "infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if isinstance(func, FuncOp):
                infer_function(func)
