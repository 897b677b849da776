"""Caffe BatchNorm, Scale, Bias, LRN, MVN, Normalize (SSD) and Softmax."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import MVN, BatchNormalization, Eltwise, Norm, Normalize, Reshape, ScaleShift, SoftMax
from irforge.frontends.caffe.registry import LayerContext, caffe_extractor


@caffe_extractor("BatchNorm")
def batch_norm(ctx: LayerContext) -> SSAValue:
    p = ctx.param("batch_norm_param")
    x = ctx.shape(0)
    if p.HasField("use_global_stats") and not p.use_global_stats:
        # statistics of the batch itself, per channel: mean-variance normalisation over N, H, W
        axes = [0, *range(2, len(x))]
        return ctx.value(MVN, [ctx.bottom(0)], axes=axes, eps=float(p.eps), eps_mode="inside_sqrt")
    channels = x[1]
    # Caffe keeps running sums: mean and variance are blobs 0 and 1 divided by blob 2
    factor = float(ctx.blob(2).reshape(-1)[0]) if ctx.num_blobs > 2 else 1.0
    scale = 0.0 if factor == 0 else 1.0 / factor
    mean = ctx.blob(0, [channels]) * np.float32(scale)
    variance = ctx.blob(1, [channels]) * np.float32(scale)
    operands = [
        ctx.bottom(0),
        ctx.constant(np.ones(channels, np.float32), "/gamma"),
        ctx.constant(np.zeros(channels, np.float32), "/beta"),
        ctx.constant(mean, "/mean"),
        ctx.constant(variance, "/variance"),
    ]
    return ctx.value(BatchNormalization, operands, epsilon=float(p.eps))


def param_axes(ctx: LayerContext, axis: int, num_axes: int) -> tuple[int, list[int]]:
    """The first axis and the sizes of the axes a Scale/Bias parameter spans."""
    x = ctx.shape(0)
    first = axis % len(x) if x else 0
    if ctx.num_bottoms > 1:
        span = list(ctx.shape(1))
        if list(x[first : first + len(span)]) != span:
            raise ctx.fail(f"second bottom of shape {span} does not match input axes {first}.. of {list(x)}")
        return first, span
    end = len(x) if num_axes == -1 else first + num_axes
    if num_axes < -1 or end > len(x):
        raise ctx.fail(f"num_axes {num_axes} from axis {axis} does not fit an input of rank {len(x)}")
    return first, list(x[first:end])


def broadcastable(ctx: LayerContext, value: SSAValue, first: int, span: Sequence[int], suffix: str) -> SSAValue:
    """`value` (of shape `span`, for the input axes from `first`) reshaped to broadcast to the input."""
    trailing = len(ctx.shape(0)) - first - len(span)
    if trailing == 0:
        return value
    return ctx.value(Reshape, [value], suffix=suffix, shape=[*span, *[1] * trailing], special_zero=False)


def parameter(ctx: LayerContext, blob_index: int, first: int, span: Sequence[int], suffix: str) -> SSAValue:
    """A Scale/Bias parameter from the caffemodel, shaped to broadcast to the input."""
    trailing = len(ctx.shape(0)) - first - len(span)
    return ctx.constant(ctx.blob(blob_index, span).reshape([*span, *[1] * trailing]), suffix)


@caffe_extractor("Scale")
def scale(ctx: LayerContext) -> SSAValue:
    p = ctx.param("scale_param")
    first, span = param_axes(ctx, p.axis, p.num_axes)
    bias_index = 1 if ctx.num_bottoms == 1 else 0
    if ctx.num_bottoms == 1 and len(span) == 1 and len(ctx.shape(0)) > 1:
        # the usual per-channel case, foldable into a convolution
        shift = ctx.blob(1, span) if p.bias_term else np.zeros(span, np.float32)
        operands = [ctx.bottom(0), ctx.constant(ctx.blob(0, span), "/scale"), ctx.constant(shift, "/shift")]
        return ctx.value(ScaleShift, operands, axis=first)
    if ctx.num_bottoms > 1:
        factor = broadcastable(ctx, ctx.bottom(1), first, span, "/reshape")
    else:
        factor = parameter(ctx, 0, first, span, "/scale")
    y = ctx.value(Eltwise, [ctx.bottom(0), factor], suffix="/mul" if p.bias_term else "", operation="mul")
    if not p.bias_term:
        return y
    return ctx.value(Eltwise, [y, parameter(ctx, bias_index, first, span, "/bias")], operation="sum")


@caffe_extractor("Bias")
def bias(ctx: LayerContext) -> SSAValue:
    p = ctx.param("bias_param")
    first, span = param_axes(ctx, p.axis, p.num_axes)
    if ctx.num_bottoms > 1:
        shift = broadcastable(ctx, ctx.bottom(1), first, span, "/reshape")
    else:
        shift = parameter(ctx, 0, first, span, "/bias")
    return ctx.value(Eltwise, [ctx.bottom(0), shift], operation="sum")


@caffe_extractor("LRN")
def lrn(ctx: LayerContext) -> SSAValue:
    p = ctx.param("lrn_param")
    if p.norm_region == 0:  # ACROSS_CHANNELS: x / (k + alpha / n * sum x^2)^beta
        return ctx.value(Norm, [ctx.bottom(0)], size=int(p.local_size), alpha=float(p.alpha), beta=float(p.beta), bias=float(p.k), region="across")
    # WITHIN_CHANNEL: x / (1 + alpha / n^2 * sum over an n x n window of x^2)^beta (k unused)
    return ctx.value(Norm, [ctx.bottom(0)], size=int(p.local_size), alpha=float(p.alpha), beta=float(p.beta), bias=1.0, region="same")


@caffe_extractor("MVN")
def mvn(ctx: LayerContext) -> SSAValue:
    p = ctx.param("mvn_param")
    rank = len(ctx.shape(0))
    axes = list(range(1 if p.across_channels else 2, rank))
    # Caffe adds eps to the standard deviation, not to the variance
    return ctx.value(MVN, [ctx.bottom(0)], axes=axes, normalize_variance=bool(p.normalize_variance), eps=float(p.eps), eps_mode="outside_sqrt")


@caffe_extractor("Normalize")
def normalize(ctx: LayerContext) -> SSAValue:
    p = ctx.param("norm_param")
    size = 1 if p.channel_shared else ctx.shape(0)[1]
    operands = [ctx.bottom(0), ctx.constant(ctx.blob(0, [size]), "/scale")]
    return ctx.value(Normalize, operands, across_spatial=bool(p.across_spatial), channel_shared=bool(p.channel_shared), eps=float(p.eps))


@caffe_extractor("Softmax")
def softmax(ctx: LayerContext) -> SSAValue:
    return ctx.value(SoftMax, [ctx.bottom(0)], axis=int(ctx.param("softmax_param").axis))
