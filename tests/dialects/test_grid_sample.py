"""nn.grid_sample: shape inference, verifier and nearest's rounding (numerics against
onnxruntime are in tests/frontends/test_onnx_grid_sample.py)."""

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import GridSample
from irforge.dialects.nn.base import DYN
from tests.helpers import rand, run_op


def infer_grid_sample(x_shape, grid_shape, **props):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    op = b.add(GridSample, [b.input("x", x_shape), b.input("grid", grid_shape)], **props)
    return tuple(op.output.type.get_shape())


def test_grid_sample_infers_n_c_ho_wo():
    assert infer_grid_sample((2, 3, 5, 7), (2, 4, 6, 2)) == (2, 3, 4, 6)
    assert infer_grid_sample((DYN, 3, DYN, DYN), (2, DYN, 6, 2)) == (2, 3, DYN, 6)


def test_grid_sample_nearest_rounds_half_to_even():
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 1, 5)
    # align_corners: x = (g + 1) * 2, so g = -0.75, -0.25, 0.25 fall on 0.5, 1.5, 2.5
    grid = np.array([[[[-0.75, 0.0], [-0.25, 0.0], [0.25, 0.0]]]], np.float32)
    (got,) = run_op(GridSample, [x, grid], mode="nearest", align_corners=True)
    np.testing.assert_array_equal(got.reshape(-1), [0, 2, 2])


@pytest.mark.parametrize(
    "x_shape, grid_shape, props, message",
    [
        ((1, 3, 4), (1, 2, 2, 2), {}, r"input must have rank 4 \(N, C, H, W\), got 3"),
        ((1, 3, 4, 4), (1, 2, 2, 3), {}, r"grid must have shape \[N, H_out, W_out, 2\]"),
        ((2, 3, 4, 4), (1, 2, 2, 2), {}, "input batch 2 and grid batch 1 differ"),
        ((1, 3, 4, 4), (1, 2, 2, 2), {"mode": "linear"}, "mode must be one of bicubic, bilinear, nearest"),
        ((1, 3, 4, 4), (1, 2, 2, 2), {"padding_mode": "wrap"}, "padding_mode must be one of border, reflection, zeros"),
    ],
)
def test_grid_sample_rejects(x_shape, grid_shape, props, message):
    with pytest.raises(VerifyException, match=message):
        run_op(GridSample, [rand(*x_shape), rand(*grid_shape)], **props)
