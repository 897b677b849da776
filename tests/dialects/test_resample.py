"""nn.resample: shape inference, verifier and numerics against onnxruntime's Resize."""

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import Resample
from irforge.dialects.nn.base import DYN
from tests.helpers import onnx_run, rand, run_op

COORDINATE_MODES = ["half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"]
NEAREST_MODES = ["round_prefer_floor", "round_prefer_ceil", "floor", "ceil"]
NO_ROI = np.zeros(0, np.float32)


def onnx_resize(x: np.ndarray, props: dict) -> np.ndarray:
    """onnxruntime's Resize with `props` in nn.resample form."""
    attrs = {k: v for k, v in props.items() if k not in ("scales", "sizes")}
    if "scales" in props:
        consts = [NO_ROI, np.array(props["scales"], np.float32)]
    else:
        consts = [NO_ROI, np.zeros(0, np.float32), np.array(props["sizes"], np.int64)]
    (y,) = onnx_run("Resize", [x], consts, **attrs)
    return y


def check(x: np.ndarray, **props: object) -> None:
    (got,) = run_op(Resample, [x], **props)
    np.testing.assert_allclose(got, onnx_resize(x, props), rtol=1e-5, atol=1e-5)


# (input shape, scales or sizes): up, down and mixed, with halfway coordinates (4 -> 6)
NEAREST_CASES = [
    ((1, 2, 4, 5), {"scales": [1.0, 1.0, 2.0, 3.0]}),
    ((2, 1, 9, 10), {"scales": [1.0, 1.0, 0.5, 0.7]}),
    ((1, 3, 4, 6), {"sizes": [1, 3, 6, 4]}),
    ((2, 3, 7), {"sizes": [2, 3, 10]}),
    ((1, 2, 3, 4, 5), {"scales": [1.0, 1.0, 1.5, 0.5, 2.0]}),
    ((3, 5), {"scales": [2.0, 0.6]}),
]


@pytest.mark.parametrize("x_shape, size", NEAREST_CASES)
@pytest.mark.parametrize("coordinate_mode", COORDINATE_MODES)
@pytest.mark.parametrize("nearest_mode", NEAREST_MODES)
def test_nearest_matches_onnxruntime(x_shape, size, coordinate_mode, nearest_mode):
    x = rand(*x_shape, seed=1)
    check(x, mode="nearest", coordinate_transformation_mode=coordinate_mode, nearest_mode=nearest_mode, **size)


# onnxruntime interpolates 2-D and 3-D inputs, or 4-D and 5-D ones with N and C kept
INTERPOLATION_CASES = [
    ((1, 2, 4, 5), {"scales": [1.0, 1.0, 2.0, 1.5]}),
    ((2, 3, 9, 8), {"scales": [1.0, 1.0, 0.5, 0.75]}),
    ((1, 1, 5, 4), {"sizes": [1, 1, 3, 7]}),
    ((6, 5), {"sizes": [9, 3]}),
    ((4, 7), {"scales": [1.0, 2.5]}),
]


@pytest.mark.parametrize("x_shape, size", INTERPOLATION_CASES)
@pytest.mark.parametrize("coordinate_mode", COORDINATE_MODES)
def test_linear_matches_onnxruntime(x_shape, size, coordinate_mode):
    x = rand(*x_shape, seed=2)
    check(x, mode="linear", coordinate_transformation_mode=coordinate_mode, **size)


@pytest.mark.parametrize(
    "x_shape, size",
    [((1, 2, 3, 4, 5), {"scales": [1.0, 1.0, 2.0, 1.5, 0.6]}), ((3, 4, 5), {"sizes": [5, 2, 8]})],
)
@pytest.mark.parametrize("coordinate_mode", ["half_pixel", "align_corners"])
def test_trilinear_matches_onnxruntime(x_shape, size, coordinate_mode):
    check(rand(*x_shape, seed=3), mode="linear", coordinate_transformation_mode=coordinate_mode, **size)


@pytest.mark.parametrize("x_shape, size", INTERPOLATION_CASES)
@pytest.mark.parametrize("coordinate_mode", COORDINATE_MODES)
@pytest.mark.parametrize("cubic_coeff_a", [-0.75, -0.5])
def test_cubic_matches_onnxruntime(x_shape, size, coordinate_mode, cubic_coeff_a):
    x = rand(*x_shape, seed=4)
    check(x, mode="cubic", coordinate_transformation_mode=coordinate_mode, cubic_coeff_a=cubic_coeff_a, **size)


def test_defaults_are_nearest_half_pixel_round_prefer_floor():
    x = np.arange(4, dtype=np.float32).reshape(1, 4)
    (got,) = run_op(Resample, [x], sizes=[1, 6])
    # 4 -> 6 with half_pixel: output 1 maps to 0.5, a tie rounded down
    np.testing.assert_array_equal(got, [[0, 0, 1, 2, 2, 3]])


def test_integer_inputs_keep_their_values_in_nearest_mode():
    x = np.arange(6, dtype=np.int64).reshape(2, 3)
    (got,) = run_op(Resample, [x], scales=[2.0, 1.0])
    np.testing.assert_array_equal(got, [[0, 1, 2], [0, 1, 2], [3, 4, 5], [3, 4, 5]])


def infer(x_shape, **props):
    b = ModelBuilder()
    return tuple(b.add(Resample, [b.input("x", x_shape)], **props).output.type.get_shape())


def test_resample_infers_dynamic_dims():
    assert infer((DYN, 3, 10, 10), scales=[1.0, 1.0, 0.7, 2.5]) == (DYN, 3, 7, 25)
    assert infer((DYN, 3, DYN, 10), sizes=[2, 3, 5, 5]) == (2, 3, 5, 5)


@pytest.mark.parametrize(
    "props, message",
    [
        ({}, "needs exactly one of scales and sizes"),
        ({"scales": [1.0, 1.0, 2.0, 2.0], "sizes": [1, 3, 8, 8]}, "needs exactly one of scales and sizes"),
        ({"scales": [2.0, 2.0]}, r"scales needs 4 values \(one per axis\), got 2"),
        ({"sizes": [1, 3, 8]}, r"sizes needs 4 values \(one per axis\), got 3"),
        ({"scales": [1.0, 1.0, 0.0, 2.0]}, "scales values must be > 0"),
        ({"sizes": [1, 3, 0, 8]}, "sizes values must be >= 1"),
        ({"scales": [1.0, 1.0, 0.1, 1.0]}, "output size .* is empty"),
        ({"scales": [1.0, 1.0, 2.0, 2.0], "mode": "bilinear"}, "mode must be one of cubic, linear, nearest"),
        ({"sizes": [1, 3, 8, 8], "coordinate_transformation_mode": "tf_crop_and_resize"}, "coordinate_trans"),
        ({"sizes": [1, 3, 8, 8], "nearest_mode": "round"}, "nearest_mode must be one of"),
    ],
)
def test_resample_rejects(props, message):
    with pytest.raises(VerifyException, match=message):
        run_op(Resample, [rand(1, 3, 4, 4)], name="up1", **props)
