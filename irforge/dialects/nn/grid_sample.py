"""GridSample: bilinear, nearest or bicubic sampling of an image at the points of a grid
(ONNX GridSample-16/20 on 4-D input, OpenVINO GridSample-9)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, StringAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from irforge.dialects.nn.base import NNOp, known, tensor


GRID_SAMPLE_MODES = frozenset({"bilinear", "nearest", "bicubic"})
GRID_PADDING_MODES = frozenset({"zeros", "border", "reflection"})


@irdl_op_definition
class GridSample(NNOp):
    """out[n, c, h, w] = input[n, c] sampled at grid[n, h, w] = (x, y) in [-1, 1] (ONNX
    GridSample-16/20 of 4-D input, OpenVINO GridSample-9, torch's grid_sample).

    x maps to a pixel coordinate ((x + 1) / 2) * (W - 1) with align_corners, else
    ((x + 1) * W - 1) / 2 (y likewise with H). `bilinear` weighs the 4 neighbours, `nearest`
    takes the coordinate rounded half to even, `bicubic` weighs 4 x 4 neighbours with Keys'
    kernel (a = -0.75). Neighbours outside the input read `padding_mode`: zeros 0, border the
    edge pixel, reflection the coordinate reflected at the borders (pixel centres with
    align_corners, else the image edges, -0.5 and W - 0.5), then clamped.
    """

    name = "nn.grid_sample"
    input = operand_def(TensorType)
    grid = operand_def(TensorType)
    output = result_def(TensorType)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("bilinear"))
    padding_mode = opt_prop_def(StringAttr, default_value=StringAttr("zeros"))
    align_corners = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    STRING_CHOICES: ClassVar = {"mode": GRID_SAMPLE_MODES, "padding_mode": GRID_PADDING_MODES}

    def infer_shapes(self) -> list[TensorType]:
        x, grid = self.operand_shape(0), self.operand_shape(1)
        if len(x) != 4:
            raise self.error(f"input must have rank 4 (N, C, H, W), got {len(x)}")
        if len(grid) != 4 or (known(grid[3]) and grid[3] != 2):
            raise self.error(f"grid must have shape [N, H_out, W_out, 2], got {list(grid)}")
        if known(x[0], grid[0]) and x[0] != grid[0]:
            raise self.error(f"input batch {x[0]} and grid batch {grid[0]} differ")
        batch = x[0] if known(x[0]) else grid[0]
        return [tensor((batch, x[1], grid[1], grid[2]), self.operand_type(0).element_type)]
