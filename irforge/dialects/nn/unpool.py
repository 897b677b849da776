"""Max pooling's argmax and its inverse, for SegNet / ENet style decoders: MaxPoolIndices
(the indices output of OpenVINO's MaxPool-8; Caffe's Pooling with a second `mask` top) and
MaxUnpool (the SegNet / ENet forks' `Upsample` with a mask bottom: each value written back at
the position its index names, zeros elsewhere)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from irforge.dialects.nn.base import IntArrayAttr, NNOp, tensor
from irforge.dialects.nn.conv import ROUNDING_TYPES, WindowedOp
from irforge.dialects.nn.indexing import check_indices, same_dims


@irdl_op_definition
class MaxPoolIndices(WindowedOp):
    """The i64 position of each max-pooling window's maximum (windows as nn.pooling's with
    method max): with axis 2, the flat index h * W + w within the input's own (unpadded)
    spatial plane, as Caffe's Pooling mask; with axis 0 (OpenVINO's default), the flat index in
    the whole input tensor. Ties give the first position in row-major window order."""

    name = "nn.max_pool_indices"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    kernel = opt_prop_def(IntArrayAttr)
    rounding_type = opt_prop_def(StringAttr, default_value=StringAttr("floor"))
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(2, i64))

    STRING_CHOICES: ClassVar = {**WindowedOp.STRING_CHOICES, "rounding_type": ROUNDING_TYPES}

    def verify_attributes(self) -> None:
        self.verify_window((("kernel", 1),))
        kernel = self.ints("kernel")
        if not kernel:
            raise self.error("kernel is required")
        begin, end = self.window("pads_begin", 0), self.window("pads_end", 0)
        if self.str_prop("auto_pad") == "explicit" and any(max(b, e) >= k for b, e, k in zip(begin, end, kernel)):
            raise self.error(f"pads must be smaller than kernel {list(kernel)}, got pads_begin {list(begin)} and pads_end {list(end)}")
        axis = self.int_prop("axis")
        if axis not in (0, 1, 2):
            raise self.error(f"axis must be 0, 1 or 2 (the first axis the flat index runs over), got {axis}")

    def ceil_mode(self) -> bool:
        return self.str_prop("rounding_type") == "ceil"

    def infer_shapes(self) -> list[TensorType]:
        x = self.operand_shape(0)
        spatial = self.output_spatial(self.ints("kernel"), self.ceil_mode())
        self.check_not_empty(spatial)
        return [tensor((x[0], x[1], *spatial), i64)]


@irdl_op_definition
class MaxUnpool(NNOp):
    """out[n, c] = zeros of spatial size `spatial`, then out[n, c].flat[indices[n, c, i]] =
    input[n, c, i] for every position i of the input plane (later writes win; an index outside
    the output plane is an error). indices: integer, input's shape."""

    name = "nn.max_unpool"
    input = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    spatial = opt_prop_def(IntArrayAttr)

    def infer_shapes(self) -> list[TensorType]:
        x, idx = self.operand_shape(0), self.operand_shape(1)
        spatial = self.ints("spatial")
        if len(x) < 3:
            raise self.error(f"input must have rank >= 3 (N, C, spatial...), got {len(x)}")
        if len(spatial) != len(x) - 2:
            raise self.error(f"spatial needs {len(x) - 2} values (one per spatial axis), got {len(spatial)}")
        if any(d < 1 for d in spatial):
            raise self.error(f"spatial sizes must be >= 1, got {list(spatial)}")
        check_indices(self, 1)
        same_dims(self, x, idx, "input vs indices")
        return [tensor((x[0], x[1], *spatial), self.operand_type(0).element_type)]
