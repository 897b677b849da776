"""MXNet Convolution, Deconvolution, Pooling, FullyConnected, Flatten and UpSampling."""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from irforge.dialects.nn import Convolution, Deconvolution, Flatten, FullyConnected, Pooling, Resample
from irforge.dialects.nn.base import product
from irforge.dialects.nn.conv import window_output_size
from irforge.frontends.mxnet.registry import NodeContext, mxnet_extractor


def check_layout(ctx: NodeContext, rank: int) -> None:
    layout = ctx.attrs.str("layout", "None")
    if layout not in ("None", "NCW", "NCHW", "NCDHW") or (layout != "None" and len(layout) != rank):
        raise ctx.fail(f"layout {layout} is not supported", fix="irforge imports MXNet's channels-first layouts (NCHW)")


def window(ctx: NodeContext, key: str, default: int, spatial: int) -> list[int]:
    """A per-axis tuple such as stride=(2, 2); absent or () means `default` on every axis."""
    values = ctx.attrs.ints(key, [default] * spatial)
    assert values is not None
    if len(values) != spatial:
        raise ctx.fail(f"{key}={list(values)} has {len(values)} values for {spatial} spatial axes")
    return values


def kernel(ctx: NodeContext, spatial: int) -> list[int]:
    values = ctx.attrs.ints("kernel")
    if not values or len(values) != spatial or min(values) < 1:
        raise ctx.fail(f"kernel {values} does not give one size per spatial axis ({spatial})")
    return values


def filter_operands(ctx: NodeContext, weights_shape: list[int], out_channels: int, no_bias_default: bool) -> list[SSAValue]:
    operands = [ctx.input(0), ctx.weight(1, weights_shape)]
    if not ctx.attrs.bool("no_bias", no_bias_default):
        operands.append(ctx.weight(2, [out_channels], "/bias"))
    return operands


@mxnet_extractor("Convolution", weights=(1, 2))
def convolution(ctx: NodeContext) -> SSAValue:
    x = ctx.shape(0)
    spatial = len(x) - 2
    check_layout(ctx, len(x))
    k = kernel(ctx, spatial)
    group = ctx.attrs.int("num_group", 1)
    filters = ctx.attrs.int("num_filter", 0)
    pads = window(ctx, "pad", 0, spatial)
    if group < 1 or x[1] % group or filters % group:
        raise ctx.fail(f"num_group {group} does not divide {x[1]} input and {filters} output channels")
    return ctx.value(
        Convolution,
        filter_operands(ctx, [filters, x[1] // group, *k], filters, False),
        strides=window(ctx, "stride", 1, spatial),
        dilations=window(ctx, "dilate", 1, spatial),
        pads_begin=pads,
        pads_end=pads,
        group=group,
    )


@mxnet_extractor("Deconvolution", weights=(1, 2))
def deconvolution(ctx: NodeContext) -> SSAValue:
    """MXNet's output is full[pad : pad + out] of the full transposed result, out =
    s * (in - 1) + d * (k - 1) + 1 - 2 * pad + adj; with target_shape, pad and adj are
    derived from it (total crop t: pad = ceil(t / 2), adj = t % 2)."""
    x = ctx.shape(0)
    spatial = len(x) - 2
    check_layout(ctx, len(x))
    k = kernel(ctx, spatial)
    strides, dilations = window(ctx, "stride", 1, spatial), window(ctx, "dilate", 1, spatial)
    pads, adjs = window(ctx, "pad", 0, spatial), window(ctx, "adj", 0, spatial)
    target = ctx.attrs.ints("target_shape", [])
    if target and any(target):
        if len(target) != spatial:
            raise ctx.fail(f"target_shape {target} has {len(target)} values for {spatial} spatial axes")
        full = [s * (n - 1) + d * (kk - 1) + 1 for n, kk, s, d in zip(x[2:], k, strides, dilations)]
        if any(t > f for t, f in zip(target, full)):
            raise ctx.fail(f"target_shape {target} exceeds the full output {full}")
        pads = [(f - t + 1) // 2 for f, t in zip(full, target)]
        adjs = [(f - t) % 2 for f, t in zip(full, target)]
    group = ctx.attrs.int("num_group", 1)
    filters = ctx.attrs.int("num_filter", 0)
    if group < 1 or x[1] % group or filters % group:
        raise ctx.fail(f"num_group {group} does not divide {x[1]} input and {filters} output channels")
    # the adj extra rows come off the end crop where it can take them, else as output_padding
    ends = [max(p - a, 0) for p, a in zip(pads, adjs)]
    output_padding = [max(a - p, 0) for p, a in zip(pads, adjs)]
    return ctx.value(
        Deconvolution,
        filter_operands(ctx, [x[1], filters // group, *k], filters, True),
        strides=strides,
        dilations=dilations,
        pads_begin=pads,
        pads_end=ends,
        output_padding=output_padding if any(output_padding) else None,
        group=group,
    )


@mxnet_extractor("Pooling")
def pooling(ctx: NodeContext) -> SSAValue:
    x = ctx.shape(0)
    spatial = len(x) - 2
    check_layout(ctx, len(x))
    pool_type = ctx.attrs.str("pool_type", "max")
    if pool_type not in ("max", "avg"):
        raise ctx.fail(f"pool_type {pool_type} is not supported", fix="irforge imports max and avg pooling")
    props: dict[str, object] = {"method": pool_type, "exclude_pad": not ctx.attrs.bool("count_include_pad", True)}
    convention = ctx.attrs.str("pooling_convention", "valid")
    ctx.attrs.float("p_value", 0.0)  # lp pooling only, refused above
    if ctx.attrs.bool("global_pool", False):
        for ignored in ("kernel", "stride", "pad", "pooling_convention"):  # MXNet ignores them too
            ctx.attrs.str(ignored, "")
        return ctx.value(Pooling, [ctx.input(0)], global_pool=True, **props)
    if convention not in ("valid", "full"):
        raise ctx.fail(f"pooling_convention {convention} is not supported", fix="irforge imports valid and full")
    k = kernel(ctx, spatial)
    strides, pads = window(ctx, "stride", 1, spatial), window(ctx, "pad", 0, spatial)
    ceil = convention == "full"
    if ceil:
        # MXNet: 1 + ceil((in + 2p - k) / s), keeping a last window that starts in the end
        # padding, which IR ceil rounding drops
        mxnet = [1 + math.ceil((n + 2 * p - kk) / s) for n, kk, s, p in zip(x[2:], k, strides, pads)]
        ours = [window_output_size(n, kk, s, 1, (p, p), "explicit", True) for n, kk, s, p in zip(x[2:], k, strides, pads)]
        if mxnet != ours:
            raise ctx.fail(f"pooling_convention full gives {mxnet} here, where a window starts in the padding", fix="use smaller pads")
    return ctx.value(
        Pooling,
        [ctx.input(0)],
        kernel=k,
        strides=strides,
        pads_begin=pads,
        pads_end=pads,
        rounding_type="ceil" if ceil else "floor",
        **props,
    )


@mxnet_extractor("FullyConnected", weights=(1, 2))
def fully_connected(ctx: NodeContext) -> SSAValue:
    x = ctx.shape(0)
    hidden = ctx.attrs.int("num_hidden", 0)
    data = ctx.input(0)
    if ctx.attrs.bool("flatten", True) and len(x) != 2:
        data = ctx.value(Flatten, [data], suffix="/flatten", axis=1)
        features = product(x[1:])
    else:
        features = x[-1]
    operands = [data, ctx.weight(1, [hidden, features])]
    if not ctx.attrs.bool("no_bias", False):
        operands.append(ctx.weight(2, [hidden], "/bias"))
    return ctx.value(FullyConnected, operands)


@mxnet_extractor("Flatten", "flatten")
def flatten(ctx: NodeContext) -> SSAValue:
    return ctx.value(Flatten, [ctx.input(0)], axis=1)


@mxnet_extractor("UpSampling", weights=(1,))
def upsampling(ctx: NodeContext) -> SSAValue:
    """nearest: out[y] = x[y // scale]; bilinear: a depthwise Deconvolution by the weight
    input (kernel 2s - s % 2, stride s, pad ceil((s - 1) / 2)), as MXNet computes it."""
    scale = ctx.attrs.int("scale", 1)
    kind = ctx.attrs.str("sample_type", "nearest")
    args = ctx.attrs.int("num_args", 1)
    ctx.attrs.str("multi_input_mode", "concat")
    x = ctx.shape(0)
    if kind == "nearest":
        if args != 1 or ctx.num_inputs != 1:
            raise ctx.fail("nearest UpSampling of several inputs is not supported")
        scales = [1.0, 1.0] + [float(scale)] * (len(x) - 2)
        return ctx.value(Resample, [ctx.input(0)], mode="nearest", scales=scales, coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    if kind != "bilinear":
        raise ctx.fail(f"sample_type {kind} is not supported")
    channels = ctx.attrs.int("num_filter", x[1])
    if channels != x[1]:
        raise ctx.fail(f"num_filter {channels} differs from the {x[1]} input channels")
    size = 2 * scale - scale % 2
    pad = math.ceil((scale - 1) / 2)
    return ctx.value(
        Deconvolution,
        [ctx.input(0), ctx.weight(1, [channels, 1, size, size])],
        strides=[scale, scale],
        pads_begin=[pad, pad],
        pads_end=[pad, pad],
        group=channels,
    )
