"""Binary element-wise ops with numpy broadcasting, and type conversion.

`nn.eltwise` covers arithmetic (result has the operands' element type), comparisons and
logic (result is i1; `and`, `or` and `xor` take i1 operands). `nn.convert` changes the
element type; `nn.select` picks between two tensors by a condition; `nn.identity` forwards its input (Dropout and Identity import as it, and
canonicalize removes it).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import AnyFloat, IntegerType, StringAttr, TensorType, TypeAttribute, i1
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

from irforge.dialects.nn.activation import UnaryNNOp
from irforge.dialects.nn.base import NNOp, broadcast_shapes, tensor

ARITHMETIC = frozenset(
    {"sum", "sub", "mul", "div", "max", "min", "pow", "squared_diff", "mod", "floor_mod"}
)
"""`div` truncates integers toward zero; `mod` has the sign of the dividend (C fmod),
`floor_mod` that of the divisor (Python %)."""
LOGICAL = frozenset({"and", "or", "xor"})
COMPARISON = frozenset({"equal", "not_equal", "less", "less_equal", "greater", "greater_equal"})


@irdl_op_definition
class Eltwise(NNOp):
    """`operation`(lhs, rhs) element by element, operands broadcast as in numpy."""

    name = "nn.eltwise"
    operation = prop_def(StringAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    output = result_def(TensorType)

    STRING_CHOICES: ClassVar = {"operation": ARITHMETIC | COMPARISON | LOGICAL}

    def infer_shapes(self) -> list[TensorType]:
        a, b = self.operand_type(0), self.operand_type(1)
        if a.element_type != b.element_type:
            raise self.error(f"operand element types differ: {a.element_type} vs {b.element_type}")
        operation = self.str_prop("operation")
        if operation in LOGICAL and a.element_type != i1:
            raise self.error(f"operation '{operation}' needs i1 operands, got {a.element_type}")
        shape = broadcast_shapes(self, a.get_shape(), b.get_shape())
        element = a.element_type if operation in ARITHMETIC else i1
        return [tensor(shape, element)]


@irdl_op_definition
class Convert(NNOp):
    """Converts the element type to `destination_type` (float->int rounds toward zero)."""

    name = "nn.convert"
    destination_type = prop_def(TypeAttribute)
    input = operand_def(TensorType)
    output = result_def(TensorType)

    def verify_attributes(self) -> None:
        if not isinstance(self.destination_type, IntegerType | AnyFloat):
            raise self.error(
                f"destination_type must be an integer or float type, got {self.destination_type}"
            )

    def infer_shapes(self) -> list[TensorType]:
        return [tensor(self.operand_shape(0), self.destination_type)]


@irdl_op_definition
class Select(NNOp):
    """`then` where `condition` (i1) is true, else `otherwise`; all three broadcast as in numpy
    (OpenVINO's Select with numpy broadcasting, ONNX's Where)."""

    name = "nn.select"
    condition = operand_def(TensorType)
    then = operand_def(TensorType)
    otherwise = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        c, a, b = (self.operand_type(i) for i in range(3))
        if c.element_type != i1:
            raise self.error(f"condition must be i1, got {c.element_type}")
        if a.element_type != b.element_type:
            raise self.error(f"then and otherwise element types differ: {a.element_type} vs {b.element_type}")
        shape = broadcast_shapes(self, broadcast_shapes(self, c.get_shape(), a.get_shape()), b.get_shape())
        return [tensor(shape, a.element_type)]


@irdl_op_definition
class Identity(UnaryNNOp):
    """Forwards its input unchanged."""

    name = "nn.identity"
