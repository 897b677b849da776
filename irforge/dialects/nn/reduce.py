"""Reductions over axes: Reduce (by operation) and ArgMax (index of the max or min)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, IntegerAttr, StringAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from irforge.dialects.nn.base import IntArrayAttr, NNOp, Shape, known, normalize_axis, tensor

REDUCE_OPERATIONS = frozenset(
    {"mean", "sum", "max", "min", "prod", "l1", "l2", "sum_square", "log_sum", "log_sum_exp"}
)
"""`nn.reduce` operations, over the reduced elements x_i: mean, sum, max, min, prod;
l1 = sum |x_i|, l2 = sqrt(sum x_i^2), sum_square = sum x_i^2, log_sum = log(sum x_i),
log_sum_exp = log(sum exp(x_i))."""


def reduced_shape(shape: Shape, axes: tuple[int, ...], keep_dims: bool) -> Shape:
    """`shape` with `axes` set to 1 (keep_dims) or dropped."""
    if keep_dims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


@irdl_op_definition
class Reduce(NNOp):
    """out = operation over x along `axes` (all axes if absent or empty); see REDUCE_OPERATIONS.

    Reduced axes stay as size 1 when keep_dims, else they are removed.
    """

    name = "nn.reduce"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    operation = prop_def(StringAttr)
    axes = opt_prop_def(IntArrayAttr)
    keep_dims = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))

    STRING_CHOICES: ClassVar = {"operation": REDUCE_OPERATIONS}

    def reduced_axes(self) -> tuple[int, ...]:
        """The reduced axes, non-negative and sorted."""
        rank = len(self.operand_shape(0))
        given = self.ints("axes")
        if not given:
            return tuple(range(rank))
        axes = [normalize_axis(self, a, rank, "axes") for a in given]
        repeated = sorted({a for a in axes if axes.count(a) > 1})
        if repeated:
            raise self.error(f"axes names axis {repeated[0]} more than once, got {list(given)}")
        return tuple(sorted(axes))

    def verify_attributes(self) -> None:
        self.reduced_axes()

    def infer_shapes(self) -> list[TensorType]:
        shape = reduced_shape(self.operand_shape(0), self.reduced_axes(), self.bool_prop("keep_dims"))
        return [tensor(shape, self.operand_type(0).element_type)]


@irdl_op_definition
class ArgMax(NNOp):
    """out[...] = index along `axis` of the max of x (min with mode "min"): the first such
    index, or the last with select_last_index. The result is i64; `axis` stays as size 1
    when keep_dims, else it is removed."""

    name = "nn.argmax"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))
    keep_dims = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    select_last_index = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    mode = opt_prop_def(StringAttr, default_value=StringAttr("max"))

    STRING_CHOICES: ClassVar = {"mode": frozenset({"max", "min"})}

    def reduced_axis(self) -> int:
        return normalize_axis(self, self.int_prop("axis"), len(self.operand_shape(0)))

    def verify_attributes(self) -> None:
        self.reduced_axis()

    def infer_shapes(self) -> list[TensorType]:
        x, axis = self.operand_shape(0), self.reduced_axis()
        if known(x[axis]) and x[axis] == 0:
            raise self.error(f"axis {axis} has no elements to choose from")
        return [tensor(reduced_shape(x, (axis,), self.bool_prop("keep_dims")), i64)]
