"""ONNX ops of old files with no nn op of their own, written as the standard ops that define
them (node_expansion.py): the experimental ops opset 10 removed (onnxruntime still runs them;
caffe2 / CNTK / CoreML exports use them) and a few rare standard ones.

    ImageScaler(x, scale, bias)       x * scale + bias[c] (per channel, NCHW)
    Crop(x, border, scale)            Slice of H and W: from (top, left), `scale` = (h, w) in
                                      size, else up to (H - bottom, W - right)
    Affine(x, alpha, beta)            alpha * x + beta
    Scale(x, scale)                   x * scale
    ScaledTanh(x, alpha, beta)        alpha * tanh(beta * x)
    ParametricSoftplus(x, alpha, beta) alpha * softplus(beta * x)
    GlobalLpPool(x, p)                (sum |x|^p over the spatial axes)^(1/p)
    LpPool(x, p, kernel, ...)         (AveragePool(|x|^p, count_include_pad=1) * kernel
                                      size)^(1/p): padding adds zeros, as LpPool's sum does
    Hardmax(x, axis)                  1 where ArgMax (first maximum) is, else 0, along axis;
                                      before opset 13 over the input coerced to 2-D at axis
    MaxUnpool(x, indices, shape)      x scattered (ScatterElements) into zeros at the
                                      indices MaxPool gave (flat over the whole output tensor)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import onnx
from xdsl.ir import SSAValue

from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.onnx.checked_constants import int_list
from irforge.frontends.onnx.node_expansion import Expansion
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl


def _dtype(ctx: NodeContext) -> np.dtype:
    return np.dtype(from_xdsl(ctx.input_type(0).element_type))


def _static(ctx: NodeContext, what: str) -> tuple[int, ...]:
    shape = ctx.input_shape(0)
    if DYN in shape:
        raise ctx.fail(f"{what} of a tensor with dims unknown at conversion ({list(shape)})", fix="give the input shapes (--input_shape)")
    return shape


def _numbers(ctx: NodeContext, name: str) -> list[float]:
    """A list attribute of numbers (these experimental ops have no schema in the onnx
    package, so nothing else checks the attribute's type)."""
    value = ctx.attr(name, [])
    if not isinstance(value, list) or not all(isinstance(v, int | float) for v in value):
        raise IrforgeError(f"attribute {name} must be a list of numbers, got {value!r:.60}", where=ctx.where,
                           fix=f"give {name} as a list of numbers", code="E136")
    return value


def _unsupported(ctx: NodeContext, attribute: str, value: object, fix: str) -> IrforgeError:
    return IrforgeError(f"attribute {attribute}={value!r} is not supported", where=ctx.where, fix=fix, code="E136")


@onnx_extractor("ImageScaler")
def image_scaler(ctx: NodeContext) -> SSAValue:
    e = Expansion(ctx)
    shape = ctx.input_shape(0)
    bias = [float(b) for b in _numbers(ctx, "bias")]
    if len(shape) < 2 or (bias and shape[1] not in (len(bias), DYN)):
        raise ctx.fail(f"bias has {len(bias)} values for an input of shape {list(shape)}", fix="give one bias per channel (axis 1)")
    y = e.one("Mul", [e.input(0), e.constant(float(ctx.attr("scale", 1.0)), _dtype(ctx))])
    if bias:
        y = e.one("Add", [y, e.constant(np.array(bias).reshape([len(bias)] + [1] * (len(shape) - 2)), _dtype(ctx))])
    return e.result(y)


@onnx_extractor("Crop")
def crop(ctx: NodeContext) -> SSAValue:
    shape = _static(ctx, "Crop")
    border = [int(b) for b in _numbers(ctx, "border")]
    scale = [int(s) for s in _numbers(ctx, "scale")]
    if len(shape) != 4 or len(border) != 4 or len(scale) not in (0, 2):
        raise ctx.fail(f"Crop needs an NCHW input, 4 border values and 0 or 2 scale values (got shape {list(shape)}, border {border}, scale {scale})",
                       fix="give border as (left, top, right, bottom) and scale as (height, width)")
    left, top, right, bottom = border
    ends = [top + scale[0], left + scale[1]] if scale else [shape[2] - bottom, shape[3] - right]
    if not (0 <= top < ends[0] <= shape[2] and 0 <= left < ends[1] <= shape[3]):
        raise ctx.fail(f"border {border} / scale {scale} crop outside the {shape[2]}x{shape[3]} input", fix="give a crop inside the image")
    e = Expansion(ctx)
    return e.result(e.one("Slice", [e.input(0), e.constant([top, left], np.int64), e.constant(ends, np.int64), e.constant([2, 3], np.int64)]))


def _scaled(ctx: NodeContext, op_type: str) -> SSAValue:
    """alpha * op(beta * x)."""
    e = Expansion(ctx)
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    inner = e.one(op_type, [e.one("Mul", [e.input(0), e.constant(beta, _dtype(ctx))])])
    return e.result(e.one("Mul", [inner, e.constant(alpha, _dtype(ctx))]))


@onnx_extractor("Affine")
def affine(ctx: NodeContext) -> SSAValue:
    e = Expansion(ctx)
    y = e.one("Mul", [e.input(0), e.constant(float(ctx.attr("alpha", 1.0)), _dtype(ctx))])
    return e.result(e.one("Add", [y, e.constant(float(ctx.attr("beta", 0.0)), _dtype(ctx))]))


@onnx_extractor("Scale")
def scale(ctx: NodeContext) -> SSAValue:
    e = Expansion(ctx)
    return e.result(e.one("Mul", [e.input(0), e.constant(float(ctx.attr("scale", 1.0)), _dtype(ctx))]))


@onnx_extractor("ScaledTanh")
def scaled_tanh(ctx: NodeContext) -> SSAValue:
    return _scaled(ctx, "Tanh")


@onnx_extractor("ParametricSoftplus")
def parametric_softplus(ctx: NodeContext) -> SSAValue:
    return _scaled(ctx, "Softplus")


def _p(ctx: NodeContext) -> float:
    p = float(ctx.attr("p", 2))
    if not p > 0 or not math.isfinite(p):
        raise _unsupported(ctx, "p", p, "give a finite p > 0")
    return p


def _power_sum_root(ctx: NodeContext, e: Expansion, p: float, pooled: Callable[[str], str]) -> SSAValue:
    """(pooled(|x|^p))^(1/p), skipping the powers when p is 1."""
    dtype = _dtype(ctx)
    powered = e.one("Abs", [e.input(0)])
    if p != 1.0:
        powered = e.one("Pow", [powered, e.constant(p, dtype)])
    y = pooled(powered)
    if p != 1.0:
        y = e.one("Pow", [y, e.constant(1.0 / p, dtype)])
    return e.result(y)


@onnx_extractor("GlobalLpPool")
def global_lp_pool(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.input_shape(0))
    if rank < 3:
        raise ctx.fail(f"GlobalLpPool needs N, C and spatial axes, got rank {rank}")
    e = Expansion(ctx)
    axes = e.constant(list(range(2, rank)), np.int64)
    return _power_sum_root(ctx, e, _p(ctx), lambda v: e.one("ReduceSum", [v, axes], keepdims=1))


@onnx_extractor("LpPool")
def lp_pool(ctx: NodeContext) -> SSAValue:
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    if any(int(d) != 1 for d in ctx.attr("dilations", [1] * len(kernel))):
        raise _unsupported(ctx, "dilations", ctx.attr("dilations"), "use LpPool without dilations")
    if int(ctx.attr("ceil_mode", 0)):
        raise _unsupported(ctx, "ceil_mode", 1, "use ceil_mode=0 (pad the input instead)")
    pool_attrs = {"kernel_shape": kernel, "count_include_pad": 1}
    for name in ("strides", "pads", "auto_pad"):
        value = ctx.attr(name)
        if value is not None:
            pool_attrs[name] = value
    e = Expansion(ctx)
    area = e.constant(float(math.prod(kernel)), _dtype(ctx))
    return _power_sum_root(ctx, e, _p(ctx), lambda v: e.one("Mul", [e.one("AveragePool", [v], **pool_attrs), area]))


@onnx_extractor("Hardmax")
def hardmax(ctx: NodeContext) -> SSAValue:
    shape = ctx.input_shape(0)
    rank = len(shape)
    axis = int(ctx.attr("axis", -1 if ctx.opset >= 13 else 1))
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for an input of rank {rank}", fix=f"use an axis in [{-rank}, {rank - 1}]")
    axis %= rank
    e = Expansion(ctx)
    x = e.input(0)
    coerced = ctx.opset < 13 and axis != rank - 1  # Hardmax-1/11: over the input flattened at axis
    if coerced:
        _static(ctx, "Hardmax before opset 13 over several axes")
        x, axis = e.one("Flatten", [x], axis=axis), 1
    size = (math.prod(shape[axis:]) if coerced else shape[axis])
    if size == DYN or size < 0:
        raise ctx.fail("Hardmax along an axis of unknown size", fix="give the input shapes (--input_shape)")
    out_rank = 2 if coerced else rank
    positions = e.constant(np.arange(size, dtype=np.int64).reshape([size if i == axis else 1 for i in range(out_rank)]))
    first = e.one("ArgMax", [x], axis=axis, keepdims=1)
    y = e.one("Cast", [e.one("Equal", [first, positions])], to=onnx.helper.np_dtype_to_tensor_dtype(_dtype(ctx)))
    if coerced:
        y = e.one("Reshape", [y, e.constant(list(shape), np.int64)])
    return e.result(y)


@onnx_extractor("MaxUnpool")
def max_unpool(ctx: NodeContext) -> SSAValue:
    shape = _static(ctx, "MaxUnpool")
    spatial = len(shape) - 2
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    strides = [int(s) for s in ctx.attr("strides", [1] * spatial)]
    pads = [int(p) for p in ctx.attr("pads", [0] * 2 * spatial)]
    if spatial < 1 or len(kernel) != spatial or len(strides) != spatial or len(pads) != 2 * spatial:
        raise ctx.fail(f"kernel_shape {kernel}, strides {strides}, pads {pads} do not fit an input of shape {list(shape)}",
                       fix="give one kernel size and stride per spatial axis and a begin and end pad for each")
    if ctx.has_input(2):
        out = int_list(ctx, ctx.required_constant(2, "output_shape"), "output_shape")
    else:
        out = [*shape[:2], *((shape[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[spatial + i] for i in range(spatial))]
    if len(out) != len(shape) or out[:2] != list(shape[:2]) or min(out) < 1:
        raise ctx.fail(f"output shape {out} does not fit an input of shape {list(shape)}", fix="give an output_shape with the input's N and C")
    e = Expansion(ctx)
    zeros = e.value(ctx.filled([math.prod(out)], np.zeros((), _dtype(ctx)), "/zeros"))
    flat = e.constant([-1], np.int64)
    scattered = e.one("ScatterElements", [zeros, e.one("Reshape", [e.input(1), flat]), e.one("Reshape", [e.input(0), flat])], axis=0)
    return e.result(e.one("Reshape", [scattered, e.constant(out, np.int64)]))
