"""Element-wise activations: ReLU, Activation (by kind), Clamp, PReLU.

All of them keep the shape and element type of their input.
"""

from __future__ import annotations

import math
from typing import ClassVar

from xdsl.dialects.builtin import FloatAttr, StringAttr, TensorType, f32, i1
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from irforge.dialects.nn.base import DYN, NNOp, Shape, known

ACTIVATION_KINDS = frozenset(
    {
        "sigmoid", "tanh", "elu", "selu", "exp", "log", "abs", "sqrt", "erf", "gelu",
        "gelu_tanh", "swish", "hswish", "hsigmoid", "softplus", "softsign", "mish", "relu6",
        "neg", "reciprocal", "floor", "ceil", "round", "sign", "sin", "cos", "not",
        "asin", "acos", "atan", "asinh", "acosh", "atanh",
    }
)  # fmt: skip
"""`nn.activation` kinds; `alpha`/`beta` parameterise elu (alpha), selu (alpha, beta=gamma),
swish (alpha=beta), hsigmoid (alpha, beta as ONNX HardSigmoid). `not` takes and gives i1, the
other kinds are numeric."""


class UnaryNNOp(NNOp):
    """An op whose single result has the type of its first operand."""

    input = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        return [self.operand_type(0)]


@irdl_op_definition
class ReLU(UnaryNNOp):
    """max(x, 0) + negative_slope * min(x, 0) (leaky when negative_slope != 0)."""

    name = "nn.relu"
    negative_slope = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))


@irdl_op_definition
class Activation(UnaryNNOp):
    """A pointwise function selected by `kind` (see ACTIVATION_KINDS)."""

    name = "nn.activation"
    kind = prop_def(StringAttr)
    alpha = opt_prop_def(FloatAttr, default_value=FloatAttr(1.0, f32))
    beta = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))

    STRING_CHOICES: ClassVar = {"kind": ACTIVATION_KINDS}

    def infer_shapes(self) -> list[TensorType]:
        x = self.operand_type(0)
        kind = self.str_prop("kind")
        if (kind == "not") != (x.element_type == i1):
            need = "an i1" if kind == "not" else "a numeric"
            raise self.error(f"kind '{kind}' needs {need} input, got {x.element_type}")
        return [x]


@irdl_op_definition
class Clamp(UnaryNNOp):
    """min(max(x, min), max)."""

    name = "nn.clamp"
    min = prop_def(FloatAttr)
    max = prop_def(FloatAttr)

    def verify_attributes(self) -> None:
        low, high = self.float_prop("min"), self.float_prop("max")
        if math.isnan(low) or math.isnan(high):
            raise self.error("min and max must not be NaN")
        if low > high:
            raise self.error(f"min must not exceed max, got min {low} and max {high}")


@irdl_op_definition
class PReLU(NNOp):
    """x if x >= 0 else slope * x.

    A 1-D slope of C values applies along axis 1 (the channels) of an input of rank >= 2;
    any other slope broadcasts to the input as in numpy.
    """

    name = "nn.prelu"
    input = operand_def(TensorType)
    slope = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        x_type, slope_type = self.operand_type(0), self.operand_type(1)
        if slope_type.element_type != x_type.element_type:
            raise self.error(
                f"slope element type {slope_type.element_type} differs from the input's "
                f"{x_type.element_type}"
            )
        x, slope = self.operand_shape(0), self.operand_shape(1)
        if len(slope) == 1 and len(x) >= 2:
            if known(slope[0], x[1]) and slope[0] not in (1, x[1]):
                raise self.error(f"slope of {slope[0]} values does not match {x[1]} channels")
        elif not _broadcasts_to(slope, x):
            raise self.error(f"slope shape {list(slope)} does not broadcast to {list(x)}")
        return [x_type]


def _broadcasts_to(a: Shape, b: Shape) -> bool:
    """Whether numpy broadcasting of `a` gives `b` (DYN sizes may match anything)."""
    if len(a) > len(b):
        return False
    return all(x in (1, y) or DYN in (x, y) for x, y in zip(reversed(a), reversed(b)))
