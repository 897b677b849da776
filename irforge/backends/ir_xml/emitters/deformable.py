"""Emitter of nn.deformable_convolution: OpenVINO DeformableConvolution-8 (inputs data,
offsets, filters and the optional mask; offsets as (dy, dx) pairs per tap, as ONNX)."""

from __future__ import annotations

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.emitters.conv import window_data
from irforge.backends.ir_xml.emitters.shape import out_type
from irforge.backends.ir_xml.graph import fmt_bool
from irforge.dialects.nn.deformable import DeformableConvolution


@ir_xml_emitter(DeformableConvolution)
def deformable_convolution(ctx: EmitContext, op: DeformableConvolution, inputs: list[Port]) -> list[Port]:
    # the operand order (input, offsets, weights, mask) is DeformableConvolution-8's
    data = {**window_data(op), "group": str(op.int_prop("group")), "deformable_group": str(op.int_prop("deformable_group")),
            "bilinear_interpolation_pad": fmt_bool(op.bool_prop("bilinear_interpolation_pad"))}
    return [ctx.single("DeformableConvolution", inputs, out_type(op), name=ctx.name(op), data=data, version="opset8")]
