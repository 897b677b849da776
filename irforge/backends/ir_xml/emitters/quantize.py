"""Emitter of FakeQuantize: one opset1 layer with numpy broadcasting, as ovc writes INT8 models
(the weights' Const i8 -> Convert -> Subtract -> Multiply chain is written by the element-wise
emitters, op for op)."""

from __future__ import annotations

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.graph import PortType
from irforge.dialects.nn.quantize import FakeQuantize


@ir_xml_emitter(FakeQuantize)
def fake_quantize(ctx: EmitContext, op: FakeQuantize, inputs: list[Port]) -> list[Port]:
    data = {"levels": str(op.int_prop("levels")), "auto_broadcast": "numpy"}
    return [ctx.single("FakeQuantize", inputs, PortType.of(op.output.type), name=ctx.name(op), data=data)]
