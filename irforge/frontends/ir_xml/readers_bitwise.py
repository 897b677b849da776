"""Readers of OpenVINO's BitwiseAnd / Or / Xor / Not (opset13) and BitwiseLeftShift /
RightShift (opset15) into nn.bitwise."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn.bitwise import Bitwise
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader

OPERATIONS = {
    "BitwiseAnd": "and", "BitwiseOr": "or", "BitwiseXor": "xor", "BitwiseNot": "not",
    "BitwiseLeftShift": "left_shift", "BitwiseRightShift": "right_shift",
}  # fmt: skip


def _reader(layer_type: str, operation: str) -> None:
    @ir_layer_reader(layer_type)
    def read(ctx: LayerContext) -> SSAValue:
        if operation != "not" and ctx.attr("auto_broadcast", "numpy") != "numpy":
            raise ctx.fail(f"auto_broadcast='{ctx.attr('auto_broadcast')}' is not supported", fix="use numpy broadcasting")
        operands = [ctx.input(0)] if operation == "not" else [ctx.input(0), ctx.input(1)]
        return ctx.value(Bitwise, operands, operation=operation)


for _layer, _operation in OPERATIONS.items():
    _reader(_layer, _operation)
