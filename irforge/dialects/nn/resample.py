"""Resample: ONNX Resize semantics (nearest, N-linear and cubic interpolation)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import FloatAttr, StringAttr, TensorType, f32
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from irforge.dialects.nn.base import DYN, FloatArrayAttr, IntArrayAttr, NNOp, Shape, known, tensor

RESAMPLE_MODES = frozenset({"nearest", "linear", "cubic"})
COORDINATE_MODES = frozenset(
    {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"}
)
NEAREST_MODES = frozenset({"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})


def scaled_size(size: int, scale: float) -> int:
    """floor(size * scale), computed in float32 as onnxruntime does (10 * 0.7 gives 7)."""
    return int(np.float32(scale) * np.float32(size))


@irdl_op_definition
class Resample(NNOp):
    """out[*y] = interpolation of x around the source coordinates c_i(y_i), axis by axis.

    Each axis i maps output index y to a source coordinate with scale s_i (`scales`, or
    sizes[i] / in_i in float32): half_pixel (y + 0.5) / s - 0.5, asymmetric y / s,
    align_corners y * (in - 1) / (out - 1), pytorch_half_pixel as half_pixel but 0 when out
    is 1, tf_half_pixel_for_nn (y + 0.5) / s. `nearest` takes x at the coordinate rounded by
    `nearest_mode`; `linear` weighs the two neighbours by distance (N-linear over all axes
    with s != 1); `cubic` weighs four neighbours with Keys' kernel of parameter
    `cubic_coeff_a`. Neighbours outside the input repeat its edge. Output sizes are
    floor(in * s) with `scales`, else `sizes`.
    """

    name = "nn.resample"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("nearest"))
    scales = opt_prop_def(FloatArrayAttr)
    sizes = opt_prop_def(IntArrayAttr)
    coordinate_transformation_mode = opt_prop_def(StringAttr, default_value=StringAttr("half_pixel"))
    nearest_mode = opt_prop_def(StringAttr, default_value=StringAttr("round_prefer_floor"))
    cubic_coeff_a = opt_prop_def(FloatAttr, default_value=FloatAttr(-0.75, f32))

    STRING_CHOICES: ClassVar = {
        "mode": RESAMPLE_MODES,
        "coordinate_transformation_mode": COORDINATE_MODES,
        "nearest_mode": NEAREST_MODES,
    }

    def verify_attributes(self) -> None:
        if (self.scales is None) == (self.sizes is None):
            raise self.error("needs exactly one of scales and sizes")
        prop = "scales" if self.scales is not None else "sizes"
        values = self.floats(prop) if prop == "scales" else self.ints(prop)
        rank = len(self.operand_shape(0))
        if len(values) != rank:
            raise self.error(f"{prop} needs {rank} values (one per axis), got {len(values)}")
        if prop == "scales" and any(v <= 0 for v in values):
            raise self.error(f"scales values must be > 0, got [{', '.join(f'{v:g}' for v in values)}]")
        if prop == "sizes" and any(v < 1 for v in values):
            raise self.error(f"sizes values must be >= 1, got {list(values)}")

    def axis_scales(self, in_dims: Shape) -> tuple[float, ...]:
        """The scale of each axis for input sizes `in_dims` (float32 values)."""
        if self.scales is not None:
            return self.floats("scales")
        return tuple(float(np.float32(o) / np.float32(i)) for o, i in zip(self.ints("sizes"), in_dims))

    def output_dims(self, in_dims: Shape) -> Shape:
        if self.sizes is not None:
            return self.ints("sizes")
        return tuple(scaled_size(d, s) if known(d) else DYN for d, s in zip(in_dims, self.floats("scales")))

    def infer_shapes(self) -> list[TensorType]:
        x = self.operand_shape(0)
        out = self.output_dims(x)
        if any(known(d) and d < 1 for d in out):
            raise self.error(f"output size {list(out)} is empty")
        return [tensor(out, self.operand_type(0).element_type)]
