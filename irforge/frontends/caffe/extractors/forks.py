"""Layers of the common Caffe forks and the remaining BVLC element-wise layers, on existing
`nn` ops: SegNet/ENet's `BN`, `Upsample` (scale), SENet's `Axpy`, ShuffleNet's
`ShuffleChannel`, MobileNet forks' `ReLU6`, YOLO forks' `Reorg`, and BVLC's `Threshold` and
`Embed`."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from irforge.dialects.nn import Clamp, Convert, Eltwise, Gather, Permute, Reshape, Resample, ReorgYolo, ScaleShift
from irforge.errors import IrforgeError
from irforge.frontends.caffe.registry import LayerContext, caffe_extractor

BN_INFERENCE = 1


@caffe_extractor("BN")
def bn(ctx: LayerContext) -> SSAValue:
    """SegNet's BN after compute_bn_statistics.py (2 blobs, bn_mode INFERENCE): y = scale * x +
    shift; the 4-blob form (scale, shift, mean, variance; ENet and yjxiong's fork): y = scale *
    (x - mean) / sqrt(variance + eps) + shift."""
    p = ctx.param("bn_param")
    mode = p.bn_mode  # the 4-blob form uses its statistics whatever the mode, as at Caffe's TEST
    channels = ctx.shape(0)[1]
    scale, shift = ctx.blob(0, [channels]).astype(np.float64), ctx.blob(1, [channels]).astype(np.float64)
    if ctx.num_blobs >= 4:
        mean, variance = ctx.blob(2, [channels]).astype(np.float64), ctx.blob(3, [channels]).astype(np.float64)
        scale = scale / np.sqrt(variance + float(p.eps))
        shift = shift - mean * scale
    elif mode != BN_INFERENCE:
        raise IrforgeError(
            "BN with scale and shift only and bn_mode LEARN normalises by the statistics of the batch",
            where=ctx.where,
            fix="run SegNet's compute_bn_statistics.py, which folds the statistics into scale and shift and sets bn_mode: INFERENCE",
            code="E205",
        )
    operands = [ctx.bottom(0), ctx.constant(scale.astype(np.float32), "/scale"), ctx.constant(shift.astype(np.float32), "/shift")]
    return ctx.value(ScaleShift, operands)


@caffe_extractor("Upsample")
def upsample(ctx: LayerContext) -> SSAValue:
    """Nearest-neighbour upsampling by an integer scale (YOLO forks); SegNet's unpooling with a
    MaxPool's mask (a second bottom) is refused."""
    p = ctx.param("upsample_param")
    if ctx.num_bottoms > 1:
        raise IrforgeError(
            "Upsample with a second bottom (SegNet's unpooling by a MaxPool's mask) is not supported",
            where=ctx.where,
            fix="convert the net with an extension implementing the unpooling (ir-extgen new --framework caffe)",
            code="E206",
        )
    n, c, h, w = ctx.shape(0, rank=4)
    scale_h = int(p.scale_h) if p.HasField("scale_h") else int(p.scale)
    scale_w = int(p.scale_w) if p.HasField("scale_w") else int(p.scale)
    height = int(p.upsample_h) if p.HasField("upsample_h") else h * scale_h - int(p.pad_out_h)
    width = int(p.upsample_w) if p.HasField("upsample_w") else w * scale_w - int(p.pad_out_w)
    if scale_h < 1 or scale_w < 1:
        raise ctx.fail(f"scale must be >= 1, got {scale_h}x{scale_w}")
    if (height, width) != (h * scale_h, w * scale_w):
        raise ctx.fail(f"an output of {height}x{width} from {h}x{w} at scale {scale_h}x{scale_w} is not supported without a mask")
    return ctx.value(
        Resample, [ctx.bottom(0)], mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor", sizes=[n, c, height, width]
    )


@caffe_extractor("Axpy")
def axpy(ctx: LayerContext) -> SSAValue:
    """SENet's Axpy: a * x + y, a [N, C, 1, 1] (or [N, C]) scaling x [N, C, H, W] per channel."""
    a, x, y = ctx.bottoms()
    a_shape, x_shape = ctx.shape(0), ctx.shape(1)
    if a_shape[:2] != x_shape[:2] or any(d != 1 for d in a_shape[2:]):
        raise ctx.fail(f"the scale {list(a_shape)} does not match the input {list(x_shape)} per channel")
    if len(a_shape) != len(x_shape):
        a = ctx.value(Reshape, [a], suffix="/scale", shape=[*a_shape[:2], *[1] * (len(x_shape) - 2)], special_zero=False)
    scaled = ctx.value(Eltwise, [a, x], suffix="/mul", operation="mul")
    return ctx.value(Eltwise, [scaled, y], operation="sum")


@caffe_extractor("ShuffleChannel")
def shuffle_channel(ctx: LayerContext) -> SSAValue:
    """ShuffleNet's channel shuffle: [N, G, C/G, ...] -> [N, C/G, G, ...]."""
    group = int(ctx.param("shuffle_channel_param").group)
    x = ctx.shape(0)
    if group < 1 or x[1] % group:
        raise ctx.fail(f"{x[1]} channels do not split into {group} groups")
    split = ctx.value(Reshape, [ctx.bottom(0)], suffix="/split", shape=[x[0], group, x[1] // group, *x[2:]], special_zero=False)
    swapped = ctx.value(Permute, [split], suffix="/swap", order=[0, 2, 1, *range(3, len(x) + 1)])
    return ctx.value(Reshape, [swapped], shape=list(x), special_zero=False)


@caffe_extractor("ReLU6")
def relu6(ctx: LayerContext) -> SSAValue:
    return ctx.value(Clamp, [ctx.bottom(0)], min=0.0, max=6.0)


@caffe_extractor("Reorg")
def reorg(ctx: LayerContext) -> SSAValue:
    """YOLO v2 forks' Reorg: darknet's reorg, i.e. ReorgYolo (the reverse direction refused)."""
    p = ctx.param("reorg_param")
    if p.reverse:
        raise ctx.fail("Reorg with reverse: true is not supported", fix="use the forward reorganisation")
    return ctx.value(ReorgYolo, [ctx.bottom(0)], stride=int(p.stride))


@caffe_extractor("Threshold")
def threshold(ctx: LayerContext) -> SSAValue:
    """1 where x > threshold, else 0."""
    bound = ctx.constant(np.array(float(ctx.param("threshold_param").threshold), np.float32), "/threshold")
    above = ctx.value(Eltwise, [ctx.bottom(0), bound], suffix="/greater", operation="greater")
    return ctx.value(Convert, [above], destination_type=f32)


@caffe_extractor("Embed")
def embed(ctx: LayerContext) -> SSAValue:
    """Rows of the [input_dim, num_output] weights picked by the (integral) input values, plus bias."""
    p = ctx.param("embed_param")
    weights = ctx.constant(ctx.blob(0, [int(p.input_dim), int(p.num_output)]), "/weights")
    indices = ctx.value(Convert, [ctx.bottom(0)], suffix="/indices", destination_type=i64)
    rows = ctx.value(Gather, [weights, indices], suffix="" if not p.bias_term else "/gather", axis=0)
    if not p.bias_term:
        return rows
    return ctx.value(Eltwise, [rows, ctx.constant(ctx.blob(1, [int(p.num_output)]), "/bias")], operation="sum")

