"""ONNX MatMulInteger and ConvInteger (what onnxruntime's `quantize_dynamic` writes after a
DynamicQuantizeLinear) as compositions, the way OpenVINO's ONNX frontend reads them:

    MatMulInteger(a, b, a_zero, b_zero) = Convert<i32>(MatMul((f(a) - f(a_zero)), (f(b) - f(b_zero))))
    ConvInteger(x, w, x_zero, w_zero)   = Convert<i32>(Convolution((f(x) - f(x_zero)), (f(w) - f(w_zero))))

with f a conversion to float32. The products and sums are those of the integer op, computed
in float32: exact while every partial sum stays below 2**24 in magnitude (the dynamic
quantizer's u8 x s8 products reach 2**15, so a few hundred terms of one sign), beyond that
rounded as any float32 MatMul or Convolution rounds; the result is converted to float32
and scaled next in every graph the quantizer writes. Zero points may be run-time values
(DynamicQuantizeLinear's); a_zero_point per row (1-D of size M) is refused (E157).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32, i32
from xdsl.ir import SSAValue

from irforge.dialects.nn import Convert, Convolution, Eltwise, MatMul, Reshape
from irforge.errors import IrforgeError
from irforge.frontends.onnx.extractors.conv import window_props
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor


def shifted(ctx: NodeContext, index: int, zero_index: int, zero_shape: list[int] | None, tag: str) -> SSAValue:
    """float32(input) - float32(zero point), the zero point reshaped to `zero_shape` (None:
    as it is)."""
    value = ctx.value(Convert, [ctx.input(index)], suffix=f"/{tag}", destination_type=f32)
    if not ctx.has_input(zero_index):
        return value
    constant = ctx.constant_input(zero_index)
    if constant is not None:
        if not np.any(constant):
            return value
        if zero_shape is not None and constant.size != int(np.prod(zero_shape)):
            raise ctx.fail(f"{tag}'s zero point has {constant.size} values, one per tensor or {int(np.prod(zero_shape))} "
                           f"(one per {'output channel' if len(zero_shape) > 1 else 'column'}) are needed")
        zero = ctx.constant(np.asarray(constant, np.float32).reshape(zero_shape or constant.shape), f"/{tag}_zero_point")
    else:
        zero = ctx.value(Convert, [ctx.input(zero_index)], suffix=f"/{tag}_zero_point", destination_type=f32)
        if zero_shape is not None:  # per output channel of a convolution: along axis 0
            zero = ctx.value(Reshape, [zero], suffix=f"/{tag}_zero_point_shape", shape=list(zero_shape))
    return ctx.value(Eltwise, [value, zero], suffix=f"/{tag}_shifted", operation="sub")


def scalar_zero_point(ctx: NodeContext, index: int, what: str) -> None:
    if ctx.has_input(index) and int(np.prod(ctx.input_shape(index))) != 1:
        raise IrforgeError(
            f"{ctx.node.op_type} with a per-row {what} (shape {list(ctx.input_shape(index))}) is not supported",
            where=ctx.where,
            fix="quantize the activations per tensor (onnxruntime's quantize_dynamic does)",
            code="E157",
        )


@onnx_extractor("MatMulInteger")
def matmul_integer(ctx: NodeContext) -> SSAValue:
    scalar_zero_point(ctx, 2, "a_zero_point")
    b_shape = ctx.input_shape(1)
    if not b_shape:
        raise ctx.fail("input #1 (b) is a scalar, MatMulInteger needs a matrix (or a stack of them)")
    # b's zero point: one value, or one per column (1-D of size N): broadcasts along the last axis
    a = shifted(ctx, 0, 2, [], "a")
    b = shifted(ctx, 1, 3, [b_shape[-1]] if ctx.has_input(3) and int(np.prod(ctx.input_shape(3))) > 1 else None, "b")
    y = ctx.value(MatMul, [a, b], suffix="/matmul")
    return ctx.value(Convert, [y], destination_type=i32)


@onnx_extractor("ConvInteger")
def conv_integer(ctx: NodeContext) -> SSAValue:
    scalar_zero_point(ctx, 2, "x_zero_point")
    rank = len(ctx.input_shape(0))
    if rank < 3:
        raise ctx.fail(f"input #0 has rank {rank}, ConvInteger needs N, C and at least one spatial axis")
    spatial = rank - 2
    out_channels = ctx.input_shape(1, rank=rank)[0]  # the weight has the input's rank (the spec)
    per_channel = ctx.has_input(3) and int(np.prod(ctx.input_shape(3))) > 1
    x = shifted(ctx, 0, 2, [], "x")
    w = shifted(ctx, 1, 3, [out_channels] + [1] * (rank - 1) if per_channel else None, "w")
    props = window_props(ctx, spatial)
    props["dilations"] = list(ctx.attr("dilations", [1] * spatial))
    props["group"] = int(ctx.attr("group", 1))
    y = ctx.value(Convolution, [x, w], suffix="/conv", **props)
    return ctx.value(Convert, [y], destination_type=i32)
