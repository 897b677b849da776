"""MXNet arithmetic: elemwise_* / broadcast_* (and the older _plus, _Mul, ... names),
add_n / ElementWiseSum, and the _*_scalar ops (`scalar` attribute, r* forms with the
scalar on the left)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.dialects.nn import Eltwise
from irforge.frontends.mxnet.registry import NodeContext, mxnet_extractor
from irforge.weights.dtypes import from_xdsl

BINARY = {
    "elemwise_add": "sum", "elemwise_sub": "sub", "elemwise_mul": "mul", "elemwise_div": "div",
    "broadcast_add": "sum", "broadcast_plus": "sum", "broadcast_sub": "sub", "broadcast_minus": "sub",
    "broadcast_mul": "mul", "broadcast_div": "div", "broadcast_maximum": "max", "broadcast_minimum": "min",
    "broadcast_power": "pow", "broadcast_mod": "mod",
    "_plus": "sum", "_add": "sum", "_Plus": "sum", "_minus": "sub", "_sub": "sub", "_Minus": "sub",
    "_mul": "mul", "_Mul": "mul", "_div": "div", "_Div": "div", "_maximum": "max", "_Maximum": "max",
    "_minimum": "min", "_Minimum": "min", "_power": "pow", "_Power": "pow",
}  # fmt: skip
SCALAR = {
    "_plus_scalar": ("sum", False), "_PlusScalar": ("sum", False),
    "_minus_scalar": ("sub", False), "_MinusScalar": ("sub", False),
    "_rminus_scalar": ("sub", True), "_RMinusScalar": ("sub", True),
    "_mul_scalar": ("mul", False), "_MulScalar": ("mul", False),
    "_div_scalar": ("div", False), "_DivScalar": ("div", False),
    "_rdiv_scalar": ("div", True), "_RDivScalar": ("div", True),
    "_maximum_scalar": ("max", False), "_MaximumScalar": ("max", False),
    "_minimum_scalar": ("min", False), "_MinimumScalar": ("min", False),
    "_power_scalar": ("pow", False), "_PowerScalar": ("pow", False),
    "_rpower_scalar": ("pow", True), "_RPowerScalar": ("pow", True),
    "_mod_scalar": ("mod", False),
}  # fmt: skip
"""op -> (nn operation, whether the scalar is the left operand)."""


@mxnet_extractor(*BINARY)
def binary(ctx: NodeContext) -> SSAValue:
    if ctx.num_inputs != 2:
        raise ctx.fail(f"takes 2 inputs, has {ctx.num_inputs}")
    if ctx.op.startswith("elemwise_") and ctx.shape(0) != ctx.shape(1):
        raise ctx.fail(f"elementwise operands differ in shape: {list(ctx.shape(0))} and {list(ctx.shape(1))}")
    return ctx.value(Eltwise, [ctx.input(0), ctx.input(1)], operation=BINARY[ctx.op])


@mxnet_extractor("add_n", "ElementWiseSum", "_sum")
def add_n(ctx: NodeContext) -> SSAValue:
    ctx.attrs.int("num_args", ctx.num_inputs)
    total = ctx.input(0)
    for i in range(1, ctx.num_inputs):
        suffix = "" if i == ctx.num_inputs - 1 else f"/add{i}"
        total = ctx.value(Eltwise, [total, ctx.input(i)], suffix=suffix, operation="sum")
    return total


@mxnet_extractor(*SCALAR)
def scalar(ctx: NodeContext) -> SSAValue:
    operation, reverse = SCALAR[ctx.op]
    ctx.attrs.bool("is_int", False)  # MXNet 2: the scalar's type; the tensor's type wins here
    x = ctx.input(0)
    x_type = x.type
    assert isinstance(x_type, TensorType)
    value = ctx.constant(np.array(ctx.attrs.float("scalar", 1.0), from_xdsl(x_type.element_type)), "/scalar")
    operands = [value, x] if reverse else [x, value]
    return ctx.value(Eltwise, operands, operation=operation)
