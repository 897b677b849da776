"""ONNX Softmax, LogSoftmax and LRN -> nn.softmax / nn.lrn."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn import Flatten, Norm, Reshape, SoftMax
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor


@onnx_extractor("Softmax", "LogSoftmax")
def softmax(ctx: NodeContext) -> SSAValue:
    log = ctx.node.op_type == "LogSoftmax"
    shape = ctx.input_shape(0)
    rank = len(shape)
    if ctx.opset >= 13:
        return ctx.value(SoftMax, [ctx.input(0)], axis=int(ctx.attr("axis", -1)), log=log)
    # before opset 13 the input is coerced to 2-D at `axis` and normalised over the second dim
    axis = int(ctx.attr("axis", 1)) % max(rank, 1)
    if axis == rank - 1:
        return ctx.value(SoftMax, [ctx.input(0)], axis=axis, log=log)
    if DYN in shape:
        raise ctx.fail(
            f"{ctx.node.op_type} before opset 13 over axes {axis}.. needs a static input shape",
            fix="give static input shapes with --input_shape",
        )
    flat = ctx.value(Flatten, [ctx.input(0)], suffix="/flatten", axis=axis)
    y = ctx.value(SoftMax, [flat], suffix="/softmax", axis=1, log=log)
    return ctx.value(Reshape, [y], shape=list(shape))


@onnx_extractor("LRN")
def lrn(ctx: NodeContext) -> SSAValue:
    return ctx.value(
        Norm,
        [ctx.input(0)],
        alpha=float(ctx.attr("alpha", 1e-4)),
        beta=float(ctx.attr("beta", 0.75)),
        bias=float(ctx.attr("bias", 1.0)),
        size=int(ctx.attr("size")),
        region="across",
    )
