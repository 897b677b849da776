"""ONNX GridSample (opset 16 and 20) -> nn.grid_sample."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn.grid_sample import GridSample
from irforge.errors import IrforgeError
from irforge.frontends.onnx.extractors.grid_sample_volumetric import grid_sample_volumetric
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor


# GridSample-16 names the modes bilinear/bicubic, GridSample-20 linear/cubic
GRID_SAMPLE_MODES = {"bilinear": "bilinear", "linear": "bilinear", "nearest": "nearest", "bicubic": "bicubic", "cubic": "bicubic"}


@onnx_extractor("GridSample")
def grid_sample(ctx: NodeContext) -> SSAValue:
    mode = ctx.attr("mode", "bilinear" if ctx.opset < 20 else "linear")
    if mode not in GRID_SAMPLE_MODES:
        raise IrforgeError(f"GridSample attribute mode='{mode}' is not supported", where=ctx.where, code="E189",
                           fix="use bilinear/linear, nearest or bicubic/cubic")
    padding = ctx.attr("padding_mode", "zeros")
    if padding not in ("zeros", "border", "reflection"):
        raise IrforgeError(f"GridSample attribute padding_mode='{padding}' is not supported", where=ctx.where, code="E189",
                           fix="use zeros, border or reflection")
    align = ctx.attr("align_corners", 0)
    if align not in (0, 1):
        raise IrforgeError(f"GridSample attribute align_corners={align} is not supported", where=ctx.where, code="E189", fix="use 0 or 1")
    rank = len(ctx.input_type(0).get_shape())
    if rank == 5:  # GridSample-20's volumetric form: OpenVINO's GridSample-9 is 4-D only
        return grid_sample_volumetric(ctx, GRID_SAMPLE_MODES[mode], padding, bool(align))
    if rank != 4:
        raise IrforgeError(f"GridSample of a rank-{rank} input is not supported, only 4-D [N, C, H, W] and 5-D [N, C, D, H, W]",
                           where=ctx.where, code="E189", fix="export 2-D sampling: a 4-D input with a [N, H_out, W_out, 2] grid")
    return ctx.value(GridSample, [ctx.input(0), ctx.input(1)], mode=GRID_SAMPLE_MODES[mode], padding_mode=padding, align_corners=bool(align))
