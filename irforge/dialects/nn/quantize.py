"""Quantization: FakeQuantize (OpenVINO opset1), the form INT8 models take in an IR.

    nn.fake_quantize x, input_low, input_high, output_low, output_high {levels = L}

element by element, the four bounds broadcasting against x as in numpy (per tensor: one value;
per channel: [1, C, 1, 1]):

    x <= min(input_low, input_high)  -> output_low
    x >  max(input_low, input_high)  -> output_high
    otherwise  round((x - input_low) / (input_high - input_low) * (L - 1)) / (L - 1)
               * (output_high - output_low) + output_low

with round to nearest, ties to even (OpenVINO's nearbyint). ONNX's QuantizeLinear ->
DequantizeLinear pair with scale s and zero point z over [qmin, qmax] is this op with
L = qmax - qmin + 1 and all four bounds (qmin - z) * s, (qmax - z) * s. Weights stay integer
constants with a decompression chain instead (Constant i8 -> nn.convert -> sub zero point ->
mul scale); `is_weight_decompression` tells constant folding to leave that chain alone.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat, IntegerAttr, IntegerType, TensorType
from xdsl.ir import Operation
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

from irforge.dialects.nn.base import NNOp, broadcast_shapes


@irdl_op_definition
class FakeQuantize(NNOp):
    """x quantized to `levels` levels over [input_low, input_high], mapped to [output_low,
    output_high] (see the module docstring)."""

    name = "nn.fake_quantize"
    input = operand_def(TensorType)
    input_low = operand_def(TensorType)
    input_high = operand_def(TensorType)
    output_low = operand_def(TensorType)
    output_high = operand_def(TensorType)
    output = result_def(TensorType)
    levels = prop_def(IntegerAttr)

    def verify_attributes(self) -> None:
        if self.int_prop("levels") < 2:
            raise self.error(f"levels must be >= 2, got {self.int_prop('levels')}")

    def infer_shapes(self) -> list[TensorType]:
        x = self.operand_type(0)
        if not isinstance(x.element_type, AnyFloat):
            raise self.error(f"input must be a float tensor, got {x.element_type}")
        for index, what in enumerate(("input_low", "input_high", "output_low", "output_high"), start=1):
            bound = self.operand_type(index)
            if bound.element_type != x.element_type:
                raise self.error(f"{what} has element type {bound.element_type}, input {x.element_type}")
            if broadcast_shapes(self, x.get_shape(), bound.get_shape()) != tuple(x.get_shape()):
                raise self.error(f"{what} of shape {list(bound.get_shape())} must broadcast to the input's {list(x.get_shape())}")
        return [x]


def is_weight_decompression(op: Operation) -> bool:
    """An nn.convert of an 8-bit integer constant to a float type: the start of an INT8
    weight's decompression chain, which stays in the model as OpenVINO keeps it."""
    from irforge.dialects.nn.constant import Constant
    from irforge.dialects.nn.elementwise import Convert

    if not isinstance(op, Convert) or not isinstance(op.destination_type, AnyFloat):
        return False
    source = op.operands[0]
    element = getattr(source.type, "element_type", None)
    return isinstance(source.owner, Constant) and isinstance(element, IntegerType) and element.width.data == 8
