"""ONNX Gemm, MatMul and normalisations with learned scale -> nn linear ops."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import MVN, BatchNormalization, Eltwise, FullyConnected, MatMul, Power, Reduce, ScaleShift
from irforge.frontends.onnx.mixed_floats import converted_to
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl


def _scaled(ctx: NodeContext, value: SSAValue, factor: float, suffix: str) -> SSAValue:
    if factor == 1.0:
        return value
    dtype = from_xdsl(value.type.element_type)  # type: ignore[attr-defined]
    return ctx.value(Eltwise, [value, ctx.constant(np.array(factor, dtype), suffix + "/factor")], suffix=suffix, operation="mul")


@onnx_extractor("Gemm")
def gemm(ctx: NodeContext) -> SSAValue:
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    trans_a, trans_b = bool(ctx.attr("transA", 0)), bool(ctx.attr("transB", 0))
    b = ctx.constant_input(1)
    c = ctx.constant_input(2) if ctx.has_input(2) else None
    out_features = ctx.input_shape(1, rank=2)[0 if trans_b else 1]  # B is a matrix (the spec)
    bias_fits = not ctx.has_input(2) or (c is not None and c.size == out_features and c.ndim <= 2 and c.shape[-1] == out_features)
    if not trans_a and b is not None and bias_fits:
        # the common classifier form: y = x W^T + b with constant W and a per-feature bias
        if trans_b and alpha == 1.0:  # B is W already: its own value, not a copy (Gemms sharing B share it)
            operands = [ctx.input(0), ctx.input(1)]
        else:
            weights = (b if trans_b else b.T) * np.asarray(alpha, b.dtype)
            operands = [ctx.input(0), ctx.constant(np.ascontiguousarray(weights), "/weights")]
        if c is not None:
            operands.append(ctx.constant(c.reshape(-1) * np.asarray(beta, c.dtype), "/bias"))
        return ctx.value(FullyConnected, operands)
    y = ctx.value(MatMul, [ctx.input(0), ctx.input(1)], suffix="/matmul", transpose_a=trans_a, transpose_b=trans_b)
    y = _scaled(ctx, y, alpha, "/alpha")
    if not ctx.has_input(2):
        return y
    bias = _scaled(ctx, ctx.input(2), beta, "/beta")
    return ctx.value(Eltwise, [y, bias], operation="sum")


@onnx_extractor("MatMul")
def matmul(ctx: NodeContext) -> SSAValue:
    return ctx.value(MatMul, [ctx.input(0), ctx.input(1)])


@onnx_extractor("BatchNormalization")
def batch_norm(ctx: NodeContext) -> SSAValue:
    if ctx.output_used(1) or ctx.output_used(2):
        raise ctx.fail("training mode (running statistics outputs) is not supported", fix="export the model for inference")
    if ctx.attr("training_mode", 0):
        return _batch_statistics_norm(ctx)
    operands = [ctx.input(i) for i in range(5)]
    return ctx.value(BatchNormalization, operands, epsilon=float(ctx.attr("epsilon", 1e-5)))


def _batch_statistics_norm(ctx: NodeContext) -> SSAValue:
    """training_mode=1 with only Y read: normalised by the batch's own mean and (population)
    variance over every axis but the channels (HF BiT standardises its convolution weights
    with `F.batch_norm(w, None, None, training=True)`); the running mean and variance inputs
    and momentum only feed the unread outputs."""
    rank = len(ctx.input_shape(0))
    normalized = ctx.value(
        MVN, [ctx.input(0)], suffix="/mvn", axes=[0, *range(2, rank)],
        eps=float(ctx.attr("epsilon", 1e-5)), normalize_variance=True, eps_mode="inside_sqrt",
    )
    return ctx.value(ScaleShift, [normalized, ctx.input(1), ctx.input(2)])


@onnx_extractor("InstanceNormalization")
def instance_norm(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.input_shape(0))
    normalized = ctx.value(
        MVN, [ctx.input(0)], suffix="/mvn", axes=list(range(2, rank)),
        eps=float(ctx.attr("epsilon", 1e-5)), normalize_variance=True, eps_mode="inside_sqrt",
    )
    return ctx.value(ScaleShift, [normalized, ctx.input(1), ctx.input(2)])


@onnx_extractor("LayerNormalization")
def layer_norm(ctx: NodeContext) -> list[SSAValue]:
    rank = len(ctx.input_shape(0))
    axis = int(ctx.attr("axis", -1))
    if not -rank <= axis < rank:  # `% rank` normalised over other axes (or divided by zero on a scalar)
        raise ctx.fail(f"axis {axis} is out of range for an input of rank {rank}", fix=f"use an axis in [{-rank}, {rank - 1}]")
    axis %= rank
    axes, eps = list(range(axis, rank)), float(ctx.attr("epsilon", 1e-5))
    y = ctx.value(MVN, [ctx.input(0)], suffix="/mvn", axes=axes, eps=eps, normalize_variance=True, eps_mode="inside_sqrt")
    last = not ctx.has_input(2)
    x_type = ctx.input_type(0).element_type  # float16 Scale/B with a float32 X: torch's half exports (mixed_floats.py)
    scale = converted_to(ctx, ctx.input(1), x_type, "/scale_as_x")
    y = ctx.value(Eltwise, [y, scale], suffix="" if last else "/scale", operation="mul")
    if not last:
        y = ctx.value(Eltwise, [y, converted_to(ctx, ctx.input(2), x_type, "/bias_as_x")], operation="sum")
    if not (ctx.output_used(1) or ctx.output_used(2)):
        return [y]
    return [y, *_layer_norm_statistics(ctx, axes, eps)]


def _layer_norm_statistics(ctx: NodeContext, axes: list[int], eps: float) -> list[SSAValue]:
    """LayerNormalization's optional Mean and InvStdDev outputs, 1 / sqrt(var + eps)."""
    x = ctx.input(0)
    mean = ctx.value(Reduce, [x], suffix="/mean", operation="mean", axes=axes, keep_dims=True)
    centered = ctx.value(Eltwise, [x, mean], suffix="/centered", operation="sub")
    square = ctx.value(Eltwise, [centered, centered], suffix="/square", operation="mul")
    variance = ctx.value(Reduce, [square], suffix="/variance", operation="mean", axes=axes, keep_dims=True)
    shifted = ctx.value(Power, [variance], suffix="/variance_eps", shift=eps)
    inv_std = ctx.value(Power, [shifted], suffix="/inv_std_dev", power=-0.5)
    return [mean, inv_std]
