"""ONNX element-wise binary and variadic ops, and Cast -> nn.eltwise / nn.convert."""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from irforge.dialects.nn import Convert, Eltwise, Select
from irforge.frontends.onnx.mixed_floats import check_cast_declared_type, promoted
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl, to_xdsl

BINARY = {
    "Add": "sum",
    "Sub": "sub",
    "Mul": "mul",
    "Div": "div",
    "Pow": "pow",
    "Equal": "equal",
    "Less": "less",
    "LessOrEqual": "less_equal",
    "Greater": "greater",
    "GreaterOrEqual": "greater_equal",
    "And": "and",
    "Or": "or",
    "Xor": "xor",
}
VARIADIC = {"Sum": "sum", "Max": "max", "Min": "min", "Mean": "sum"}


@onnx_extractor(*BINARY)
def binary(ctx: NodeContext) -> SSAValue:
    a, b = ctx.input(0), ctx.input(1)
    if ctx.node.op_type == "Pow" and a.type.element_type != b.type.element_type:  # type: ignore[attr-defined]
        b = ctx.value(Convert, [b], suffix="/exponent", destination_type=a.type.element_type)  # type: ignore[attr-defined]
    a, b = promoted(ctx, a, b)  # torch's half exports: float16 with float32 (mixed_floats.py)
    return ctx.value(Eltwise, [a, b], operation=BINARY[ctx.node.op_type])


@onnx_extractor("Mod")
def mod(ctx: NodeContext) -> SSAValue:
    fmod = ctx.attr("fmod", 0)
    operation = "mod" if fmod else "floor_mod"
    return ctx.value(Eltwise, [ctx.input(0), ctx.input(1)], operation=operation)


@onnx_extractor(*VARIADIC)
def variadic(ctx: NodeContext) -> SSAValue:
    operation = VARIADIC[ctx.node.op_type]
    inputs = ctx.inputs()
    result = inputs[0]
    for i, other in enumerate(inputs[1:], start=1):
        suffix = "" if i == len(inputs) - 1 and ctx.node.op_type != "Mean" else f"/{i}"
        result = ctx.value(Eltwise, [result, other], suffix=suffix, operation=operation)
    if ctx.node.op_type == "Mean" and len(inputs) > 1:
        count = ctx.constant(np.array(len(inputs), from_xdsl(ctx.input_type(0).element_type)), "/count")
        result = ctx.value(Eltwise, [result, count], operation="div")
    return result


@onnx_extractor("Cast")
def cast(ctx: NodeContext) -> SSAValue:
    to = int(ctx.attr("to"))
    try:
        dtype = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(to))
        target = to_xdsl(dtype)
    except Exception:
        raise ctx.fail(f"Cast to ONNX type {to} is not supported", fix="cast to float32/float16/int32/int64/bool") from None
    check_cast_declared_type(ctx, to)
    return ctx.value(Convert, [ctx.input(0)], destination_type=target)


@onnx_extractor("Where")
def where(ctx: NodeContext) -> SSAValue:
    then, otherwise = promoted(ctx, ctx.input(1), ctx.input(2))  # torch.where promotes too (mixed_floats.py)
    return ctx.value(Select, [ctx.input(0), then, otherwise])
