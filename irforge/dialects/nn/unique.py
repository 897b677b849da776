"""nn.unique: the distinct elements of a tensor (flattened) or its distinct slices along
`axis`, as OpenVINO's Unique-10 and ONNX's Unique compute them, with four results:

    unique    the distinct elements / slices: sorted ascending (`sorted`), or in the order of
              their first occurrence; their count, the size of the unique axis, is known only
              at run time (`?`)
    indices   i64 [?]: the position (flattened, or along `axis`) of each one's first occurrence
    inverse   i64 [N]: for each element (slice) of the input, its position in `unique`
    counts    i64 [?]: how often each occurs
"""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, IntegerAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from irforge.dialects.nn.base import DYN, NNOp, normalize_axis, product, tensor


@irdl_op_definition
class Unique(NNOp):
    """See the module docstring; `axis` absent: the input is flattened."""

    name = "nn.unique"
    input = operand_def(TensorType)
    unique = result_def(TensorType)
    indices = result_def(TensorType)
    inverse = result_def(TensorType)
    counts = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64))
    sorted = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))

    def unique_axis(self) -> int | None:
        """The non-negative axis, or None when the input is flattened."""
        if self.axis is None:
            return None
        return normalize_axis(self, self.int_prop("axis"), len(self.operand_shape(0)))

    def infer_shapes(self) -> list[TensorType]:
        shape = self.operand_shape(0)
        axis = self.unique_axis()
        if axis is None:
            unique, length = (DYN,), product(shape)
        else:
            unique, length = tuple(DYN if a == axis else d for a, d in enumerate(shape)), shape[axis]
        element = self.operand_type(0).element_type
        return [tensor(unique, element), tensor((DYN,), i64), tensor((length,), i64), tensor((DYN,), i64)]
