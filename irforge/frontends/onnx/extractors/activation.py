"""ONNX activations -> nn.relu / nn.activation / nn.clamp / nn.prelu / nn.identity."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Clamp, Identity, PReLU, ReLU
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

# ONNX op type -> (nn.activation kind, alpha attribute and default, beta attribute and default)
ACTIVATIONS: dict[str, tuple[str, tuple[str, float] | None, tuple[str, float] | None]] = {
    "Sigmoid": ("sigmoid", None, None),
    "Tanh": ("tanh", None, None),
    "Elu": ("elu", ("alpha", 1.0), None),
    "Selu": ("selu", ("alpha", 1.67326319217681884765625), ("gamma", 1.05070102214813232421875)),
    "Exp": ("exp", None, None),
    "Log": ("log", None, None),
    "Abs": ("abs", None, None),
    "Sqrt": ("sqrt", None, None),
    "Erf": ("erf", None, None),
    "HardSwish": ("hswish", None, None),
    "HardSigmoid": ("hsigmoid", ("alpha", 0.2), ("beta", 0.5)),
    "Softplus": ("softplus", None, None),
    "Softsign": ("softsign", None, None),
    "Mish": ("mish", None, None),
    "Neg": ("neg", None, None),
    "Reciprocal": ("reciprocal", None, None),
    "Floor": ("floor", None, None),
    "Ceil": ("ceil", None, None),
    "Round": ("round", None, None),
    "Sign": ("sign", None, None),
    "Sin": ("sin", None, None),
    "Cos": ("cos", None, None),
    "Not": ("not", None, None),
}


@onnx_extractor(*ACTIVATIONS)
def activation(ctx: NodeContext) -> SSAValue:
    kind, alpha, beta = ACTIVATIONS[ctx.node.op_type]
    props: dict[str, object] = {"kind": kind}
    if alpha is not None:
        props["alpha"] = float(ctx.attr(*alpha))
    if beta is not None:
        props["beta"] = float(ctx.attr(*beta))
    return ctx.value(Activation, [ctx.input(0)], **props)


@onnx_extractor("Gelu")
def gelu(ctx: NodeContext) -> SSAValue:
    approximate = ctx.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ctx.fail(f"approximate='{approximate}' is not a Gelu mode", fix="use 'none' or 'tanh'")
    kind = "gelu" if approximate == "none" else "gelu_tanh"
    return ctx.value(Activation, [ctx.input(0)], kind=kind)


@onnx_extractor("Relu")
def relu(ctx: NodeContext) -> SSAValue:
    return ctx.value(ReLU, [ctx.input(0)])


@onnx_extractor("LeakyRelu")
def leaky_relu(ctx: NodeContext) -> SSAValue:
    return ctx.value(ReLU, [ctx.input(0)], negative_slope=float(ctx.attr("alpha", 0.01)))


@onnx_extractor("PRelu")
def prelu(ctx: NodeContext) -> SSAValue:
    x_shape = ctx.input_shape(0)
    slope = ctx.constant_input(1)
    # a [C,1,1] slope (ONNX's per-channel form) becomes nn.prelu's 1-D per-channel slope
    if slope is not None and len(x_shape) >= 2 and slope.ndim >= 2 and slope.shape[0] == x_shape[1] \
            and all(d == 1 for d in slope.shape[1:]) and slope.ndim == len(x_shape) - 1:
        return ctx.value(PReLU, [ctx.input(0), ctx.constant(slope.reshape(-1), "/slope")])
    return ctx.value(PReLU, [ctx.input(0), ctx.input(1)])


@onnx_extractor("Clip")
def clip(ctx: NodeContext) -> SSAValue:
    if ctx.opset < 11:
        low, high = ctx.attr("min", -np.inf), ctx.attr("max", np.inf)
    else:
        lo, hi = ctx.constant_input(1), ctx.constant_input(2)
        if (ctx.has_input(1) and lo is None) or (ctx.has_input(2) and hi is None):
            raise ctx.fail("min/max must be constants", fix="fold them or use an extension")
        low = float(lo) if lo is not None else -np.inf
        high = float(hi) if hi is not None else np.inf
    finfo = np.finfo(np.float32)
    return ctx.value(Clamp, [ctx.input(0)], min=float(max(low, finfo.min)), max=float(min(high, finfo.max)))


@onnx_extractor("Identity", "Dropout")
def identity(ctx: NodeContext) -> list[SSAValue | None]:
    # Dropout's optional mask output is not computed at inference; nothing may consume it
    if ctx.node.op_type == "Dropout" and len(ctx.node.output) > 1 and ctx.node.output[1]:
        raise ctx.fail("the Dropout mask output is not supported at inference")
    return [ctx.value(Identity, [ctx.input(0)])]
