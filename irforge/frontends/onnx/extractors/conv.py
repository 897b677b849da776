"""ONNX Conv, ConvTranspose and pooling -> nn.convolution / nn.deconvolution / nn.pooling."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn import Convolution, Deconvolution, Pooling
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

AUTO_PAD = {"NOTSET": "explicit", "SAME_UPPER": "same_upper", "SAME_LOWER": "same_lower", "VALID": "valid"}


def window_props(ctx: NodeContext, spatial: int) -> dict[str, object]:
    """strides/dilations/pads/auto_pad of an ONNX windowed op, in nn property form."""
    auto_pad = ctx.attr("auto_pad", "NOTSET")
    if auto_pad not in AUTO_PAD:
        raise ctx.fail(f"auto_pad='{auto_pad}' is not valid", fix=f"use one of {', '.join(AUTO_PAD)}")
    pads = list(ctx.attr("pads", [0] * (2 * spatial)))
    if len(pads) != 2 * spatial:
        raise ctx.fail(f"pads has {len(pads)} values, expected {2 * spatial}")
    props: dict[str, object] = {
        "strides": list(ctx.attr("strides", [1] * spatial)),
        "pads_begin": pads[:spatial],
        "pads_end": pads[spatial:],
    }
    if AUTO_PAD[auto_pad] != "explicit":
        props["auto_pad"] = AUTO_PAD[auto_pad]
    return props


@onnx_extractor("Conv")
def conv(ctx: NodeContext) -> SSAValue:
    spatial = len(ctx.input_shape(1)) - 2
    props = window_props(ctx, spatial)
    props["dilations"] = list(ctx.attr("dilations", [1] * spatial))
    props["group"] = int(ctx.attr("group", 1))
    operands = [ctx.input(0), ctx.input(1)]
    if ctx.has_input(2):
        operands.append(ctx.input(2))
    return ctx.value(Convolution, operands, **props)


@onnx_extractor("ConvTranspose")
def conv_transpose(ctx: NodeContext) -> SSAValue:
    spatial = len(ctx.input_shape(1)) - 2
    props = window_props(ctx, spatial)
    props["dilations"] = list(ctx.attr("dilations", [1] * spatial))
    props["group"] = int(ctx.attr("group", 1))
    output_padding = ctx.attr("output_padding")
    if output_padding:
        props["output_padding"] = list(output_padding)
    if ctx.attr("output_shape") is not None:
        props.update(_pads_for_output_shape(ctx, props, [int(d) for d in ctx.attr("output_shape")][-spatial:]))
    operands = [ctx.input(0), ctx.input(1)]
    if ctx.has_input(2):
        operands.append(ctx.input(2))
    return ctx.value(Deconvolution, operands, **props)


def _pads_for_output_shape(ctx: NodeContext, props: dict[str, object], target: list[int]) -> dict[str, object]:
    """Explicit pads (and output_padding where the target is larger) giving `target` sizes.

    ONNX: total padding = stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - out,
    split evenly with the odd one at the end (SAME_UPPER) or at the beginning (otherwise)."""
    in_dims, kernel = ctx.input_shape(0)[2:], ctx.input_shape(1)[2:]
    if DYN in in_dims or DYN in kernel:
        raise ctx.fail("output_shape with dynamic spatial sizes is not supported", fix="give static input shapes")
    strides, dilations = props["strides"], props["dilations"]
    extra = list(props.get("output_padding", [0] * len(kernel)))  # type: ignore[call-overload]
    begin, end = [], []
    for i, (size, k, s, d, out) in enumerate(zip(in_dims, kernel, strides, dilations, target)):  # type: ignore[call-overload]
        total = s * (size - 1) + extra[i] + (k - 1) * d + 1 - out
        if total < 0:
            extra[i], total = extra[i] - total, 0
        first = total // 2 if ctx.attr("auto_pad", "NOTSET") == "SAME_UPPER" else total - total // 2
        begin.append(first)
        end.append(total - first)
    result: dict[str, object] = {"pads_begin": begin, "pads_end": end, "auto_pad": None}
    if any(extra):
        result["output_padding"] = extra
    return result


@onnx_extractor("MaxPool", "AveragePool")
def pool(ctx: NodeContext) -> SSAValue:
    if ctx.node.op_type == "MaxPool" and len([o for o in ctx.node.output if o]) > 1:
        raise ctx.fail("the MaxPool indices output is not supported")
    if ctx.attr("storage_order", 0):
        raise ctx.fail("storage_order=1 is not supported")
    kernel = list(ctx.attr("kernel_shape"))
    props = window_props(ctx, len(kernel))
    props["kernel"] = kernel
    props["rounding_type"] = "ceil" if ctx.attr("ceil_mode", 0) else "floor"
    props["dilations"] = list(ctx.attr("dilations", [1] * len(kernel)))
    if ctx.node.op_type == "MaxPool":
        props["method"] = "max"
    else:
        props["method"] = "avg"
        props["exclude_pad"] = not ctx.attr("count_include_pad", 0)
    return ctx.value(Pooling, [ctx.input(0)], **props)


@onnx_extractor("GlobalAveragePool", "GlobalMaxPool")
def global_pool(ctx: NodeContext) -> SSAValue:
    method = "avg" if ctx.node.op_type == "GlobalAveragePool" else "max"
    return ctx.value(Pooling, [ctx.input(0)], method=method, global_pool=True)
