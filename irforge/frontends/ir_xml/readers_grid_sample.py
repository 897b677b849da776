"""Reader of OpenVINO's GridSample-9 into nn.grid_sample."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn.grid_sample import GRID_PADDING_MODES, GRID_SAMPLE_MODES, GridSample
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader


@ir_layer_reader("GridSample")
def grid_sample(ctx: LayerContext) -> SSAValue:
    mode, padding = ctx.attr("mode", "bilinear"), ctx.attr("padding_mode", "zeros")
    if mode not in GRID_SAMPLE_MODES or padding not in GRID_PADDING_MODES:
        raise ctx.fail(f"GridSample mode '{mode}' with padding_mode '{padding}' is not supported", fix="nn.grid_sample has modes bilinear, bicubic and nearest, paddings zeros, border and reflection")
    return ctx.value(GridSample, [ctx.input(0), ctx.input(1)], mode=mode, padding_mode=padding, align_corners=ctx.bool("align_corners", "false"))
