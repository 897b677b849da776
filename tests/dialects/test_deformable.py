"""nn.deformable_convolution: shape inference, verifier, and the two border behaviours
(numerics against onnxruntime and OpenVINO are in tests/frontends/test_onnx_deform_conv.py)."""

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import DeformableConvolution
from irforge.dialects.nn.base import DYN
from tests.helpers import rand, run_op


def infer(x, off, w, mask=None, **props):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    operands = [b.input("x", x), b.input("off", off), b.input("w", w)] + ([b.input("m", mask)] if mask else [])
    op = b.add(DeformableConvolution, operands, **props)
    return tuple(op.output.type.get_shape())


def test_deformable_convolution_infers_n_o_ho_wo():
    assert infer((2, 4, 7, 8), (2, 18, 7, 8), (6, 4, 3, 3), (2, 9, 7, 8), pads_begin=[1, 1], pads_end=[1, 1]) == (2, 6, 7, 8)
    assert infer((1, 4, 9, 9), (1, 36, 3, 4), (6, 2, 3, 3), strides=[3, 2], group=2, deformable_group=2) == (1, 6, 3, 4)
    assert infer((DYN, 4, DYN, DYN), (DYN, 18, DYN, DYN), (6, 4, 3, 3)) == (DYN, 6, DYN, DYN)


def test_deformable_convolution_border_behaviours():
    """A single 1x1 tap at row 3.5 of a 4-row image: half of the last row when each
    neighbour outside reads 0 (ONNX), all of it when neighbours clamp (OpenVINO's false)."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 1, 1), np.float32)
    off = np.zeros((1, 2, 4, 4), np.float32)
    off[0, 0, 0, 0] = 3.5  # output pixel (0, 0) samples row 3.5, column 0
    (padded,) = run_op(DeformableConvolution, [x, off, w])
    (clamped,) = run_op(DeformableConvolution, [x, off, w], bilinear_interpolation_pad=False)
    assert padded[0, 0, 0, 0] == 6.0 and clamped[0, 0, 0, 0] == 12.0
    off[0, :, 0, 0] = -0.5, 1.0  # above the first row at column 1: half of x[0, 0, 0, 1] with the pad, 0 without
    (padded,) = run_op(DeformableConvolution, [x, off, w])
    (clamped,) = run_op(DeformableConvolution, [x, off, w], bilinear_interpolation_pad=False)
    assert padded[0, 0, 0, 0] == 0.5 and clamped[0, 0, 0, 0] == 0.0


@pytest.mark.parametrize(
    "x, off, w, mask, props, message",
    [
        ((1, 4, 5), (1, 18, 5), (6, 4, 3), None, {}, "must have rank 4"),
        ((1, 4, 5, 5), (1, 18, 3, 3), (6, 3, 3, 3), None, {}, r"input has 4 channels but weights expect 3 x group 1"),
        ((1, 4, 5, 5), (1, 18, 3, 3), (5, 2, 3, 3), None, {"group": 2}, "5 output channels are not divisible by group 2"),
        ((1, 4, 5, 5), (1, 54, 3, 3), (6, 4, 3, 3), None, {"deformable_group": 3}, "4 input channels are not divisible by deformable_group 3"),
        ((1, 4, 5, 5), (1, 9, 3, 3), (6, 4, 3, 3), None, {}, r"offsets must have shape \[N, 2 \* deformable_group \* kH \* kW, H_out, W_out\]"),
        ((1, 4, 5, 5), (1, 18, 3, 3), (6, 4, 3, 3), (1, 18, 3, 3), {}, r"mask must have shape \[N, deformable_group \* kH \* kW"),
        ((1, 4, 5, 5), (1, 18, 3, 3), (6, 4, 3, 3), None, {"deformable_group": 0}, "deformable_group must be >= 1"),
        ((1, 4, 5, 5), (1, 18, 3, 3), (6, 4, 3, 3), None, {"auto_pad": "same_upper"}, "auto_pad must be explicit"),
        ((1, 4, 5, 5), (1, 18, 3, 3), (6, 4, 3, 3), None, {"strides": [0, 1]}, "strides values must be >= 1"),
    ],
)
def test_deformable_convolution_rejects(x, off, w, mask, props, message):
    operands = [rand(*x), rand(*off), rand(*w)] + ([rand(*mask)] if mask else [])
    with pytest.raises(VerifyException, match=message):
        run_op(DeformableConvolution, operands, **props)
