"""Readers of the opset operations that have an `nn` equivalent: element-wise ops,
activations and the linear ops (windowed, normalisation and shape ops: `readers_shape.py`;
Slice, StridedSlice and Pad: `readers_slice.py`; detection layers: `readers_detection.py`;
custom layers of loaded extensions: `readers_custom.py`).

Each reader is the inverse of the matching emitter in `backends/ir_xml/emitters`, and also
accepts the other forms OpenVINO itself writes (older opset versions, optional inputs).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn.activation import Activation, Clamp, PReLU, ReLU
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.elementwise import Convert, Eltwise, Select
from irforge.dialects.nn.linear import BatchNormalization, MatMul
from irforge.frontends.ir_xml import readers_detection, readers_quantize, readers_recurrent, readers_shape, readers_slice  # noqa: F401  (register the rest)
from irforge.frontends.ir_xml import readers_indexing  # noqa: F401  (after readers_shape: its TopK reader replaces that one)
from irforge.frontends.ir_xml import readers_control_flow  # noqa: F401
from irforge.frontends.ir_xml import readers_grid_sample  # noqa: F401
from irforge.frontends.ir_xml import readers_deformable  # noqa: F401
from irforge.frontends.ir_xml import readers_unique  # noqa: F401
from irforge.frontends.ir_xml import readers_bitwise  # noqa: F401
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader
from irforge.frontends.ir_xml.parse import ELEMENT_DTYPES
from irforge.weights.dtypes import to_xdsl

BINARY = {
    "Add": "sum", "Subtract": "sub", "Multiply": "mul", "Divide": "div", "Maximum": "max",
    "Minimum": "min", "Power": "pow", "SquaredDifference": "squared_diff", "Mod": "mod",
    "FloorMod": "floor_mod", "Equal": "equal", "NotEqual": "not_equal", "Less": "less",
    "LessEqual": "less_equal", "Greater": "greater", "GreaterEqual": "greater_equal",
    "LogicalAnd": "and", "LogicalOr": "or", "LogicalXor": "xor",
}  # fmt: skip

UNARY = {
    "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Log": "log", "Abs": "abs",
    "Sqrt": "sqrt", "Erf": "erf", "HSwish": "hswish", "SoftPlus": "softplus",
    "SoftSign": "softsign", "Mish": "mish", "Negative": "neg", "Floor": "floor",
    "Ceiling": "ceil", "Sign": "sign", "Sin": "sin", "Cos": "cos", "LogicalNot": "not",
    "Asin": "asin", "Acos": "acos", "Atan": "atan", "Asinh": "asinh", "Acosh": "acosh", "Atanh": "atanh",
}  # fmt: skip


@ir_layer_reader(*BINARY)
def binary(ctx: LayerContext) -> SSAValue:
    if ctx.attr("auto_broadcast", "numpy").lower() not in ("numpy", "none"):
        raise ctx.fail(f"auto_broadcast '{ctx.attr('auto_broadcast')}' is not supported", fix="only numpy broadcasting has an nn equivalent")
    operation = BINARY[ctx.layer.type]
    dtype = ctx.layer.outputs[0].dtype if ctx.layer.outputs else None
    if operation == "div" and ctx.bool("m_pythondiv", "true") and dtype is not None and dtype.kind in "iu":
        raise ctx.fail("integer Divide rounding down (m_pythondiv) is not supported", fix="nn.eltwise div truncates toward zero")
    return ctx.value(Eltwise, [ctx.input(0), ctx.input(1)], operation=operation)


@ir_layer_reader("Select")
def select(ctx: LayerContext) -> SSAValue:
    if ctx.attr("auto_broadcast", "numpy").lower() not in ("numpy", "none"):
        raise ctx.fail(f"auto_broadcast '{ctx.attr('auto_broadcast')}' is not supported", fix="only numpy broadcasting has an nn equivalent")
    return ctx.value(Select, [ctx.input(0), ctx.input(1), ctx.input(2)])


@ir_layer_reader(*UNARY)
def unary(ctx: LayerContext) -> SSAValue:
    return ctx.value(Activation, [ctx.input(0)], kind=UNARY[ctx.layer.type])


@ir_layer_reader("ReLU", "Relu")
def relu(ctx: LayerContext) -> SSAValue:
    return ctx.value(ReLU, [ctx.input(0)])


@ir_layer_reader("PReLU")
def prelu(ctx: LayerContext) -> SSAValue:
    x_rank, slope_shape = ctx.rank(0), ctx.shape(1)
    if len(slope_shape) > 1 and x_rank > 2 and slope_shape[1:] == (1,) * (len(slope_shape) - 1) and len(slope_shape) == x_rank - 1:
        slope = ctx.reshaped(1, slope_shape[:1], "/slope")  # [C, 1, 1]: the channel vector
    else:
        slope = ctx.input(1)
    return ctx.value(PReLU, [ctx.input(0), slope])


@ir_layer_reader("Clamp")
def clamp(ctx: LayerContext) -> SSAValue:
    return ctx.value(Clamp, [ctx.input(0)], min=ctx.float("min"), max=ctx.float("max"))


@ir_layer_reader("Elu")
def elu(ctx: LayerContext) -> SSAValue:
    return ctx.value(Activation, [ctx.input(0)], kind="elu", alpha=ctx.float("alpha"))


@ir_layer_reader("Selu")
def selu(ctx: LayerContext) -> SSAValue:
    return ctx.value(Activation, [ctx.input(0)], kind="selu", alpha=ctx.scalar(1, "alpha"), beta=ctx.scalar(2, "lambda"))


@ir_layer_reader("Gelu")
def gelu(ctx: LayerContext) -> SSAValue:
    mode = ctx.attr("approximation_mode", "ERF").upper()
    return ctx.value(Activation, [ctx.input(0)], kind="gelu_tanh" if mode == "TANH" else "gelu")


@ir_layer_reader("Swish")
def swish(ctx: LayerContext) -> SSAValue:
    beta = ctx.scalar(1, "beta") if ctx.num_inputs > 1 else 1.0
    return ctx.value(Activation, [ctx.input(0)], kind="swish", alpha=beta)


@ir_layer_reader("HardSigmoid")
def hard_sigmoid(ctx: LayerContext) -> SSAValue:
    return ctx.value(Activation, [ctx.input(0)], kind="hsigmoid", alpha=ctx.scalar(1, "alpha"), beta=ctx.scalar(2, "beta"))


@ir_layer_reader("HSigmoid")
def h_sigmoid(ctx: LayerContext) -> SSAValue:
    return ctx.value(Activation, [ctx.input(0)], kind="hsigmoid", alpha=1 / 6, beta=0.5)


@ir_layer_reader("Round")
def round_(ctx: LayerContext) -> SSAValue:
    if ctx.attr("mode") != "half_to_even":
        raise ctx.fail(f"Round mode '{ctx.attr('mode')}' is not supported", fix="nn rounds halves to even")
    return ctx.value(Activation, [ctx.input(0)], kind="round")


@ir_layer_reader("Convert")
def convert(ctx: LayerContext) -> SSAValue:
    element = ctx.attr("destination_type")
    if element not in ELEMENT_DTYPES:
        raise ctx.fail(f"destination_type '{element}' is not supported", fix=f"use one of {', '.join(ELEMENT_DTYPES)}")
    return ctx.value(Convert, [ctx.input(0)], destination_type=to_xdsl(ELEMENT_DTYPES[element]))


@ir_layer_reader("MatMul")
def matmul(ctx: LayerContext) -> SSAValue:
    return ctx.value(MatMul, [ctx.input(0), ctx.input(1)], transpose_a=ctx.bool("transpose_a", "false"), transpose_b=ctx.bool("transpose_b", "false"))


@ir_layer_reader("BatchNormInference")
def batch_norm(ctx: LayerContext) -> SSAValue:
    # opset1 takes (gamma, beta, data, mean, variance), opset5 the data first
    order = (2, 0, 1, 3, 4) if ctx.layer.version == "opset1" else (0, 1, 2, 3, 4)
    return ctx.value(BatchNormalization, [ctx.input(i) for i in order], epsilon=ctx.float("epsilon"))


@ir_layer_reader("ScaledDotProductAttention")
def attention(ctx: LayerContext) -> SSAValue:
    """One nn.scaled_dot_product_attention: a constant scale input becomes the property, and
    the scalar zero mask written before it (by ovc or irforge) only to reach that input goes."""
    operands = [ctx.input(0), ctx.input(1), ctx.input(2)]
    scale = ctx.importer.constant_at(ctx.source(4)) if ctx.num_inputs > 4 else None
    if scale is not None and scale.size != 1:
        raise ctx.fail(f"scale (input #4) must hold one value, got shape {list(scale.shape)}")
    if ctx.num_inputs > 3 and not (scale is not None and is_zero_scalar(ctx.importer.constant_at(ctx.source(3)))):
        operands.append(ctx.input(3))
    if ctx.num_inputs > 4 and scale is None:
        operands.append(ctx.input(4))  # known only at run time: the op's scale operand
    value = float(scale.reshape(-1)[0]) if scale is not None else None
    return ctx.value(ScaledDotProductAttention, operands, causal=ctx.bool("causal", "false"), scale=value)


def is_zero_scalar(mask: np.ndarray | None) -> bool:
    return mask is not None and mask.ndim == 0 and mask.dtype.kind == "f" and float(mask) == 0.0
