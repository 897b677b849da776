"""TensorFlow's layout-sensitive ops (convolutions, pooling, batch norm, resize, depth/space
shuffles), built in NCHW between the transposes of `NodeContext.to_nchw`/`to_nhwc`."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import BatchNormalization, Convolution, Deconvolution, Permute, Pooling, Resample, Reshape
from irforge.dialects.nn.base import DYN
from irforge.frontends.tf.registry import NodeContext, tf_extractor


def window(ctx: NodeContext) -> dict[str, object]:
    """strides and padding of a windowed op in nn property form."""
    padding = ctx.attr("padding", "VALID")
    props: dict[str, object] = {"strides": ctx.spatial("strides")}
    if padding == "SAME":
        props["auto_pad"] = "same_upper"
    elif padding == "VALID":
        props["auto_pad"] = "valid"
    elif padding == "EXPLICIT":
        pads = [int(p) for p in ctx.attr("explicit_paddings", [])]
        if len(pads) != 8:
            raise ctx.fail("explicit_paddings needs 8 values")
        hw = pads[2:6] if ctx.nhwc() else pads[4:8]
        props["pads_begin"], props["pads_end"] = [hw[0], hw[2]], [hw[1], hw[3]]
    else:
        raise ctx.fail(f"padding '{padding}' is not supported", fix="use SAME, VALID or EXPLICIT")
    return props


def _filter_oihw(ctx: NodeContext, index: int, order: list[int]) -> SSAValue:
    """The filter input transposed from TensorFlow's HWIO to OIHW (folded when constant)."""
    return ctx.value(Permute, [ctx.input(index)], suffix="/filter", order=order)


@tf_extractor("Conv2D")
def conv2d(ctx: NodeContext) -> SSAValue:
    x = ctx.to_nchw(ctx.input(0))
    kh, kw, cin, _ = ctx.input_shape(1, rank=4)
    channels = ctx.input_shape(0, rank=4)[3 if ctx.nhwc() else 1]
    group = channels // cin if DYN not in (channels, cin) and cin else 1
    y = ctx.value(
        Convolution, [x, _filter_oihw(ctx, 1, [3, 2, 0, 1])], suffix="/conv",
        dilations=ctx.spatial("dilations"), group=group, **window(ctx),
    )
    return ctx.to_nhwc(y)


@tf_extractor("DepthwiseConv2dNative")
def depthwise(ctx: NodeContext) -> SSAValue:
    kh, kw, cin, multiplier = ctx.input_shape(1, rank=4)
    # [kh, kw, C, M] -> [C*M, 1, kh, kw]: output channel c*M + m reads input channel c
    w = ctx.value(Reshape, [ctx.input(1)], suffix="/filter_flat", shape=[kh, kw, cin * multiplier, 1])
    w = ctx.value(Permute, [w], suffix="/filter", order=[2, 3, 0, 1])
    y = ctx.value(
        Convolution, [ctx.to_nchw(ctx.input(0)), w], suffix="/conv",
        dilations=ctx.spatial("dilations"), group=cin, **window(ctx),
    )
    return ctx.to_nhwc(y)


@tf_extractor("Conv2DBackpropInput")
def conv2d_transpose(ctx: NodeContext) -> SSAValue:
    sizes = ctx.ints_input(0, "input_sizes")
    out_h, out_w = sizes[1:3] if ctx.nhwc() else sizes[2:4]
    x = ctx.to_nchw(ctx.input(2))
    in_h, in_w = ctx.input_shape(2, rank=4)[1:3] if ctx.nhwc() else ctx.input_shape(2, rank=4)[2:4]
    kh, kw = ctx.input_shape(1, rank=4)[:2]
    strides, dilations = ctx.spatial("strides"), ctx.spatial("dilations")
    begin, end, extra = [], [], []
    for size, out, k, s, d in zip((in_h, in_w), (out_h, out_w), (kh, kw), strides, dilations):
        if ctx.attr("padding") == "VALID":
            total = 0
        else:  # SAME: the forward convolution's padding, smaller half first
            total = max((size - 1) * s + (k - 1) * d + 1 - out, 0)
        begin.append(total // 2)
        end.append(total - total // 2)
        extra.append(out - ((size - 1) * s + (k - 1) * d + 1 - total))
    props: dict[str, object] = {"strides": strides, "dilations": dilations, "pads_begin": begin, "pads_end": end}
    if any(extra):
        props["output_padding"] = extra
    # TensorFlow's filter is [kh, kw, out channels, in channels]; nn's [in, out, kh, kw]
    y = ctx.value(Deconvolution, [x, _filter_oihw(ctx, 1, [3, 2, 0, 1])], suffix="/deconv", **props)
    return ctx.to_nhwc(y)


@tf_extractor("MaxPool", "AvgPool")
def pool(ctx: NodeContext) -> SSAValue:
    method = "max" if ctx.node.op == "MaxPool" else "avg"
    # TensorFlow's SAME average pooling divides by the number of real (unpadded) elements
    y = ctx.value(
        Pooling, [ctx.to_nchw(ctx.input(0))], suffix="/pool", method=method,
        kernel=ctx.spatial("ksize"), exclude_pad=True, **window(ctx),
    )
    return ctx.to_nhwc(y)


@tf_extractor("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
def fused_batch_norm(ctx: NodeContext) -> list[SSAValue]:
    if ctx.attr("is_training", False):
        raise ctx.fail("training-mode FusedBatchNorm is not supported", fix="freeze the graph for inference")
    operands = [ctx.to_nchw(ctx.input(0)), *(ctx.input(i) for i in range(1, 5))]
    y = ctx.value(BatchNormalization, operands, suffix="/bn", epsilon=float(ctx.attr("epsilon", 1e-3)))
    return [ctx.to_nhwc(y)]


@tf_extractor("ResizeBilinear", "ResizeNearestNeighbor")
def resize(ctx: NodeContext) -> SSAValue:
    height, width = ctx.ints_input(1, "size")
    align, half = bool(ctx.attr("align_corners", False)), bool(ctx.attr("half_pixel_centers", False))
    if ctx.node.op == "ResizeBilinear":
        mode, nearest = "linear", "floor"
        coordinates = "align_corners" if align else "half_pixel" if half else "asymmetric"
    else:
        mode = "nearest"
        coordinates = "align_corners" if align else "tf_half_pixel_for_nn" if half else "asymmetric"
        nearest = "round_prefer_ceil" if align else "floor"
    x = ctx.value(Permute, [ctx.input(0)], suffix="/to_nchw", order=[0, 3, 1, 2])
    n, c = ctx.input_shape(0, rank=4)[0], ctx.input_shape(0)[3]
    if DYN in (n, c):
        raise ctx.fail("resizing needs static batch and channel sizes", fix="give static input shapes")
    y = ctx.value(
        Resample, [x], suffix="/resize", mode=mode, sizes=[n, c, height, width],
        coordinate_transformation_mode=coordinates, nearest_mode=nearest,
    )
    return ctx.value(Permute, [y], suffix="/to_nhwc", order=[0, 2, 3, 1])


def _block_shuffle(ctx: NodeContext, x: SSAValue, split: list[int], order: list[int], result: list[int]) -> SSAValue:
    x = ctx.value(Reshape, [x], suffix="/split", shape=split)
    x = ctx.value(Permute, [x], suffix="/shuffle", order=order)
    return ctx.value(Reshape, [x], suffix="/merge", shape=result)


@tf_extractor("DepthToSpace")
def depth_to_space(ctx: NodeContext) -> SSAValue:
    bs = int(ctx.attr("block_size"))
    n, h, w, c = ctx.input_shape(0, rank=4) if ctx.nhwc() else np.array(ctx.input_shape(0, rank=4))[[0, 2, 3, 1]]
    if DYN in (h, w, c):
        raise ctx.fail("DepthToSpace needs static sizes", fix="give static input shapes")
    # out[n, h*bs + i, w*bs + j, c] = in[n, h, w, (i*bs + j)*C' + c]: ONNX's DCR order
    x = ctx.to_nchw(ctx.input(0))
    y = _block_shuffle(ctx, x, [0, bs, bs, c // (bs * bs), h, w], [0, 3, 4, 1, 5, 2], [0, c // (bs * bs), h * bs, w * bs])
    return ctx.to_nhwc(y)


@tf_extractor("SpaceToDepth")
def space_to_depth(ctx: NodeContext) -> SSAValue:
    bs = int(ctx.attr("block_size"))
    n, h, w, c = ctx.input_shape(0, rank=4) if ctx.nhwc() else np.array(ctx.input_shape(0, rank=4))[[0, 2, 3, 1]]
    if DYN in (h, w, c):
        raise ctx.fail("SpaceToDepth needs static sizes", fix="give static input shapes")
    x = ctx.to_nchw(ctx.input(0))
    y = _block_shuffle(ctx, x, [0, c, h // bs, bs, w // bs, bs], [0, 3, 5, 1, 2, 4], [0, c * bs * bs, h // bs, w // bs])
    return ctx.to_nhwc(y)
