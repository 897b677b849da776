"""Deformable convolution (v1 with offsets, v2 with offsets and a modulation mask): ONNX
DeformConv-19 (torchvision.ops.deform_conv2d), OpenVINO DeformableConvolution-8."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, IntegerAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, result_def

from irforge.dialects.nn.base import known, tensor
from irforge.dialects.nn.conv import WindowedOp


@irdl_op_definition
class DeformableConvolution(WindowedOp):
    """2-D convolution sampling the input at deformed tap positions.

    Tap (i, j) of output pixel (y, x) reads input[n, c] bilinearly (neighbours outside the
    input read 0) at row y*s_h - pad_top + i*d_h + dy and column x*s_w - pad_left + j*d_w + dx,
    where (dy, dx) = offsets[n, 2*t, y, x], offsets[n, 2*t + 1, y, x] for
    t = g_off * kH*kW + i*kW + j, and g_off is c's offset group (C / deformable_group channels
    each; bilinear_interpolation_pad false changes the border: see the property). With a
    mask the sample is multiplied by mask[n, t, y, x]. Weights are O(C/group)HW as in
    Convolution; no bias (a separate add).
    """

    name = "nn.deformable_convolution"
    input = operand_def(TensorType)
    offsets = operand_def(TensorType)
    weights = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    output = result_def(TensorType)
    group = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))
    deformable_group = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))
    # true (ONNX, torchvision, mmcv): each of the 4 neighbours outside the input reads 0;
    # false (OpenVINO's default, MXNet): a point outside [0, H) x [0, W) reads 0, inside ones
    # clamp their neighbours into the input
    bilinear_interpolation_pad = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))

    SAME_ELEMENT_TYPE: ClassVar = ("input", "offsets", "weights", "mask")

    def verify_attributes(self) -> None:
        self.verify_window()
        for prop in ("group", "deformable_group"):
            if self.int_prop(prop) < 1:
                raise self.error(f"{prop} must be >= 1, got {self.int_prop(prop)}")
        if self.str_prop("auto_pad") != "explicit":
            raise self.error(f"auto_pad must be explicit, got '{self.str_prop('auto_pad')}'")

    def infer_shapes(self) -> list[TensorType]:
        x, off, w = self.operand_shape(0), self.operand_shape(1), self.operand_shape(2)
        if len(x) != 4 or len(w) != 4 or len(off) != 4:
            raise self.error(f"input, offsets and weights must have rank 4, got {len(x)}, {len(off)} and {len(w)}")
        group, dgroup = self.int_prop("group"), self.int_prop("deformable_group")
        if known(x[1], w[1]) and x[1] != w[1] * group:
            raise self.error(f"input has {x[1]} channels but weights expect {w[1]} x group {group}")
        if known(w[0]) and w[0] % group:
            raise self.error(f"{w[0]} output channels are not divisible by group {group}")
        if known(x[1]) and x[1] % dgroup:
            raise self.error(f"{x[1]} input channels are not divisible by deformable_group {dgroup}")
        spatial = self.output_spatial(w[2:])
        self.check_not_empty(spatial)
        taps = dgroup * w[2] * w[3] if known(w[2], w[3]) else None
        expect = [x[0], 2 * taps if taps else None, *spatial]
        if any(known(a, b) and a != b for a, b in zip(off, expect) if b is not None):
            raise self.error(f"offsets must have shape [N, 2 * deformable_group * kH * kW, H_out, W_out] = {_show(expect)}, got {list(off)}")
        if self.mask is not None:
            m = self.operand_shape(3)
            expect[1] = taps
            if len(m) != 4 or any(known(a, b) and a != b for a, b in zip(m, expect) if b is not None):
                raise self.error(f"mask must have shape [N, deformable_group * kH * kW, H_out, W_out] = {_show(expect)}, got {list(m)}")
        return [tensor((x[0], w[0], *spatial), self.operand_type(0).element_type)]


def _show(dims: list[int | None]) -> list[object]:
    return [d if d is not None and known(d) else "?" for d in dims]

