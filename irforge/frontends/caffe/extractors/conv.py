"""Caffe Input, Convolution (and the MobileNet forks' ConvolutionDepthwise), Deconvolution,
Pooling and InnerProduct."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from irforge.dialects.nn import Convert, Convolution, Deconvolution, FullyConnected, MaxPoolIndices, Pooling, Reshape
from irforge.dialects.nn.base import product
from irforge.frontends.caffe.registry import LayerContext, caffe_extractor


@caffe_extractor("Input")
def input_layer(ctx: LayerContext) -> list[SSAValue]:
    shapes = [[int(d) for d in s.dim] for s in ctx.param("input_param").shape]
    if len(shapes) == 1 and ctx.num_tops > 1:
        shapes *= ctx.num_tops  # one shape given for all tops, as Caffe allows
    if len(shapes) != ctx.num_tops:
        raise ctx.fail(f"has {ctx.num_tops} tops but {len(shapes)} input_param shapes")
    for top, shape in zip(ctx.layer.top, shapes):
        ctx.importer.add_input(top, shape)
    return [ctx.importer.values[top] for top in ctx.layer.top]


def window(ctx: LayerContext, p: Any, name: str, default: int, spatial: int) -> list[int]:
    """A per-axis window value: `name_h`/`name_w`, or the (repeated or single) `name`
    (`kernel_size` for the kernel, whose per-axis fields are kernel_h/kernel_w)."""
    prefix = name.removesuffix("_size")
    h, w = f"{prefix}_h", f"{prefix}_w"
    fields = p.DESCRIPTOR.fields_by_name
    if h in fields and (p.HasField(h) or p.HasField(w)):
        if spatial != 2:
            raise ctx.fail(f"{h}/{w} need 2 spatial axes, the input has {spatial}")
        return [getattr(p, h), getattr(p, w)]
    if fields[name].is_repeated:  # Convolution: repeated, Pooling: single
        values = [int(v) for v in getattr(p, name)]
    else:
        values = [int(getattr(p, name))] if p.HasField(name) else []
    if not values:
        return [default] * spatial
    if len(values) == 1:
        return values * spatial
    if len(values) != spatial:
        raise ctx.fail(f"{name} has {len(values)} values for {spatial} spatial axes")
    return values


def conv_props(ctx: LayerContext, p: Any, spatial: int) -> dict[str, object]:
    pads = window(ctx, p, "pad", 0, spatial)
    return {
        "strides": window(ctx, p, "stride", 1, spatial),
        "pads_begin": pads,
        "pads_end": pads,
        "dilations": window(ctx, p, "dilation", 1, spatial),
        "group": int(p.group),
    }


def conv_operands(ctx: LayerContext, p: Any, weights_shape: list[int], out_channels: int) -> list[SSAValue]:
    operands = [ctx.bottom(0), ctx.constant(ctx.blob(0, weights_shape), "/weights")]
    if p.bias_term:
        operands.append(ctx.constant(ctx.blob(1, [out_channels]), "/bias"))
    return operands


def kernel_of(ctx: LayerContext, p: Any, spatial: int) -> list[int]:
    kernel = window(ctx, p, "kernel_size", 0, spatial)
    if not all(kernel):
        raise ctx.fail("kernel_size (or kernel_h and kernel_w) is required")
    return kernel


def _spatial_input(ctx: LayerContext) -> tuple[int, ...]:
    """The bottom's shape, which needs batch, channels and at least one spatial axis."""
    x = ctx.shape(0)
    if len(x) < 3:
        raise ctx.fail(f"needs an input of rank 3 or more (batch, channels, spatial axes), got shape {list(x)}")
    return x


@caffe_extractor("Convolution")
def convolution(ctx: LayerContext) -> SSAValue:
    p = ctx.param("convolution_param")
    x = _spatial_input(ctx)
    if p.axis not in (1, 1 - len(x)):
        raise ctx.fail(f"axis {p.axis} is not supported (channels must be axis 1)")
    spatial = len(x) - 2
    kernel = kernel_of(ctx, p, spatial)
    shape = [p.num_output, x[1] // max(p.group, 1), *kernel]
    return ctx.value(Convolution, conv_operands(ctx, p, shape, p.num_output), **conv_props(ctx, p, spatial))


@caffe_extractor("ConvolutionDepthwise", "DepthwiseConvolution")
def convolution_depthwise(ctx: LayerContext) -> SSAValue:
    """The MobileNet forks' depthwise convolution layers (yonghenglh6's ConvolutionDepthwise,
    and the DepthwiseConvolution of others): one [1, kh, kw] filter per channel, output channels
    = input channels; a Convolution with group = channels."""
    p = ctx.param("convolution_param")
    x = _spatial_input(ctx)
    channels = x[1]
    if p.num_output != channels:
        raise ctx.fail(f"num_output {p.num_output} differs from the input's {channels} channels (a depthwise layer keeps them)")
    if p.group not in (1, channels):
        raise ctx.fail(f"group {p.group} is neither 1 nor the {channels} channels of a depthwise convolution")
    if p.axis not in (1, 1 - len(x)):
        raise ctx.fail(f"axis {p.axis} is not supported (channels must be axis 1)")
    spatial = len(x) - 2
    shape = [channels, 1, *kernel_of(ctx, p, spatial)]
    return ctx.value(Convolution, conv_operands(ctx, p, shape, channels), **{**conv_props(ctx, p, spatial), "group": channels})


@caffe_extractor("Deconvolution")
def deconvolution(ctx: LayerContext) -> SSAValue:
    p = ctx.param("convolution_param")
    x = _spatial_input(ctx)
    spatial = len(x) - 2
    kernel = kernel_of(ctx, p, spatial)
    group = max(p.group, 1)
    # Caffe stores deconvolution weights as [C_in, C_out / group, k...], nn's layout
    shape = [x[1], p.num_output // group, *kernel]
    return ctx.value(Deconvolution, conv_operands(ctx, p, shape, p.num_output), **conv_props(ctx, p, spatial))


@caffe_extractor("Pooling")
def pooling(ctx: LayerContext) -> SSAValue | list[SSAValue]:
    p = ctx.param("pooling_param")
    pool_methods = {0: "max", 1: "avg"}
    if p.pool not in pool_methods:
        raise ctx.fail("STOCHASTIC pooling is not supported", fix="use MAX or AVE pooling")
    # AVE divides by the window's size clipped to the padded input (padding counts)
    props: dict[str, object] = {"method": pool_methods[p.pool], "exclude_pad": False}
    if p.global_pooling:
        return ctx.value(Pooling, [ctx.bottom(0)], global_pool=True, **props)
    spatial = len(ctx.shape(0)) - 2
    pads = window(ctx, p, "pad", 0, spatial)
    windowing = {
        "kernel": kernel_of(ctx, p, spatial),
        "strides": window(ctx, p, "stride", 1, spatial),
        "pads_begin": pads,
        "pads_end": pads,
        "rounding_type": rounding(ctx, p),
    }
    pooled = ctx.value(Pooling, [ctx.bottom(0)], **windowing, **props)
    if ctx.num_tops < 2:
        return pooled
    if props["method"] != "max":
        raise ctx.fail("only MAX pooling has a second (mask) top", fix="remove the second top")
    # Caffe's mask top: each window's argmax as a float flat index h * W + w in the input plane
    mask = ctx.value(MaxPoolIndices, [ctx.bottom(0)], suffix="/mask_index", axis=2, **windowing)
    return [pooled, ctx.value(Convert, [mask], suffix="/mask", destination_type=f32)]


def rounding(ctx: LayerContext, p: Any) -> str:
    """Caffe rounds the output size up, and drops a last window that starts beyond the input +
    pad; forks round down with `ceil_mode: false` (DenseNet's) or `round_mode: FLOOR`."""
    if p.HasField("ceil_mode") and p.HasField("round_mode") and p.ceil_mode != (p.round_mode == 0):
        raise ctx.fail("ceil_mode and round_mode disagree", fix="keep one of them")
    if p.HasField("ceil_mode"):
        return "ceil" if p.ceil_mode else "floor"
    return "ceil" if p.round_mode == 0 else "floor"


def flatten_from(ctx: LayerContext, x: SSAValue, axis: int, suffix: str) -> SSAValue:
    """`x` with the axes from `axis` on merged into one (no op if that is the last axis)."""
    shape = ctx.shape(0)
    if axis == len(shape) - 1:
        return x
    target = [*shape[:axis], product(shape[axis:])]
    return ctx.value(Reshape, [x], suffix=suffix, shape=target, special_zero=False)


@caffe_extractor("InnerProduct")
def inner_product(ctx: LayerContext) -> SSAValue:
    p = ctx.param("inner_product_param")
    x = ctx.shape(0)
    axis = p.axis % len(x)
    features = product(x[axis:])
    if p.transpose:
        weights = np.ascontiguousarray(ctx.blob(0, [features, p.num_output]).T)
    else:
        weights = ctx.blob(0, [p.num_output, features])
    operands = [flatten_from(ctx, ctx.bottom(0), axis, "/flatten"), ctx.constant(weights, "/weights")]
    if p.bias_term:
        operands.append(ctx.constant(ctx.blob(1, [p.num_output]), "/bias"))
    return ctx.value(FullyConnected, operands)
