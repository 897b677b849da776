"""Resample: ONNX Resize semantics (nearest, N-linear and cubic interpolation); ResampleTo to sizes computed at run time."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from xdsl.dialects.builtin import FloatAttr, StringAttr, TensorType, f32
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

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
        if prop == "scales" and not all(0 < v < float("inf") for v in values):  # NaN too
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
        if np.prod([float(d) for d in out if known(d)]) > 2.0**50:  # a scale of 1e30: dims past int64 in the IR
            raise self.error(f"output size {list(out)} holds more than 2**50 elements")
        return [tensor(out, self.operand_type(0).element_type)]


class RunTimeResample(NNOp):
    """What nn.resample_to and nn.resample_by share: the resized `axes` and nn.resample's
    interpolation properties (their second operand, sizes or scales, differs)."""

    axes = prop_def(IntArrayAttr)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("nearest"))
    coordinate_transformation_mode = opt_prop_def(StringAttr, default_value=StringAttr("half_pixel"))
    nearest_mode = opt_prop_def(StringAttr, default_value=StringAttr("round_prefer_floor"))
    cubic_coeff_a = opt_prop_def(FloatAttr, default_value=FloatAttr(-0.75, f32))

    STRING_CHOICES: ClassVar = Resample.STRING_CHOICES

    def resized_axes(self) -> tuple[int, ...]:
        from irforge.dialects.nn.shape import unique_axes

        return unique_axes(self, self.ints("axes"), len(self.operand_shape(0)))


@irdl_op_definition
class ResampleTo(RunTimeResample):
    """nn.resample to output sizes computed at run time: `sizes` is a 1-D i32 or i64 tensor
    with one size per entry of `axes` (the other axes keep their size; OpenVINO's
    Interpolate-11 with shape_calculation_mode "sizes" and a non-constant sizes input; ONNX
    Resize whose sizes come from data, as torchvision's mask and keypoint heads resize each
    box's map to the box). Interpolation as nn.resample's with scale sizes[i] / in_i.
    Constant sizes are nn.resample at import. The resized dims are dynamic."""

    name = "nn.resample_to"
    input = operand_def(TensorType)
    sizes = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        from xdsl.dialects.builtin import i32, i64

        n, sizes = len(self.ints("axes")), self.operand_type(1)
        if sizes.get_shape() != (n,) or sizes.element_type not in (i32, i64):
            raise self.error(f"sizes must be a 1-D i32 or i64 tensor of {n} values (one per axis), got {sizes}")
        from irforge.dialects.nn.indexing import known_elements

        # the sizes known before it runs (torch writes Concat(Shape(x)[:2], computed h, w)):
        # those dims stay static, as OpenVINO's partial values keep them
        out = list(self.operand_shape(0))
        for axis, size in zip(self.resized_axes(), known_elements(self.sizes)):
            out[axis] = size if known(size) and size >= 0 else DYN
        return [tensor(out, self.operand_type(0).element_type)]


@irdl_op_definition
class ResampleBy(RunTimeResample):
    """nn.resample by scales computed at run time: `scales` is a 1-D f32 tensor with one
    scale per entry of `axes` (the other axes keep their size; OpenVINO's Interpolate-11
    with shape_calculation_mode "scales" and a non-constant scales input; ONNX Resize whose
    scales come from data or from a shape, as F.interpolate(scale_factor=...) exported with
    dynamic shapes). Output sizes floor(in * scale) in float32, coordinates mapped with the
    scale itself, as nn.resample's `scales`. Constant scales are nn.resample at import. An
    axis whose scale is known to be 1 before it runs keeps its dim; the others are dynamic."""

    name = "nn.resample_by"
    input = operand_def(TensorType)
    scales = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        n, scales = len(self.ints("axes")), self.operand_type(1)
        if scales.get_shape() != (n,) or scales.element_type != f32:
            raise self.error(f"scales must be a 1-D f32 tensor of {n} values (one per axis), got {scales}")
        out = list(self.operand_shape(0))
        for axis, scale in zip(self.resized_axes(), known_scales(self.scales, n)):
            out[axis] = scaled_size(out[axis], scale) if scale is not None and known(out[axis]) else DYN
        return [tensor(out, self.operand_type(0).element_type)]


def known_scales(value, count: int) -> list[float | None]:  # type: ignore[no-untyped-def]
    """The scales known before it runs: a constant's, or the constant parts of a Concat
    (torch writes Concat([1, 1], computed h and w scales)); None where not known."""
    from irforge.dialects.nn.constant import Constant
    from irforge.dialects.nn.shape import Concat

    op = value.owner
    if isinstance(op, Constant) and op.value is not None:
        return [float(v) for v in op.inline_array().reshape(-1)]
    if isinstance(op, Concat):
        parts = [known_scales(v, v.type.get_shape()[0] if v.type.get_shape() else 1) for v in op.operands]
        flat = [s for p in parts for s in p]
        if len(flat) == count:
            return flat
    return [None] * count
