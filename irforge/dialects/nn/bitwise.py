"""nn.bitwise: integer bit operations element by element (ONNX BitwiseAnd / Or / Xor / Not
and BitShift; OpenVINO's BitwiseAnd-13 / Or / Xor / Not and BitwiseLeftShift-15 /
RightShift-15). Binary operations broadcast as in numpy; `not` has one operand. Shifts move
the bits of lhs by rhs places (right shifts of unsigned values fill with zeros)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerType, StringAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, prop_def, result_def

from irforge.dialects.nn.base import NNOp, broadcast_shapes, tensor

BITWISE_OPERATIONS = frozenset({"and", "or", "xor", "not", "left_shift", "right_shift"})


@irdl_op_definition
class Bitwise(NNOp):
    """`operation`(lhs, rhs) (or `not`(lhs)) on integer tensors of one element type."""

    name = "nn.bitwise"
    operation = prop_def(StringAttr)
    lhs = operand_def(TensorType)
    rhs = opt_operand_def(TensorType)
    output = result_def(TensorType)

    STRING_CHOICES: ClassVar = {"operation": BITWISE_OPERATIONS}

    def infer_shapes(self) -> list[TensorType]:
        a = self.operand_type(0)
        if not isinstance(a.element_type, IntegerType) or a.element_type.width.data == 1:
            raise self.error(f"bit operations need integer operands, got {a.element_type}")
        unary = self.str_prop("operation") == "not"
        if unary != (len(self.operands) == 1):
            raise self.error(f"operation '{self.str_prop('operation')}' takes {1 if unary else 2} operands, got {len(self.operands)}")
        if unary:
            return [tensor(a.get_shape(), a.element_type)]
        b = self.operand_type(1)
        if a.element_type != b.element_type:
            raise self.error(f"operand element types differ: {a.element_type} vs {b.element_type}")
        return [tensor(broadcast_shapes(self, a.get_shape(), b.get_shape()), a.element_type)]
