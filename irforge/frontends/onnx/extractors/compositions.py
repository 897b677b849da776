"""ONNX ops that are exact compositions of existing nn ops (no new dialect op needed).

OpenVINO's ONNX frontend decomposes these the same way (its opset has no CastLike, Size,
Celu, Shrink, ThresholdedRelu, Sinh/Cosh/Tan or RMSNormalization layer of its own in the
versions ovc targets, or expresses them by the ops used here):

    CastLike(x, like)               Convert(x, like's element type)
    Size(x)                         the element count, a constant (static shapes)
    EyeLike(x, k, dtype)            a constant
    MeanVarianceNormalization(x)    MVN over `axes`, eps 1e-9 outside the sqrt (ONNX's
                                    function body: (x - mean) / (sqrt(var) + 1e-9))
    Celu(x, alpha)                  alpha * elu(x / alpha)
    ThresholdedRelu(x, alpha)       Where(x > alpha, x, 0)
    Shrink(x, bias, lambd)          Where(x < -lambd, x + bias, Where(x > lambd, x - bias, 0))
    Sinh / Cosh / Tan               (e^x -/+ e^-x) / 2, sin / cos
    LpNormalization(x, axis, p)     x / sum(|x|) (p=1), x / sqrt(sum(x^2)) (p=2) along axis
                                    (a zero vector stays 0)
    RMSNormalization(x, scale)      x / sqrt(mean(x^2 over axis..) + eps) * scale (opset 23)
    Swish(x, alpha)                 nn.activation swish (opset 24's x * sigmoid(alpha x))
    Col2Im(x, image, block)         a transposed convolution, one group per channel, whose
                                    one-hot kernel puts input channel c*K + k at offset k of
                                    channel c's block (summing overlaps as Col2Im does; its
                                    full output cropped by the pads; MobileViTv2's fold)
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from xdsl.dialects.builtin import bf16, f16, f32, f64
from xdsl.ir import SSAValue

from irforge.dialects.nn import MVN, Activation, Convert, Deconvolution, Eltwise, Power, Reduce, Reshape, Select
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl

def _dtype(ctx: NodeContext, index: int = 0) -> np.dtype:
    return np.dtype(from_xdsl(ctx.input_type(index).element_type))


def _scalar(ctx: NodeContext, value: float, suffix: str, index: int = 0) -> SSAValue:
    dtype = _dtype(ctx, index)
    if dtype.kind in "iub" and not math.isfinite(value):  # numpy's cast raised on NaN / inf
        raise ctx.fail(f"attribute value {value} has no {dtype} equivalent (the input's element type)", fix="give a finite value")
    return ctx.constant(np.array(value, dtype), suffix)


def _static_shape(ctx: NodeContext, what: str, rank: int | None = None) -> tuple[int, ...]:
    shape = ctx.input_shape(0, rank)
    if DYN in shape:
        raise ctx.fail(f"{what} of a tensor with dims unknown at conversion ({list(shape)})", fix="give the input shapes (--input_shape)")
    return shape


def _axis(ctx: NodeContext, axis: int, rank: int, what: str = "axis") -> int:
    """`axis` in [-rank, rank), made non-negative; outside it a one-line error (a `% rank`
    would silently pick another axis, or divide by zero on a scalar)."""
    if not -rank <= axis < rank:
        raise ctx.fail(f"{what} {axis} is out of range for an input of rank {rank}", fix=f"use an axis in [{-rank}, {rank - 1}]")
    return axis % rank


def _ints(ctx: NodeContext, values: np.ndarray, what: str, low: int) -> list[int]:
    """A constant input of integers, each >= `low` (Col2Im's image/block shapes)."""
    if values.dtype.kind not in "iu":
        raise ctx.fail(f"{what} must be int64, got {values.dtype}", fix=f"give {what} as an int64 tensor")
    ints = [int(v) for v in values.reshape(-1)]
    if any(v < low for v in ints):
        raise ctx.fail(f"{what} {ints} has a value below {low}", fix=f"give {what} values >= {low}")
    return ints


@onnx_extractor("CastLike")
def cast_like(ctx: NodeContext) -> SSAValue:
    if ctx.attr("saturate", 1) != 1:
        raise ctx.fail("saturate=0 (float8 targets) is not supported", fix="cast to float32/float16/int32/int64/bool")
    return ctx.value(Convert, [ctx.input(0)], destination_type=ctx.input_type(1).element_type)


@onnx_extractor("Size")
def size(ctx: NodeContext) -> SSAValue:
    return ctx.constant(np.array(math.prod(_static_shape(ctx, "Size")), np.int64), "")


@onnx_extractor("EyeLike")
def eye_like(ctx: NodeContext) -> SSAValue:
    shape = _static_shape(ctx, "EyeLike", rank=2)
    dtype = ctx.attr("dtype")
    try:
        np_dtype = _dtype(ctx) if dtype is None else np.dtype(onnx.helper.tensor_dtype_to_np_dtype(int(dtype)))
    except (KeyError, ValueError):
        np_dtype = np.dtype(object)
    if np_dtype.kind not in "biuf":
        raise ctx.fail(f"dtype={dtype} is not a numeric ONNX element type", fix="use a float, integer or bool dtype (e.g. 1 for float32)")
    return ctx.constant(np.eye(shape[0], shape[1], int(ctx.attr("k", 0)), dtype=np_dtype), "")


@onnx_extractor("MeanVarianceNormalization")
def mean_variance_normalization(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.input_shape(0))
    axes = sorted({_axis(ctx, int(a), rank, "axes value") for a in ctx.attr("axes", [0, 2, 3])})
    if not axes:
        raise ctx.fail("axes is empty", fix="name the axes to normalise over (default [0, 2, 3])")
    return ctx.value(MVN, [ctx.input(0)], axes=axes, eps=1e-9, normalize_variance=True, eps_mode="outside_sqrt")


@onnx_extractor("Celu")
def celu(ctx: NodeContext) -> SSAValue:
    alpha = float(ctx.attr("alpha", 1.0))
    if alpha == 0.0:
        raise ctx.fail("alpha=0 divides by zero", fix="use a nonzero alpha")
    scaled = ctx.value(Eltwise, [ctx.input(0), _scalar(ctx, 1.0 / alpha, "/inv_alpha")], suffix="/scaled", operation="mul")
    elu = ctx.value(Activation, [scaled], suffix="/elu", kind="elu", alpha=1.0)
    return ctx.value(Eltwise, [elu, _scalar(ctx, alpha, "/alpha")], operation="mul")


@onnx_extractor("ThresholdedRelu")
def thresholded_relu(ctx: NodeContext) -> SSAValue:
    x = ctx.input(0)
    above = ctx.value(Eltwise, [x, _scalar(ctx, float(ctx.attr("alpha", 1.0)), "/alpha")], suffix="/above", operation="greater")
    return ctx.value(Select, [above, x, _scalar(ctx, 0.0, "/zero")])


@onnx_extractor("Shrink")
def shrink(ctx: NodeContext) -> SSAValue:
    x = ctx.input(0)
    bias, lambd = float(ctx.attr("bias", 0.0)), float(ctx.attr("lambd", 0.5))
    low = ctx.value(Eltwise, [x, _scalar(ctx, -lambd, "/low")], suffix="/below", operation="less")
    high = ctx.value(Eltwise, [x, _scalar(ctx, lambd, "/high")], suffix="/above", operation="greater")
    plus = ctx.value(Eltwise, [x, _scalar(ctx, bias, "/bias")], suffix="/plus", operation="sum")
    minus = ctx.value(Eltwise, [x, _scalar(ctx, bias, "/bias2")], suffix="/minus", operation="sub")
    upper = ctx.value(Select, [high, minus, _scalar(ctx, 0.0, "/zero")], suffix="/upper")
    return ctx.value(Select, [low, plus, upper])


def _exp_pair(ctx: NodeContext) -> tuple[SSAValue, SSAValue]:
    x = ctx.input(0)
    ex = ctx.value(Activation, [x], suffix="/exp", kind="exp")
    negated = ctx.value(Activation, [x], suffix="/neg", kind="neg")
    return ex, ctx.value(Activation, [negated], suffix="/exp_neg", kind="exp")


@onnx_extractor("Sinh", "Cosh")
def hyperbolic(ctx: NodeContext) -> SSAValue:
    ex, ex_neg = _exp_pair(ctx)
    both = ctx.value(Eltwise, [ex, ex_neg], suffix="/pair", operation="sub" if ctx.node.op_type == "Sinh" else "sum")
    return ctx.value(Eltwise, [both, _scalar(ctx, 0.5, "/half")], operation="mul")


@onnx_extractor("Tan")
def tan(ctx: NodeContext) -> SSAValue:
    sin = ctx.value(Activation, [ctx.input(0)], suffix="/sin", kind="sin")
    cos = ctx.value(Activation, [ctx.input(0)], suffix="/cos", kind="cos")
    return ctx.value(Eltwise, [sin, cos], operation="div")


@onnx_extractor("LpNormalization")
def lp_normalization(ctx: NodeContext) -> SSAValue:
    p = int(ctx.attr("p", 2))
    if p not in (1, 2):
        raise ctx.fail(f"p={p} is not a norm LpNormalization defines", fix="use p=1 or p=2")
    x = ctx.input(0)
    axis = _axis(ctx, int(ctx.attr("axis", -1)), len(ctx.input_shape(0)))
    if p == 1:
        magnitude = ctx.value(Activation, [x], suffix="/abs", kind="abs")
        norm = ctx.value(Reduce, [magnitude], suffix="/norm", operation="sum", axes=[axis], keep_dims=True)
    else:
        square = ctx.value(Eltwise, [x, x], suffix="/square", operation="mul")
        total = ctx.value(Reduce, [square], suffix="/sum", operation="sum", axes=[axis], keep_dims=True)
        norm = ctx.value(Activation, [total], suffix="/norm", kind="sqrt")
    # a zero vector stays zero (ONNX's reference and onnxruntime), not 0 / 0
    zero = ctx.value(Eltwise, [norm, _scalar(ctx, 0.0, "/zero")], suffix="/is_zero", operation="equal")
    safe = ctx.value(Select, [zero, _scalar(ctx, 1.0, "/one"), norm], suffix="/safe_norm")
    return ctx.value(Eltwise, [x, safe], operation="div")


@onnx_extractor("RMSNormalization")
def rms_normalization(ctx: NodeContext) -> SSAValue:
    if int(ctx.attr("stash_type", 1)) != 1:
        raise ctx.fail("stash_type other than float32 is not supported", fix="export with stash_type=1 (float32)")
    x = ctx.input(0)
    rank = len(ctx.input_shape(0))
    axes = list(range(_axis(ctx, int(ctx.attr("axis", -1)), rank), rank))
    square = ctx.value(Eltwise, [x, x], suffix="/square", operation="mul")
    mean = ctx.value(Reduce, [square], suffix="/mean", operation="mean", axes=axes, keep_dims=True)
    shifted = ctx.value(Power, [mean], suffix="/mean_eps", shift=float(ctx.attr("epsilon", 1e-5)))
    inv = ctx.value(Power, [shifted], suffix="/inv_rms", power=-0.5)
    normalized = ctx.value(Eltwise, [x, inv], suffix="/normalized", operation="mul")
    return ctx.value(Eltwise, [normalized, ctx.input(1)], operation="mul")


@onnx_extractor("Swish")
def swish(ctx: NodeContext) -> SSAValue:
    if ctx.input_type(0).element_type not in (f16, f32, f64, bf16):  # ONNX's T: floats; OpenVINO refuses others
        raise ctx.fail(f"Swish of a {ctx.input_type(0).element_type} input: a float tensor is needed")
    return ctx.value(Activation, [ctx.input(0)], kind="swish", alpha=float(ctx.attr("alpha", 1.0)))


@onnx_extractor("Col2Im")
def col2im(ctx: NodeContext) -> SSAValue:
    image, block = ctx.constant_input(1), ctx.constant_input(2)
    if image is None or block is None:
        raise ctx.fail("image_shape or block_shape computed at run time is not supported", fix="give them as constants")
    image, block = _ints(ctx, image, "image_shape", 1), _ints(ctx, block, "block_shape", 1)
    spatial = len(block)
    if spatial == 0 or len(image) != spatial:
        raise ctx.fail(f"image_shape {image} and block_shape {block} must name the same number (>= 1) of spatial dims",
                       fix="give one image and one block size per spatial dim")
    n, channels_blocks, length = _static_shape(ctx, "Col2Im", rank=3)
    dilations = [int(d) for d in ctx.attr("dilations", [1] * spatial)]
    strides = [int(d) for d in ctx.attr("strides", [1] * spatial)]
    pads = [int(d) for d in ctx.attr("pads", [0] * (2 * spatial))]
    if len(dilations) != spatial or len(strides) != spatial or len(pads) != 2 * spatial:
        raise ctx.fail(f"dilations {dilations}, strides {strides} and pads {pads} must hold {spatial}, {spatial} and {2 * spatial} values",
                       fix="give one dilation and stride per spatial dim and a begin and end pad for each")
    if min(dilations + strides) < 1 or min(pads) < 0:
        raise ctx.fail(f"dilations {dilations} and strides {strides} must be >= 1 and pads {pads} >= 0", fix="check the attributes")
    per_channel = math.prod(block)
    if channels_blocks % per_channel:
        raise ctx.fail(f"{channels_blocks} input channels are not a multiple of the block size {per_channel}", fix="check block_shape")
    channels = channels_blocks // per_channel
    counts = [(image[i] + pads[i] + pads[spatial + i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(spatial)]
    if min(counts) < 1 or math.prod(counts) != length:
        raise ctx.fail(f"{length} blocks do not tile an image of {image} with these pads/strides ({counts})", fix="check image_shape")
    blocks = ctx.value(Reshape, [ctx.input(0)], suffix="/blocks", shape=[n, channels_blocks, *counts], special_zero=False)
    weights = np.zeros((channels_blocks, 1, *block), _dtype(ctx))
    for c in range(channels):
        for k, offset in enumerate(np.ndindex(*block)):
            weights[(c * per_channel + k, 0, *offset)] = 1.0
    # a stride that does not divide the padded image leaves its last rows/columns without
    # blocks: zeros there (output_padding, below the stride)
    covered = [strides[i] * (counts[i] - 1) + dilations[i] * (block[i] - 1) + 1 - pads[i] - pads[spatial + i] for i in range(spatial)]
    extra = [image[i] - covered[i] for i in range(spatial)]
    props: dict[str, object] = {}
    if any(extra):
        props["output_padding"] = extra
    return ctx.value(Deconvolution, [blocks, ctx.constant(weights, "/one_hot")], strides=strides, dilations=dilations,
                     pads_begin=pads[:spatial], pads_end=pads[spatial:], group=channels, **props)
