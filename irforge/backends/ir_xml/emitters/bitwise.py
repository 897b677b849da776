"""Emitter of nn.bitwise: OpenVINO's BitwiseAnd / BitwiseOr / BitwiseXor / BitwiseNot
(opset13) and BitwiseLeftShift / BitwiseRightShift (opset15)."""

from __future__ import annotations

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.graph import PortType
from irforge.dialects.nn.bitwise import Bitwise

LAYERS = {
    "and": ("BitwiseAnd", "opset13"), "or": ("BitwiseOr", "opset13"), "xor": ("BitwiseXor", "opset13"),
    "not": ("BitwiseNot", "opset13"), "left_shift": ("BitwiseLeftShift", "opset15"),
    "right_shift": ("BitwiseRightShift", "opset15"),
}  # fmt: skip


@ir_xml_emitter(Bitwise)
def bitwise(ctx: EmitContext, op: Bitwise, inputs: list[Port]) -> list[Port]:
    layer, version = LAYERS[op.str_prop("operation")]
    data = {} if op.str_prop("operation") == "not" else {"auto_broadcast": "numpy"}
    return [ctx.single(layer, inputs, PortType.of(op.results[0].type), name=ctx.name(op), data=data, version=version)]
