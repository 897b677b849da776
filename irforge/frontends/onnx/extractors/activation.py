"""ONNX activations -> nn.relu / nn.activation / nn.clamp / nn.prelu / nn.identity."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Clamp, Eltwise, Identity, PReLU, ReLU
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl

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
    "Asin": ("asin", None, None),
    "Acos": ("acos", None, None),
    "Atan": ("atan", None, None),
    "Asinh": ("asinh", None, None),
    "Acosh": ("acosh", None, None),
    "Atanh": ("atanh", None, None),
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
    slope_shape = ctx.input_shape(1)
    per_channel = len(slope_shape) == 1 and len(x_shape) >= 2 and slope_shape[0] in (1, x_shape[1])
    if per_channel:
        return ctx.value(PReLU, [ctx.input(0), ctx.input(1)])
    # any other numpy-broadcast slope: max(x, 0) + slope * min(x, 0)
    x = ctx.input(0)
    zero = ctx.constant(np.zeros((), from_xdsl(ctx.input_type(0).element_type)), "/zero")
    positive = ctx.value(Eltwise, [x, zero], suffix="/positive", operation="max")
    negative = ctx.value(Eltwise, [x, zero], suffix="/negative", operation="min")
    scaled = ctx.value(Eltwise, [negative, ctx.input(1)], suffix="/scaled", operation="mul")
    return ctx.value(Eltwise, [positive, scaled], operation="sum")


@onnx_extractor("Clip")
def clip(ctx: NodeContext) -> SSAValue:
    if ctx.opset < 11:
        low, high = ctx.attr("min", -np.inf), ctx.attr("max", np.inf)
    else:
        lo, hi = ctx.constant_input(1), ctx.constant_input(2)
        floating = np.issubdtype(from_xdsl(ctx.input_type(0).element_type), np.floating)
        for index in (1, 2):
            shape = ctx.input_shape(index) if ctx.has_input(index) else (1,)
            what = "min" if index == 1 else "max"
            if min(shape, default=1) >= 0 and int(np.prod(shape)) != 1:
                # ONNX's min / max are scalars: onnxruntime refuses others; float() of one failed
                raise ctx.fail(f"Clip's {what} must be a scalar, got shape {list(shape)}", fix="give min and max as 0-d tensors")
            if ctx.has_input(index) and ctx.input_type(index).element_type != ctx.input_type(0).element_type:
                raise ctx.fail(f"Clip's {what} is {ctx.input_type(index).element_type}, its input {ctx.input_type(0).element_type}",
                               fix="give min and max of the input's element type")
        if (ctx.has_input(1) and lo is None) or (ctx.has_input(2) and hi is None) or not floating:
            return _clip_eltwise(ctx)
        low = float(lo.reshape(-1)[0]) if lo is not None else -np.inf
        high = float(hi.reshape(-1)[0]) if hi is not None else np.inf
    finfo = np.finfo(np.float32)
    return ctx.value(Clamp, [ctx.input(0)], min=float(max(low, finfo.min)), max=float(min(high, finfo.max)))


def _clip_eltwise(ctx: NodeContext) -> SSAValue:
    """Clip with bounds known only at run time (or of integer type): max, then min."""
    y = ctx.input(0)
    if ctx.has_input(1):
        y = ctx.value(Eltwise, [y, ctx.input(1)], suffix="/min" if ctx.has_input(2) else "", operation="max")
    if ctx.has_input(2):
        y = ctx.value(Eltwise, [y, ctx.input(2)], operation="min")
    return y if y is not ctx.input(0) else ctx.value(Identity, [y])


@onnx_extractor("Identity")
def identity(ctx: NodeContext) -> SSAValue:
    return ctx.value(Identity, [ctx.input(0)])


@onnx_extractor("Dropout")
def dropout(ctx: NodeContext) -> list[SSAValue | None]:
    """Inference Dropout: the input unchanged and, if anything reads it, an all-true mask."""
    # before opset 12 there is no training switch on the node: a converter assumes inference
    training = False
    if ctx.opset >= 12 and ctx.has_input(2):
        training = bool(ctx.required_constant(2, "training_mode").reshape(-1)[0])
    if training and ctx.has_input(1):
        ratio = float(ctx.required_constant(1, "ratio").reshape(-1)[0])
    else:
        ratio = 0.5
    if training and ratio != 0.0:
        raise ctx.fail("training-mode Dropout is random and cannot be converted", fix="export the model for inference")
    y = ctx.value(Identity, [ctx.input(0)])
    if not ctx.output_used(1):
        return [y]
    shape = ctx.input_shape(0)
    if DYN in shape:
        raise ctx.fail("the Dropout mask of a tensor with dynamic dims is not supported", fix="give static input shapes")
    return [y, ctx.constant(np.ones(shape, np.bool_), "/mask")]
