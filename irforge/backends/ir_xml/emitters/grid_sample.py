"""Emitter of nn.grid_sample: OpenVINO GridSample-9."""

from __future__ import annotations

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.emitters.shape import out_type
from irforge.backends.ir_xml.graph import fmt_bool
from irforge.dialects.nn.grid_sample import GridSample


@ir_xml_emitter(GridSample)
def grid_sample(ctx: EmitContext, op: GridSample, inputs: list[Port]) -> list[Port]:
    # GridSample-9 names nn.grid_sample's modes and paddings alike
    data = {"align_corners": fmt_bool(op.bool_prop("align_corners")), "mode": op.str_prop("mode"), "padding_mode": op.str_prop("padding_mode")}
    return [ctx.single("GridSample", inputs, out_type(op), name=ctx.name(op), data=data, version="opset9")]
