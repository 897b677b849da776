"""set-shapes: override input shapes and propagate them through the model.

`shapes` lists `name[d0,d1,...]` per input (comma-separated; `-1` or `?` for a size known
only at run time; a lone `[...]` when the model has one input). Inputs are matched by
their `nn.name`, else by their SSA name. Every op's result type is then recomputed in
program order; an op that cannot take its new input shapes (typically a Reshape to fixed
sizes) stops the propagation with an error naming it, like the Model Optimizer's
"Stopped shape/value propagation at node".

    // set-shapes{shapes="x[2,3,16,16]"}
    func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32> {
      %r = nn.relu %x : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
becomes
    func.func @main(%x: tensor<2x3x16x16xf32>) -> tensor<2x3x16x16xf32> {
      %r = nn.relu %x : (tensor<2x3x16x16xf32>) -> tensor<2x3x16x16xf32>
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from irforge.dialects.nn.base import DYN, NNOp
from irforge.errors import IrforgeError
from irforge.model import first_line, input_names, main_function
from irforge.passes.infer_shapes import sync_signature

_ENTRY = re.compile(r"\s*([^\[\],]*?)\s*\[([^\]]*)\]\s*(,|$)")


def parse_shape_spec(text: str) -> dict[str, list[int]]:
    """`a[1,3,8,8],b[1,10]` -> {'a': [1, 3, 8, 8], 'b': [1, 10]} ('' for a nameless one)."""
    shapes: dict[str, list[int]] = {}
    position = 0
    for match in _ENTRY.finditer(text):
        if match.start() != position:
            break
        dims = [d.strip() for d in match.group(2).split(",") if d.strip()]
        try:
            shapes[match.group(1)] = [DYN if d in ("?", "-1") else int(d) for d in dims]
        except ValueError:
            break
        position = match.end()
    if not shapes or position != len(text) or any(d < 1 and d != DYN for s in shapes.values() for d in s):
        raise IrforgeError(
            f"bad shapes '{text}' for set-shapes",
            fix='write set-shapes{shapes="data[1,3,224,224]"} (positive sizes, -1 for dynamic)',
            code="E746",
        )
    return shapes


def argument_names(func: FuncOp) -> list[tuple[str, ...]]:
    """The names each input answers to: its nn.name and its SSA name."""
    named = input_names(func)
    return [tuple(n for n in (name, arg.name_hint) if n) for name, arg in zip(named, func.args)]


def propagate_shapes(func: FuncOp) -> None:
    """Retype every op's results from its operands, in order; the first op that rejects
    its operands raises an IrforgeError naming it."""
    for op in func.body.walk():
        if not isinstance(op, NNOp):
            continue
        try:
            inferred = op.infer_shapes()
        except VerifyException as e:
            reason = first_line(str(e)).removeprefix(f"{op.label}: ")
            raise IrforgeError(
                f"stopped shape propagation at node {op.label}: {reason}",
                fix="the new input shapes do not fit this op; choose shapes the model's "
                "reshapes allow, or cut the model before it",
                code="E746",
            ) from None
        for result, new_type in zip(op.results, inferred, strict=True):
            if result.type != new_type:
                Rewriter.replace_value_with_new_type(result, new_type)
    sync_signature(func)


@dataclass(frozen=True)
class SetShapesPass(ModulePass):
    name = "set-shapes"

    shapes: str = ""
    """New input shapes: `name[d0,d1,...]`, comma-separated."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        func = main_function(op)
        wanted = parse_shape_spec(self.shapes)
        names = argument_names(func)
        if "" in wanted and len(func.args) == 1:
            wanted[names[0][0]] = wanted.pop("")
        known = {n for aliases in names for n in aliases}
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise IrforgeError(
                f"set-shapes names input '{unknown[0]}', which the model does not have",
                fix=f"its inputs are: {', '.join(a[0] for a in names)}",
                code="E746",
            )
        for arg, aliases in zip(func.args, names):
            shape = next((wanted[n] for n in aliases if n in wanted), None)
            if shape is not None:
                assert isinstance(arg.type, TensorType)
                Rewriter.replace_value_with_new_type(arg, TensorType(arg.type.element_type, shape))
        func.function_type = FunctionType.from_lists([a.type for a in func.args], func.function_type.outputs)
        propagate_shapes(func)
