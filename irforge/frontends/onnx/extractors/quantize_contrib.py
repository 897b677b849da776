"""onnxruntime's QOperator contrib ops (domain com.microsoft) -> dequantize, the float op,
quantize, as QLinearConv (quantize.py): what onnxruntime's quantizer writes in QOperator
format besides the standard QLinearConv / QLinearMatMul.

- QLinearAdd / QLinearMul (A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp): both sides
  dequantized, added / multiplied with numpy broadcasting, quantized to C's parameters.
- QLinearSigmoid / QLinearLeakyRelu (X, X_scale, X_zp, Y_scale, Y_zp; LeakyRelu's alpha).
- QLinearSoftmax (same inputs; axis, and opset: the original Softmax's, whose semantics
  before 13 flatten the dims from axis on into one).
- QLinearGlobalAveragePool (X, x_scale, x_zp, y_scale, y_zp): NCHW (channels_last=0) only.
- QLinearConcat (Y_scale, Y_zp, then X, X_scale, X_zp per input; axis).
- QGemm (A, a_scale, a_zp, B, b_scale, b_zp, C, y_scale, y_zp; alpha, transA, transB): the
  int32 bias C has scale alpha * a_scale * b_scale and zero point 0 (onnxruntime's
  definition), so y = alpha * A'B' + C * alpha * a_scale * b_scale in float, quantized when
  y_scale is given, else the float output.

Scales and zero points must be constants (per tensor; per output channel for QGemm's B).
onnxruntime computes these ops with its own integer or table kernels, which round the
rescaled sums once; the float composition rounds the same real value, so results agree but
for values that fall within float32 rounding of a half step (one quantization step there).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Concat, Eltwise, MatMul, Pooling, ReLU, Reshape, SoftMax
from irforge.errors import IrforgeError
from irforge.frontends.onnx.extractors.quantize import constant_params, dequantize, quantize
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl

MS = "com.microsoft"


def check_attributes(ctx: NodeContext, known: set[str]) -> None:
    """Contrib ops have no schema here: an attribute irforge does not read is refused."""
    extra = sorted(a.name for a in ctx.node.attribute if a.name not in known)
    if extra:
        raise IrforgeError(f"attribute {', '.join(extra)} of {ctx.node.op_type} is not supported", where=ctx.where,
                           fix=f"irforge reads {', '.join(sorted(known)) or 'no attributes'} of this op", code="E179")  # fmt: skip


def zp_dtype(ctx: NodeContext, data_index: int) -> np.dtype:
    return from_xdsl(ctx.input_type(data_index).element_type)


def dequantized(ctx: NodeContext, data_index: int, rank: int, suffix: str, axis: int = 1) -> SSAValue:
    """Input `data_index` dequantized with the scale and zero point that follow it."""
    scale, zp = constant_params(ctx, data_index + 1, data_index + 2, rank, axis, zp_dtype(ctx, data_index))
    return dequantize(ctx, ctx.input(data_index), scale, zp, suffix)


def quantized(ctx: NodeContext, y: SSAValue, scale_index: int, rank: int, like: int) -> SSAValue:
    """y quantized with the output scale / zero point at `scale_index` (zero point typed as
    input `like` when absent: onnxruntime's output type is its input's)."""
    scale, zp = constant_params(ctx, scale_index, scale_index + 1, rank, 1, zp_dtype(ctx, like))
    if scale.size != 1:
        raise ctx.fail("a per-axis output scale is not supported (onnxruntime's kernels take one per tensor)")
    return quantize(ctx, y, scale, zp, "")


@onnx_extractor("QLinearAdd", "QLinearMul", domain=MS)
def qlinear_binary(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, set())
    rank = max(len(ctx.input_shape(0)), len(ctx.input_shape(3)))
    a = dequantized(ctx, 0, len(ctx.input_shape(0)), "/a")
    b = dequantized(ctx, 3, len(ctx.input_shape(3)), "/b")
    operation = "sum" if ctx.node.op_type == "QLinearAdd" else "mul"
    y = ctx.value(Eltwise, [a, b], suffix=f"/{operation}", operation=operation)
    return quantized(ctx, y, 6, rank, 0)


@onnx_extractor("QLinearSigmoid", "QLinearLeakyRelu", domain=MS)
def qlinear_activation(ctx: NodeContext) -> SSAValue:
    leaky = ctx.node.op_type == "QLinearLeakyRelu"
    check_attributes(ctx, {"alpha"} if leaky else set())
    rank = len(ctx.input_shape(0))
    x = dequantized(ctx, 0, rank, "/x")
    if leaky:
        y = ctx.value(ReLU, [x], suffix="/leaky_relu", negative_slope=float(ctx.attr("alpha", 0.01)))
    else:
        y = ctx.value(Activation, [x], suffix="/sigmoid", kind="sigmoid")
    return quantized(ctx, y, 3, rank, 0)


@onnx_extractor("QLinearSoftmax", domain=MS)
def qlinear_softmax(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"axis", "opset"})
    shape = ctx.input_shape(0)
    rank = len(shape)
    axis = int(ctx.attr("axis", -1))
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for rank {rank}")
    axis %= rank
    x = dequantized(ctx, 0, rank, "/x")
    if int(ctx.attr("opset", 13)) >= 13 or axis == rank - 1:
        y = ctx.value(SoftMax, [x], suffix="/softmax", axis=axis)
    else:  # Softmax-1/11: over the dims from axis on, flattened
        if any(d < 0 for d in shape):
            raise ctx.fail("a Softmax of opset < 13 over several axes needs static input dims")
        rows = ctx.value(Reshape, [x], suffix="/rows", shape=[int(np.prod(shape[:axis])), int(np.prod(shape[axis:]))])
        y = ctx.value(Reshape, [ctx.value(SoftMax, [rows], suffix="/softmax", axis=1)], suffix="/back", shape=list(shape))
    return quantized(ctx, y, 3, rank, 0)


@onnx_extractor("QLinearGlobalAveragePool", domain=MS)
def qlinear_global_average_pool(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"channels_last"})
    if int(ctx.attr("channels_last", 0)):
        raise IrforgeError("attribute channels_last=1 of QLinearGlobalAveragePool is not supported", where=ctx.where,
                           fix="quantize the NCHW model (channels_last=0)", code="E179")  # fmt: skip
    rank = len(ctx.input_shape(0))
    x = dequantized(ctx, 0, rank, "/x")
    y = ctx.value(Pooling, [x], suffix="/pool", method="avg", global_pool=True)
    return quantized(ctx, y, 3, rank, 0)


@onnx_extractor("QLinearConcat", domain=MS)
def qlinear_concat(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"axis"})
    if (ctx.num_inputs - 2) % 3 or ctx.num_inputs < 5:
        raise ctx.fail(f"expected Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, got {ctx.num_inputs} inputs")
    rank = len(ctx.input_shape(2))
    parts = [dequantized(ctx, i, rank, f"/x{(i - 2) // 3}") for i in range(2, ctx.num_inputs, 3)]
    axis = int(ctx.attr("axis"))
    y = ctx.value(Concat, parts, suffix="/concat", axis=axis)
    return quantized(ctx, y, 0, rank, 2)


@onnx_extractor("QGemm", domain=MS)
def qgemm(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"alpha", "transA", "transB"})
    alpha = float(ctx.attr("alpha", 1.0))
    trans_a, trans_b = bool(ctx.attr("transA", 0)), bool(ctx.attr("transB", 0))
    a_s, a_z = constant_params(ctx, 1, 2, 2, 1, zp_dtype(ctx, 0))
    if a_s.size != 1 or a_z.size != 1:
        raise ctx.fail("A's scale and zero point must be per tensor (one value each)")
    b_s, b_z = constant_params(ctx, 4, 5, 2, 0 if trans_b else 1, zp_dtype(ctx, 3))  # per output column
    a = dequantize(ctx, ctx.input(0), a_s, a_z, "/a")
    b = dequantize(ctx, ctx.input(3), b_s, b_z, "/b")
    y = ctx.value(MatMul, [a, b], suffix="/matmul", transpose_a=trans_a, transpose_b=trans_b)
    dtype = a_s.dtype
    if alpha != 1.0:
        y = ctx.value(Eltwise, [y, ctx.constant(np.array(alpha, dtype), "/alpha")], suffix="/alpha_mul", operation="mul")
    if ctx.has_input(6):
        c = ctx.required_constant(6, "the int32 bias C")
        if c.dtype != np.int32:
            raise ctx.fail(f"the bias C must be int32 (scale alpha * a_scale * b_scale), got {c.dtype}")
        bias = c.astype(np.float64) * alpha * float(a_s.reshape(-1)[0]) * b_s.reshape(-1).astype(np.float64)
        y = ctx.value(Eltwise, [y, ctx.constant(bias.astype(dtype), "/bias")], suffix="/bias_add", operation="sum")
    if not ctx.has_input(7):
        return y  # float output
    return quantized(ctx, y, 7, 2, 0)
