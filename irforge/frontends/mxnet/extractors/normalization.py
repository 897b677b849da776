"""MXNet BatchNorm, InstanceNorm, LRN, L2Normalization and the softmax family (softmax,
log_softmax, SoftmaxOutput, SoftmaxActivation)."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import MVN, BatchNormalization, Eltwise, Flatten, Norm, Normalize, Power, Reduce, Reshape, SoftMax
from irforge.frontends.mxnet.registry import NodeContext, mxnet_extractor


@mxnet_extractor("BatchNorm", "BatchNorm_v1", weights=(1, 2, 3, 4))
def batch_norm(ctx: NodeContext) -> SSAValue:
    """Inference uses the moving statistics (whatever use_global_stats says); fix_gamma
    (default true) means gamma is 1, not the stored array; eps defaults to 1e-3."""
    x = ctx.shape(0)
    axis = ctx.attrs.int("axis", 1)
    if axis not in (1, 1 - len(x)):
        raise ctx.fail(f"axis {axis} is not supported (channels must be axis 1)")
    for training_only in ("momentum", "use_global_stats", "output_mean_var", "cudnn_off", "min_calib_range", "max_calib_range"):
        ctx.attrs.str(training_only, "")
    channels = x[1]
    gamma = np.ones(channels, np.float32) if ctx.attrs.bool("fix_gamma", True) else ctx.array(1, [channels])
    if ctx.num_inputs == 3:  # MXNet 0.8 files: the moving statistics are aux states by name
        mean, variance = (ctx.named_array(f"{ctx.name}_{aux}", [channels]) for aux in ("moving_mean", "moving_var"))
    else:
        mean, variance = ctx.array(3, [channels]), ctx.array(4, [channels])
    operands = [
        ctx.input(0),
        ctx.constant(gamma, "/gamma"),
        ctx.weight(2, [channels], "/beta"),
        ctx.constant(mean, "/mean"),
        ctx.constant(variance, "/variance"),
    ]
    return ctx.value(BatchNormalization, operands, epsilon=ctx.attrs.float("eps", 1e-3))


def channel_param(ctx: NodeContext, index: int, rank: int, suffix: str) -> SSAValue:
    channels = ctx.shape(0)[1]
    return ctx.constant(ctx.array(index, [channels]).reshape([channels, *[1] * (rank - 2)]), suffix)


@mxnet_extractor("InstanceNorm", weights=(1, 2))
def instance_norm(ctx: NodeContext) -> SSAValue:
    """(x - mean) / sqrt(var + eps) * gamma + beta, statistics per sample and channel."""
    rank = len(ctx.shape(0))
    y = ctx.value(MVN, [ctx.input(0)], suffix="/mvn", axes=list(range(2, rank)), eps=ctx.attrs.float("eps", 1e-3), eps_mode="inside_sqrt")
    y = ctx.value(Eltwise, [y, channel_param(ctx, 1, rank, "/gamma")], suffix="/scale", operation="mul")
    return ctx.value(Eltwise, [y, channel_param(ctx, 2, rank, "/beta")], operation="sum")


@mxnet_extractor("LRN")
def lrn(ctx: NodeContext) -> SSAValue:
    """x / (knorm + alpha / nsize * sum of x^2 over nsize channels)^beta."""
    size = ctx.attrs.int("nsize", 0)
    if size < 1:
        raise ctx.fail("nsize is required")
    return ctx.value(
        Norm,
        [ctx.input(0)],
        size=size,
        alpha=ctx.attrs.float("alpha", 1e-4),
        beta=ctx.attrs.float("beta", 0.75),
        bias=ctx.attrs.float("knorm", 2.0),
        region="across",
    )


@mxnet_extractor("L2Normalization")
def l2_normalization(ctx: NodeContext) -> SSAValue:
    """x / sqrt(sum of x^2 + eps), the sum over all but the batch axis (instance), over the
    channels (channel) or over the spatial axes (spatial)."""
    mode = ctx.attrs.str("mode", "instance")
    eps = ctx.attrs.float("eps", 1e-10)
    rank = len(ctx.shape(0))
    if mode in ("instance", "channel"):
        return ctx.value(Normalize, [ctx.input(0)], across_spatial=mode == "instance", eps=eps)
    if mode != "spatial" or rank < 3:
        raise ctx.fail(f"mode {mode} is not supported for an input of rank {rank}")
    squares = ctx.value(Reduce, [ctx.input(0)], suffix="/sum_square", operation="sum_square", axes=list(range(2, rank)), keep_dims=True)
    shifted = ctx.value(Power, [squares], suffix="/eps", shift=eps)
    inverse = ctx.value(Power, [shifted], suffix="/rsqrt", power=-0.5)
    return ctx.value(Eltwise, [ctx.input(0), inverse], operation="mul")


def softmax_along(ctx: NodeContext, x: SSAValue, axis: int, log: bool = False, suffix: str = "") -> SSAValue:
    temperature = 1.0 if ctx.attrs.str("temperature", "None") == "None" else ctx.attrs.float("temperature", 1.0)
    if temperature != 1.0:
        x = ctx.value(Power, [x], suffix="/temperature", scale=1.0 / temperature)
    return ctx.value(SoftMax, [x], suffix=suffix, axis=axis, log=log)


def check_dtype(ctx: NodeContext) -> None:
    dtype = ctx.attrs.str("dtype", "None")
    if dtype not in ("None", "float32"):
        raise ctx.fail(f"dtype {dtype} is not supported", fix="irforge computes softmax in float32")
    if ctx.attrs.bool("use_length", False):
        raise ctx.fail("use_length (a length input) is not supported")


@mxnet_extractor("softmax", "log_softmax")
def softmax(ctx: NodeContext) -> SSAValue:
    check_dtype(ctx)
    return softmax_along(ctx, ctx.input(0), ctx.attrs.int("axis", -1) % len(ctx.shape(0)), log=ctx.op == "log_softmax")


def flat_softmax(ctx: NodeContext) -> SSAValue:
    """Softmax over all but the batch axis, the input's shape kept."""
    shape = ctx.shape(0)
    if len(shape) == 2:
        return ctx.value(SoftMax, [ctx.input(0)], axis=1)
    flat = ctx.value(Flatten, [ctx.input(0)], suffix="/flatten", axis=1)
    y = ctx.value(SoftMax, [flat], suffix="/softmax", axis=1)
    return ctx.value(Reshape, [y], shape=list(shape), special_zero=False)


@mxnet_extractor("SoftmaxOutput", "Softmax", ignored_inputs=(1,))
def softmax_output(ctx: NodeContext) -> SSAValue:
    """The loss layer at inference: softmax over the flattened sample, over axis 1
    (multi_output) or over the last axis (preserve_shape); the label input is not read."""
    for training_only in ("grad_scale", "ignore_label", "use_ignore", "normalization", "out_grad", "smooth_alpha"):
        ctx.attrs.str(training_only, "")
    if ctx.attrs.bool("multi_output", False):
        return ctx.value(SoftMax, [ctx.input(0)], axis=1)
    if ctx.attrs.bool("preserve_shape", False):
        return ctx.value(SoftMax, [ctx.input(0)], axis=len(ctx.shape(0)) - 1)
    return flat_softmax(ctx)


@mxnet_extractor("SoftmaxActivation")
def softmax_activation(ctx: NodeContext) -> SSAValue:
    mode = ctx.attrs.str("mode", "instance")
    if mode == "channel":
        return ctx.value(SoftMax, [ctx.input(0)], axis=1)
    if mode != "instance":
        raise ctx.fail(f"mode {mode} is not supported")
    return flat_softmax(ctx)
