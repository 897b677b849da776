"""ONNX BitwiseAnd / BitwiseOr / BitwiseXor / BitwiseNot (opset 18) and BitShift (opset 11)
-> nn.bitwise (OpenVINO's Bitwise*-13 and BitwiseLeftShift / RightShift-15)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn.bitwise import Bitwise
from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

BINARY = {"BitwiseAnd": "and", "BitwiseOr": "or", "BitwiseXor": "xor"}


def _binary(operation: str):  # type: ignore[no-untyped-def]
    def extract(ctx: NodeContext) -> SSAValue:
        return ctx.value(Bitwise, [ctx.input(0), ctx.input(1)], operation=operation)

    return extract


for _op_type, _operation in BINARY.items():
    onnx_extractor(_op_type)(_binary(_operation))


@onnx_extractor("BitwiseNot")
def bitwise_not(ctx: NodeContext) -> SSAValue:
    return ctx.value(Bitwise, [ctx.input(0)], operation="not")


@onnx_extractor("BitShift")
def bit_shift(ctx: NodeContext) -> SSAValue:
    direction = ctx.attr("direction")
    if direction not in ("LEFT", "RIGHT"):
        raise IrforgeError(f"BitShift direction='{direction}' is not supported", where=ctx.where,
                           fix="use LEFT or RIGHT", code="E130")
    return ctx.value(Bitwise, [ctx.input(0), ctx.input(1)], operation="left_shift" if direction == "LEFT" else "right_shift")
