"""Layers of the common Caffe forks and the remaining BVLC element-wise layers, on existing
`nn` ops: SegNet/ENet's `BN`, `Upsample` (scale, or unpooling by a MaxPool's mask), SENet's `Axpy`, ShuffleNet's
`ShuffleChannel`, MobileNet forks' `ReLU6`, YOLO forks' `Reorg` and `Region`, and BVLC's `Threshold` and
`Embed`."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i64
from xdsl.ir import SSAValue

from irforge.dialects.nn import Clamp, Convert, Eltwise, Gather, MaxPoolIndices, MaxUnpool, Permute, RegionYolo, Reshape, Resample, ReorgYolo, ScaleShift
from irforge.dialects.nn.base import DYN
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
    """The SegNet / ENet forks' Upsample: with a second bottom, unpooling by a MaxPool's mask
    (each value written at the flat index h * W + w its mask names in an output plane of
    upsample_h x upsample_w, else scale * size - pad_out; zeros elsewhere); with one bottom
    (YOLO forks), nearest-neighbour upsampling by an integer scale."""
    p = ctx.param("upsample_param")
    if len(ctx.shape(0)) != 4:
        raise ctx.fail(f"needs a 4-D input (N, C, H, W), got shape {list(ctx.shape(0))}")
    n, c, h, w = ctx.shape(0)
    scale_h = int(p.scale_h) if p.HasField("scale_h") else int(p.scale)
    scale_w = int(p.scale_w) if p.HasField("scale_w") else int(p.scale)
    if scale_h < 1 or scale_w < 1:
        raise ctx.fail(f"scale must be >= 1, got {scale_h}x{scale_w}")
    height = int(p.upsample_h) if p.HasField("upsample_h") else h * scale_h - int(p.pad_out_h)
    width = int(p.upsample_w) if p.HasField("upsample_w") else w * scale_w - int(p.pad_out_w)
    if ctx.num_bottoms > 1:
        return unpool(ctx, height, width)
    if (height, width) != (h * scale_h, w * scale_w):
        raise ctx.fail(f"an output of {height}x{width} from {h}x{w} at scale {scale_h}x{scale_w} is not supported without a mask")
    return ctx.value(
        Resample, [ctx.bottom(0)], mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor", sizes=[n, c, height, width]
    )


def unpool(ctx: LayerContext, height: int, width: int) -> SSAValue:
    """Upsample's unpooling by the mask (float flat indices) of bottom 1."""
    if ctx.num_bottoms != 2 or ctx.shape(1) != ctx.shape(0):
        raise IrforgeError(
            f"Upsample unpools its first bottom {list(ctx.shape(0))} by a mask of the same shape, got bottoms {[list(ctx.shape(i)) for i in range(ctx.num_bottoms)]}",
            where=ctx.where,
            fix="give the values and the mask top of the MaxPool they came from (bottom: values, bottom: mask)",
            code="E206",
        )
    mask = ctx.bottom(1)
    source = pooled_plane(mask)
    if source is not None and source > height * width:
        raise IrforgeError(
            f"the mask indexes a plane of {source} positions (its MaxPool's input), more than the {height}x{width} output",
            where=ctx.where,
            fix="set upsample_h / upsample_w to the MaxPool input's height and width",
            code="E206",
        )
    indices = ctx.value(Convert, [mask], suffix="/indices", destination_type=i64)
    return ctx.value(MaxUnpool, [ctx.bottom(0), indices], spatial=[height, width])


def pooled_plane(mask: SSAValue) -> int | None:
    """The number of positions of the plane a mask made by Caffe's Pooling indexes (None when
    the mask comes from elsewhere)."""
    owner = mask.owner
    if isinstance(owner, Convert):
        owner = owner.operands[0].owner
    if not isinstance(owner, MaxPoolIndices):
        return None
    return int(np.prod(owner.operand_shape(0)[2:]))


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
    """YOLO v2 forks' Reorg: darknet's reorg_cpu(bottom, W, H, C, N, stride, forward=reverse).
    reverse: false is ReorgYolo. reverse: true writes top[c mod C', h * s + (c div C') div s,
    w * s + (c div C') mod s] = bottom[c, h, w], C' = C / s^2, into [N, C', H * s, W * s]:
    a DepthToSpace with the block offset first in the channel (DCR), built as
    reshape [N, s, s, C', H, W] -> permute -> reshape."""
    p = ctx.param("reorg_param")
    s = int(p.stride)
    if not p.reverse:
        return ctx.value(ReorgYolo, [ctx.bottom(0)], stride=s)
    n, c, h, w = ctx.shape(0) if len(ctx.shape(0)) == 4 else (None,) * 4
    if c is None or s < 1 or DYN in (c, h, w) or c % (s * s):
        raise ctx.fail(f"Reorg with reverse: true needs a static [N, C, H, W] input with C a multiple of stride^2 = {s * s}, got {list(ctx.shape(0))}")
    blocks = ctx.value(Reshape, [ctx.bottom(0)], suffix="/blocks", shape=[n, s, s, c // (s * s), h, w], special_zero=False)
    spread = ctx.value(Permute, [blocks], suffix="/spread", order=[0, 3, 4, 1, 5, 2])
    return ctx.value(Reshape, [spread], shape=[n, c // (s * s), h * s, w * s], special_zero=False)


@caffe_extractor("Region")
def region(ctx: LayerContext) -> SSAValue:
    """YOLO v2 Caffe forks' Region, as darknet's forward_region_layer computes it on [N, num *
    (coords + 1 + classes), H, W] (shape kept): sigmoid of x, y and the objectness, softmax over
    the class scores: RegionYolo with do_softmax and no flattening. anchors / biases only serve
    the box decoding that follows; they are carried on the op."""
    p = ctx.param("region_param")
    if p.HasField("boxes_of_each_grid"):
        # caffe-yolov2's Region transposes to [N, H*W, boxes * size] and leaves x, y raw
        raise IrforgeError(
            "region_param.boxes_of_each_grid is caffe-yolov2's Region, which transposes the output to channels-last and applies no sigmoid to x and y",
            where=ctx.where,
            fix="use darknet's form (num: regions) if the net was trained with darknet's region layer, or map the layer with an extension",
            code="E207",
        )
    if not (p.HasField("num") or p.anchors or p.biases):
        # caffe-yolov2's form with boxes_of_each_grid left at its default reads the same
        raise IrforgeError(
            "region_param sets neither num nor anchors/biases, so it may be caffe-yolov2's Region (boxes_of_each_grid left at its default: channels-last, no sigmoid on x and y) as well as darknet's",
            where=ctx.where,
            fix="write num: <regions> (darknet's form) or boxes_of_each_grid: <regions> (caffe-yolov2's, not supported) in region_param",
            code="E207",
        )
    if not p.softmax:
        raise IrforgeError(
            "region_param.softmax: false leaves the class scores raw (darknet), which RegionYolo cannot express",
            where=ctx.where,
            fix="set softmax: true if the net was trained with it, or map the layer with an extension",
            code="E207",
        )
    anchors, biases = [float(v) for v in p.anchors], [float(v) for v in p.biases]
    if anchors and biases and anchors != biases:
        raise ctx.fail("region_param gives both anchors and biases, and they differ")
    anchors = anchors or biases
    num = int(p.num)
    if anchors and len(anchors) != 2 * num:
        raise ctx.fail(f"region_param has {len(anchors)} anchor values, expected 2 * num = {2 * num}")
    return ctx.value(
        RegionYolo,
        [ctx.bottom(0)],
        coords=int(p.coords),
        classes=int(p.classes),
        num=num,
        do_softmax=True,
        anchors=anchors or None,
        axis=1,
        end_axis=1,  # flattening [C] alone: the shape is kept, as in the forks' Reshape
    )


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

