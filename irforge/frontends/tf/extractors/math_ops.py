"""TensorFlow element-wise math, activations, matrix products and reductions."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, ArgMax, Clamp, Convert, Eltwise, Identity, MatMul, Power, ReLU, Reduce, Reshape, SoftMax
from irforge.frontends.einsum import lower_einsum
from irforge.frontends.tf.loader import numpy_dtype
from irforge.frontends.tf.registry import NodeContext, tf_extractor
from irforge.weights.dtypes import to_xdsl

BINARY = {
    "Add": "sum", "AddV2": "sum", "BiasAdd": "sum", "Sub": "sub", "Mul": "mul", "RealDiv": "div",
    "Maximum": "max", "Minimum": "min", "SquaredDifference": "squared_diff", "Pow": "pow",
    "FloorMod": "floor_mod", "Equal": "equal", "NotEqual": "not_equal", "Less": "less",
    "LessEqual": "less_equal", "Greater": "greater", "GreaterEqual": "greater_equal",
    "LogicalAnd": "and", "LogicalOr": "or",
}  # fmt: skip
ACTIVATIONS = {
    "Sigmoid": "sigmoid", "Tanh": "tanh", "Elu": "elu", "Selu": "selu", "Softplus": "softplus",
    "Softsign": "softsign", "Exp": "exp", "Log": "log", "Abs": "abs", "Sqrt": "sqrt", "Erf": "erf",
    "Neg": "neg", "Reciprocal": "reciprocal", "Floor": "floor", "Ceil": "ceil", "Round": "round",
    "Sign": "sign", "Sin": "sin", "Cos": "cos", "LogicalNot": "not",
}  # fmt: skip
REDUCTIONS = {"Mean": "mean", "Sum": "sum", "Max": "max", "Min": "min", "Prod": "prod"}


@tf_extractor(*BINARY)
def binary(ctx: NodeContext) -> SSAValue:
    a, b = ctx.input(0), ctx.input(1)
    if ctx.node.op == "BiasAdd" and not ctx.nhwc():
        # NCHW bias [C] broadcasts along axis 1, not the last axis
        rank = len(ctx.input_shape(0))
        b = ctx.value(Reshape, [b], suffix="/bias", shape=[-1] + [1] * (rank - 2))
    return ctx.value(Eltwise, [a, b], operation=BINARY[ctx.node.op])


@tf_extractor(*ACTIVATIONS)
def activation(ctx: NodeContext) -> SSAValue:
    kind = ACTIVATIONS[ctx.node.op]
    props: dict[str, object] = {"kind": kind}
    if kind == "selu":
        props.update(alpha=1.6732632423543772, beta=1.0507009873554805)
    return ctx.value(Activation, [ctx.input(0)], **props)


@tf_extractor("Erfc")
def erfc(ctx: NodeContext) -> SSAValue:
    """1 - erf(x), as OpenVINO has no Erfc (and ovc writes the same); replace-subgraph turns
    Keras's exact GELU, 0.5 * x * erfc(-x / sqrt 2), into one Gelu."""
    erf = ctx.value(Activation, [ctx.input(0)], suffix="/erf", kind="erf")
    one = ctx.constant(np.ones((), numpy_dtype(int(ctx.attr("T", 1)), ctx.where)), "/one")
    return ctx.value(Eltwise, [one, erf], operation="sub")


@tf_extractor("Relu")
def relu(ctx: NodeContext) -> SSAValue:
    return ctx.value(ReLU, [ctx.input(0)])


@tf_extractor("LeakyRelu")
def leaky_relu(ctx: NodeContext) -> SSAValue:
    return ctx.value(ReLU, [ctx.input(0)], negative_slope=float(ctx.attr("alpha", 0.2)))


@tf_extractor("Relu6")
def relu6(ctx: NodeContext) -> SSAValue:
    return ctx.value(Clamp, [ctx.input(0)], min=0.0, max=6.0)


@tf_extractor("Rsqrt", "Square")
def power(ctx: NodeContext) -> SSAValue:
    return ctx.value(Power, [ctx.input(0)], power=-0.5 if ctx.node.op == "Rsqrt" else 2.0)


@tf_extractor("Identity", "StopGradient", "PlaceholderWithDefault", "Snapshot")
def identity(ctx: NodeContext) -> SSAValue:
    return ctx.value(Identity, [ctx.input(0)])


@tf_extractor("IdentityN")
def identity_n(ctx: NodeContext) -> list[SSAValue]:
    return [ctx.value(Identity, [ctx.input(i)], suffix=f":{i}") for i in range(ctx.num_inputs)]


@tf_extractor("NoOp")
def no_op(ctx: NodeContext) -> list[SSAValue]:
    return []


@tf_extractor("Cast")
def cast(ctx: NodeContext) -> SSAValue:
    dtype = numpy_dtype(int(ctx.attr("DstT")), ctx.where)
    return ctx.value(Convert, [ctx.input(0)], destination_type=to_xdsl(dtype))


@tf_extractor("MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
def matmul(ctx: NodeContext) -> SSAValue:
    if ctx.node.op == "MatMul":
        ta, tb = bool(ctx.attr("transpose_a", False)), bool(ctx.attr("transpose_b", False))
    else:
        ta, tb = bool(ctx.attr("adj_x", False)), bool(ctx.attr("adj_y", False))
    return ctx.value(MatMul, [ctx.input(0), ctx.input(1)], transpose_a=ta, transpose_b=tb)


@tf_extractor("Einsum")
def einsum(ctx: NodeContext) -> SSAValue:
    return lower_einsum(ctx, str(ctx.attr("equation")), [ctx.input(i) for i in range(ctx.num_inputs)])


@tf_extractor(*REDUCTIONS)
def reduce(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.input_shape(0))
    axes = sorted({a % rank for a in ctx.ints_input(1, "reduction_indices")}) if rank else []
    if not axes:
        return ctx.value(Identity, [ctx.input(0)])
    return ctx.value(
        Reduce, [ctx.input(0)], operation=REDUCTIONS[ctx.node.op], axes=axes, keep_dims=bool(ctx.attr("keep_dims", False))
    )


@tf_extractor("Softmax", "LogSoftmax")
def softmax(ctx: NodeContext) -> SSAValue:
    return ctx.value(SoftMax, [ctx.input(0)], axis=-1, log=ctx.node.op == "LogSoftmax")


@tf_extractor("ArgMax", "ArgMin")
def argmax(ctx: NodeContext) -> SSAValue:
    axis = ctx.ints_input(1, "dimension")[0]
    y = ctx.value(ArgMax, [ctx.input(0)], suffix="/arg", axis=axis, keep_dims=False, mode="max" if ctx.node.op == "ArgMax" else "min")
    out = numpy_dtype(int(ctx.attr("output_type", 9)), ctx.where)
    return y if out == np.int64 else ctx.value(Convert, [y], destination_type=to_xdsl(out))
