"""Emitters of the element-wise ops: activations, Clamp, PReLU, Eltwise, Convert, Identity.

Activation kinds map to the opset operation computing the same function as the reference
kernel (`backends/reference/kernels/activation.py`); parameterised kinds pass their
parameters as the attributes or scalar inputs the opset specification asks for.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.graph import PortType, element_name, fmt_bool, fmt_float
from irforge.backends.reference import constant_value
from irforge.dialects.nn.activation import Activation, Clamp, PReLU, ReLU
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Convert, Eltwise, Identity, Select
from irforge.model import store_of
from irforge.weights.dtypes import from_xdsl

UNARY: dict[str, tuple[str, str]] = {
    "sigmoid": ("Sigmoid", "opset1"), "tanh": ("Tanh", "opset1"), "exp": ("Exp", "opset1"),
    "log": ("Log", "opset1"), "abs": ("Abs", "opset1"), "sqrt": ("Sqrt", "opset1"),
    "erf": ("Erf", "opset1"), "hswish": ("HSwish", "opset4"), "softplus": ("SoftPlus", "opset4"),
    "softsign": ("SoftSign", "opset9"), "mish": ("Mish", "opset4"), "neg": ("Negative", "opset1"),
    "floor": ("Floor", "opset1"), "ceil": ("Ceiling", "opset1"), "sign": ("Sign", "opset1"),
    "sin": ("Sin", "opset1"), "cos": ("Cos", "opset1"), "not": ("LogicalNot", "opset1"),
    "asin": ("Asin", "opset1"), "acos": ("Acos", "opset1"), "atan": ("Atan", "opset1"),
    "asinh": ("Asinh", "opset4"), "acosh": ("Acosh", "opset4"), "atanh": ("Atanh", "opset4"),
}  # fmt: skip
"""Activation kinds that are one parameterless opset operation: kind -> (type, version)."""

KindEmitter = Callable[[EmitContext, Activation, Port], Port]


def _elu(ctx: EmitContext, op: Activation, x: Port) -> Port:
    return ctx.single("Elu", [x], x.type, name=ctx.name(op), data={"alpha": fmt_float(op.float_prop("alpha"))})


def _selu(ctx: EmitContext, op: Activation, x: Port) -> Port:
    alpha = ctx.scalar(op.float_prop("alpha"), x, ctx.name(op, "alpha"), rank=1)
    scale = ctx.scalar(op.float_prop("beta"), x, ctx.name(op, "lambda"), rank=1)
    return ctx.single("Selu", [x, alpha, scale], x.type, name=ctx.name(op))


def _gelu(mode: str) -> KindEmitter:
    def emit(ctx: EmitContext, op: Activation, x: Port) -> Port:
        return ctx.single("Gelu", [x], x.type, name=ctx.name(op), data={"approximation_mode": mode}, version="opset7")

    return emit


def _swish(ctx: EmitContext, op: Activation, x: Port) -> Port:
    beta = ctx.scalar(op.float_prop("alpha"), x, ctx.name(op, "beta"))
    return ctx.single("Swish", [x, beta], x.type, name=ctx.name(op), version="opset4")


def _hard_sigmoid(ctx: EmitContext, op: Activation, x: Port) -> Port:
    alpha = ctx.scalar(op.float_prop("alpha"), x, ctx.name(op, "alpha"))
    beta = ctx.scalar(op.float_prop("beta"), x, ctx.name(op, "beta"))
    return ctx.single("HardSigmoid", [x, alpha, beta], x.type, name=ctx.name(op))


def _relu6(ctx: EmitContext, op: Activation, x: Port) -> Port:
    return ctx.single("Clamp", [x], x.type, name=ctx.name(op), data={"min": "0", "max": "6"})


def _reciprocal(ctx: EmitContext, op: Activation, x: Port) -> Port:
    one = ctx.scalar(1.0, x, ctx.name(op, "one"))
    return ctx.single("Divide", [one, x], x.type, name=ctx.name(op), data={"auto_broadcast": "numpy", "m_pythondiv": "false"})


def _round(ctx: EmitContext, op: Activation, x: Port) -> Port:
    # numpy rounds halves to even
    return ctx.single("Round", [x], x.type, name=ctx.name(op), data={"mode": "half_to_even"}, version="opset5")


SPECIAL: dict[str, KindEmitter] = {
    "elu": _elu, "selu": _selu, "gelu": _gelu("ERF"), "gelu_tanh": _gelu("TANH"),
    "swish": _swish, "hsigmoid": _hard_sigmoid, "relu6": _relu6,
    "reciprocal": _reciprocal, "round": _round,
}  # fmt: skip


@ir_xml_emitter(Activation)
def activation(ctx: EmitContext, op: Activation, inputs: list[Port]) -> list[Port]:
    kind = op.str_prop("kind")
    if kind in UNARY:
        ov_type, version = UNARY[kind]
        return [ctx.single(ov_type, inputs, inputs[0].type, name=ctx.name(op), version=version)]
    return [SPECIAL[kind](ctx, op, inputs[0])]


@ir_xml_emitter(ReLU)
def relu(ctx: EmitContext, op: ReLU, inputs: list[Port]) -> list[Port]:
    x = inputs[0]
    slope = op.float_prop("negative_slope")
    if slope == 0:
        return [ctx.single("ReLU", [x], x.type, name=ctx.name(op))]
    return [ctx.single("PReLU", [x, ctx.scalar(slope, x, ctx.name(op, "slope"), rank=1)], x.type, name=ctx.name(op))]


@ir_xml_emitter(Clamp)
def clamp(ctx: EmitContext, op: Clamp, inputs: list[Port]) -> list[Port]:
    data = {"min": fmt_float(op.float_prop("min")), "max": fmt_float(op.float_prop("max"))}
    return [ctx.single("Clamp", inputs, inputs[0].type, name=ctx.name(op), data=data)]


@ir_xml_emitter(PReLU)
def prelu(ctx: EmitContext, op: PReLU, inputs: list[Port]) -> list[Port]:
    x, slope = inputs
    if slope.type.rank == 1 and x.type.rank > 2 and slope.dims[0] != 1:
        # a vector of C slopes applies along the channel axis 1: make that explicit
        slope = ctx.reshape(slope, (slope.dims[0],) + (1,) * (x.type.rank - 2), ctx.name(op, "slope"))
    return [ctx.single("PReLU", [x, slope], x.type, name=ctx.name(op))]


ELTWISE: dict[str, str] = {
    "sum": "Add", "sub": "Subtract", "mul": "Multiply", "div": "Divide", "max": "Maximum",
    "min": "Minimum", "pow": "Power", "squared_diff": "SquaredDifference", "mod": "Mod",
    "floor_mod": "FloorMod", "equal": "Equal", "not_equal": "NotEqual", "less": "Less",
    "less_equal": "LessEqual", "greater": "Greater", "greater_equal": "GreaterEqual",
    "and": "LogicalAnd", "or": "LogicalOr", "xor": "LogicalXor",
}  # fmt: skip


def binary(ctx: EmitContext, ov_type: str, a: Port, b: Port, out: PortType, name: str) -> Port:
    """A numpy-broadcasting binary layer (Divide truncates integers toward zero, as `nn` does)."""
    data = {"auto_broadcast": "numpy"}
    if ov_type == "Divide":
        data["m_pythondiv"] = fmt_bool(False)
    return ctx.single(ov_type, [a, b], out, name=name, data=data)


HUGE = 1e30
"""A multiplier at least this large (HF's finfo.min mask scale) makes OpenVINO's shift folding
lose an added constant."""


def one_value(value: object) -> float | None:
    owner = getattr(value, "owner", None)
    if not isinstance(owner, Constant):
        return None
    array = constant_value(owner, store_of(owner))
    return float(array.reshape(-1)[0]) if array.size == 1 and array.dtype.kind == "f" else None


def hits_ov_affine_shift_bug(op: Eltwise) -> bool:
    """Whether `op` adds (or subtracts) a constant to a product by a huge one-value constant:
    OpenVINO 2026.4.1's CPU plugin fuses (1 - m) * finfo.min + C as m * -finfo.min +
    (finfo.min + C), whose f32 shift rounds C away (HF's padding mask plus a constant causal
    mask, which the attention fusion sums: GPT-1 read 0 for every causal -1e4). Its own ONNX
    frontend computes the same; a rank change between the two layers keeps them apart."""
    if op.str_prop("operation") not in ("sum", "sub"):
        return False
    for side, other in ((0, 1), (1, 0)):
        producer = op.operands[side].owner
        if isinstance(op.operands[other].owner, Constant) and isinstance(producer, Eltwise) and producer.str_prop("operation") == "mul":
            factors = [one_value(v) for v in producer.operands]
            if any(f is not None and abs(f) >= HUGE for f in factors):
                return True
    return False


@ir_xml_emitter(Eltwise)
def eltwise(ctx: EmitContext, op: Eltwise, inputs: list[Port]) -> list[Port]:
    out = PortType.of(op.output.type)
    operation = op.str_prop("operation")
    if hits_ov_affine_shift_bug(op):
        # both sides one rank up, the result squeezed back: the same numbers, not fused
        name = ctx.name(op)
        up = [ctx.single("Unsqueeze", [p, ctx.ints([0], f"{name}/up{i}/axes")], p.type.with_dims((1, *p.dims)), name=f"{name}/up{i}")
              for i, p in enumerate(inputs)]
        wide = binary(ctx, ELTWISE[operation], up[0], up[1], out.with_dims((1, *out.dims)), f"{name}/wide")
        return [ctx.single("Squeeze", [wide, ctx.ints([0], f"{name}/axes")], out, name=name)]
    # the zero point / scale of compressed weights: kept f32 in an FP16 IR, as ovc keeps them
    decompressing = operation in ("sub", "mul") and any(ctx.is_decompression(p) for p in inputs)
    if decompressing:
        for port in inputs:
            port.keep_precision = port.array is not None or port.keep_precision
    result = binary(ctx, ELTWISE[operation], inputs[0], inputs[1], out, ctx.name(op))
    if decompressing:
        ctx.mark_decompression(result)
    return [result]


@ir_xml_emitter(Select)
def select(ctx: EmitContext, op: Select, inputs: list[Port]) -> list[Port]:
    data = {"auto_broadcast": "numpy"}
    return [ctx.single("Select", inputs, PortType.of(op.output.type), name=ctx.name(op), data=data)]


@ir_xml_emitter(Convert)
def convert(ctx: EmitContext, op: Convert, inputs: list[Port]) -> list[Port]:
    data = {"destination_type": element_name(from_xdsl(op.destination_type))}
    out = PortType.of(op.output.type)
    # f16 weights widened to f32 (compress-fp16): marked as OpenVINO marks its own, so that
    # its plugins may keep the weights in f16
    weights = inputs[0].array is not None and inputs[0].dtype == np.float16 and out.dtype == np.float32
    # integer weights (i4 / u4 / i8 / u8) to float: the start of their decompression subgraph
    compressed = inputs[0].array is not None and inputs[0].dtype in (np.int8, np.uint8) and out.dtype.kind == "f"
    outputs = ctx.layer("Convert", inputs, [out], name=ctx.name(op), data=data, rt_info=["decompression"] if weights else ())
    if compressed:
        ctx.mark_decompression(outputs[0])
    return outputs


@ir_xml_emitter(Identity)
def identity(ctx: EmitContext, op: Identity, inputs: list[Port]) -> list[Port]:
    return [inputs[0]]
