"""MXNet Activation, LeakyReLU (leaky, prelu, elu, selu, gelu, rrelu), clip and the unary
math ops (relu, sigmoid, exp, ...)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Clamp, Eltwise, PReLU, ReLU
from irforge.frontends.mxnet.registry import NodeContext, mxnet_extractor

ACT_TYPES = {"sigmoid": "sigmoid", "tanh": "tanh", "softrelu": "softplus", "softsign": "softsign"}
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946


def activation_of(ctx: NodeContext, kind: str, x: SSAValue) -> SSAValue:
    if kind == "relu":
        return ctx.value(ReLU, [x])
    if kind not in ACT_TYPES:
        raise ctx.fail(f"act_type {kind} is not supported", fix=f"irforge imports relu, {', '.join(ACT_TYPES)}")
    return ctx.value(Activation, [x], kind=ACT_TYPES[kind])


@mxnet_extractor("Activation")
def activation(ctx: NodeContext) -> SSAValue:
    return activation_of(ctx, ctx.attrs.str("act_type", "relu"), ctx.input(0))


@mxnet_extractor("LeakyReLU", weights=(1,))
def leaky_relu(ctx: NodeContext) -> SSAValue:
    kind = ctx.attrs.str("act_type", "leaky")
    slope = ctx.attrs.float("slope", 0.25)
    x = ctx.input(0)
    if kind == "leaky":
        return ctx.value(ReLU, [x], negative_slope=slope)
    if kind == "prelu":
        channels = ctx.shape(0)[1] if len(ctx.shape(0)) > 1 else 1
        gamma = ctx.array(1)
        if gamma.size not in (1, channels):
            raise ctx.fail(f"gamma has {gamma.size} values for {channels} channels")
        return ctx.value(PReLU, [x, ctx.constant(gamma.reshape(-1), "/gamma")])
    if kind == "elu":
        return ctx.value(Activation, [x], kind="elu", alpha=slope)
    if kind == "selu":
        return ctx.value(Activation, [x], kind="selu", alpha=SELU_ALPHA, beta=SELU_LAMBDA)
    if kind == "gelu":
        return ctx.value(Activation, [x], kind="gelu")
    if kind == "rrelu":
        # at inference the random slope is the mean of its range
        lower, upper = ctx.attrs.float("lower_bound", 0.125), ctx.attrs.float("upper_bound", 0.334)
        return ctx.value(ReLU, [x], negative_slope=(lower + upper) / 2)
    raise ctx.fail(f"act_type {kind} is not supported", fix="irforge imports leaky, prelu, elu, selu, gelu and rrelu")


@mxnet_extractor("clip")
def clip(ctx: NodeContext) -> SSAValue:
    if "a_min" not in ctx.attrs or "a_max" not in ctx.attrs:
        raise ctx.fail("clip needs a_min and a_max")
    return ctx.value(Clamp, [ctx.input(0)], min=ctx.attrs.float("a_min", 0.0), max=ctx.attrs.float("a_max", 0.0))


UNARY = {
    "sigmoid": "sigmoid", "tanh": "tanh", "exp": "exp", "log": "log", "sqrt": "sqrt", "abs": "abs",
    "negative": "neg", "reciprocal": "reciprocal", "softsign": "softsign", "erf": "erf",
    "floor": "floor", "ceil": "ceil", "sin": "sin", "cos": "cos", "sign": "sign",
}  # fmt: skip


@mxnet_extractor(*UNARY)
def unary(ctx: NodeContext) -> SSAValue:
    return ctx.value(Activation, [ctx.input(0)], kind=UNARY[ctx.op])


@mxnet_extractor("relu")
def relu(ctx: NodeContext) -> SSAValue:
    return ctx.value(ReLU, [ctx.input(0)])


@mxnet_extractor("square")
def square(ctx: NodeContext) -> SSAValue:
    x = ctx.input(0)
    return ctx.value(Eltwise, [x, x], operation="mul")
