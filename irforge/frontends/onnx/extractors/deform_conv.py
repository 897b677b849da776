"""ONNX DeformConv-19 (torchvision.ops.deform_conv2d) -> nn.deformable_convolution (+ an add
of the bias along channels)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn.base import known
from irforge.dialects.nn.deformable import DeformableConvolution
from irforge.dialects.nn.elementwise import Eltwise
from irforge.dialects.nn.shape import Unsqueeze
from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor


@onnx_extractor("DeformConv")
def deform_conv(ctx: NodeContext) -> SSAValue:
    w_shape = list(ctx.input_shape(1))
    if len(ctx.input_shape(0)) != 4 or len(w_shape) != 4:
        raise IrforgeError(f"DeformConv of a rank-{len(ctx.input_shape(0))} input with rank-{len(w_shape)} weights is not supported, only 2-D [N, C, H, W]",
                           where=ctx.where, code="E133", fix="export a 2-D deformable convolution (torchvision.ops.deform_conv2d)")
    ints = {name: [int(v) for v in ctx.attr(name, default)] for name, default in
            (("strides", [1, 1]), ("dilations", [1, 1]), ("pads", [0, 0, 0, 0]))}
    for name, count, low in (("strides", 2, 1), ("dilations", 2, 1), ("pads", 4, 0)):
        if len(ints[name]) != count or min(ints[name]) < low:
            raise IrforgeError(f"DeformConv attribute {name}={ints[name]} is not supported", where=ctx.where, code="E134",
                               fix=f"give {count} values, each >= {low}")
    kernel = ctx.attr("kernel_shape", None)
    if kernel is not None and [int(k) for k in kernel] != w_shape[2:]:
        raise IrforgeError(f"DeformConv attribute kernel_shape={list(kernel)} differs from the weights' spatial shape {w_shape[2:]}",
                           where=ctx.where, code="E134", fix="drop kernel_shape or make it match the weights")
    operands = [ctx.input(0), ctx.input(2), ctx.input(1)]
    if ctx.has_input(4):
        operands.append(ctx.input(4))
    y = ctx.value(DeformableConvolution, operands, suffix="/deform" if ctx.has_input(3) else "",
                  strides=ints["strides"], dilations=ints["dilations"], pads_begin=ints["pads"][:2], pads_end=ints["pads"][2:],
                  group=int(ctx.attr("group", 1)), deformable_group=int(ctx.attr("offset_group", 1)))
    if not ctx.has_input(3):
        return y
    b_shape = list(ctx.input_shape(3))
    if len(b_shape) != 1 or (known(b_shape[0], w_shape[0]) and b_shape[0] != w_shape[0]):  # [1] would broadcast silently
        raise IrforgeError(f"DeformConv bias has shape {list(ctx.input_shape(3))}, expected [{w_shape[0]}] (one per output channel)",
                           where=ctx.where, code="E134", fix="give one bias value per output channel")
    bias = ctx.value(Unsqueeze, [ctx.input(3)], suffix="/bias", axes=[0, 2, 3])
    return ctx.value(Eltwise, [y, bias], operation="sum")
