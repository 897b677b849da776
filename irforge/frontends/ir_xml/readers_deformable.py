"""Reader of OpenVINO's DeformableConvolution-1 and -8 into nn.deformable_convolution.

DeformableConvolution-1 has no mask and no bilinear_interpolation_pad (it samples as -8 with
false does); auto_pad same_* / valid become explicit pads from the static input shape."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn.conv import resolve_pads
from irforge.dialects.nn.deformable import DeformableConvolution
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader
from irforge.frontends.ir_xml.readers_shape import window


@ir_layer_reader("DeformableConvolution")
def deformable_convolution(ctx: LayerContext) -> SSAValue:
    props = window(ctx)
    spatial, kernel = ctx.shape(0)[2:], ctx.shape(2)[2:]
    if props["auto_pad"] != "explicit":
        if min(spatial, default=0) < 0:
            raise ctx.fail(f"DeformableConvolution auto_pad '{props['auto_pad']}' needs static input dims, got {list(spatial)}", fix="give static input shapes")
        ones = [1] * len(spatial)
        begin, end = resolve_pads(str(props["auto_pad"]), spatial, kernel, props.get("strides", ones), props.get("dilations", ones),  # type: ignore[arg-type]
                                  props.get("pads_begin", [0] * len(spatial)), props.get("pads_end", [0] * len(spatial)))  # type: ignore[arg-type]
        props.update(auto_pad="explicit", pads_begin=list(begin), pads_end=list(end))
    operands = [ctx.input(0), ctx.input(1), ctx.input(2)] + ([ctx.input(3)] if ctx.num_inputs > 3 else [])
    return ctx.value(DeformableConvolution, operands, group=ctx.int("group", "1"), deformable_group=ctx.int("deformable_group", "1"),
                     bilinear_interpolation_pad=ctx.bool("bilinear_interpolation_pad", "false"), **props)
