"""Element-wise activations: ReLU, Activation (by kind), Clamp, PReLU.

All of them keep the shape and element type of their input.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import FloatAttr, StringAttr, TensorType, f32
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from irforge.dialects.nn.base import NNOp, broadcast_shapes

ACTIVATION_KINDS = frozenset(
    {
        "sigmoid", "tanh", "elu", "selu", "exp", "log", "abs", "sqrt", "erf", "gelu",
        "gelu_tanh", "swish", "hswish", "hsigmoid", "softplus", "softsign", "mish", "relu6",
        "neg", "reciprocal", "floor", "ceil", "round", "sign", "sin", "cos", "not",
    }
)  # fmt: skip
"""`nn.activation` kinds; `alpha`/`beta` parameterise elu (alpha), selu (alpha, beta=gamma),
swish (alpha=beta), hsigmoid (alpha, beta as ONNX HardSigmoid)."""


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


@irdl_op_definition
class Clamp(UnaryNNOp):
    """min(max(x, min), max)."""

    name = "nn.clamp"
    min = prop_def(FloatAttr)
    max = prop_def(FloatAttr)

    def verify_attributes(self) -> None:
        if self.float_prop("min") > self.float_prop("max"):
            raise self.error("min must not exceed max")


@irdl_op_definition
class PReLU(NNOp):
    """x if x >= 0 else slope * x; a 1-D slope of C values applies along axis 1."""

    name = "nn.prelu"
    input = operand_def(TensorType)
    slope = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        x, slope = self.operand_shape(0), self.operand_shape(1)
        if len(slope) == 1 and len(x) >= 2 and slope[0] not in (1, x[1]):
            raise self.error(f"slope of {slope[0]} values does not match {x[1]} channels")
        if len(slope) != 1 and broadcast_shapes(self, x, slope) != x:
            raise self.error(f"slope shape {list(slope)} does not broadcast to {list(x)}")
        return [self.operand_type(0)]
