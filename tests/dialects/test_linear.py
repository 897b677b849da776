"""nn.fully_connected, nn.matmul, nn.scale_shift, nn.batch_norm and nn.power: shape inference,
verifier and numerics against onnxruntime (Gemm, MatMul, BatchNormalization) or numpy."""

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr, TensorType, f32
from xdsl.utils.exceptions import VerifyException

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import BatchNormalization, FullyConnected, MatMul, Power, ScaleShift
from irforge.dialects.nn.base import DYN
from tests.helpers import onnx_run, rand, run_op


def infer(cls, shapes, **props):
    """The inferred result shape of `cls` applied to inputs of `shapes`."""
    b = ModelBuilder()
    operands = [b.input(f"x{i}", shape) for i, shape in enumerate(shapes)]
    return tuple(b.add(cls, operands, **props).output.type.get_shape())


# -- FullyConnected ----------------------------------------------------------------------
@pytest.mark.parametrize("batch, k, o", [(1, 3, 4), (5, 7, 3), (2, 1, 9), (3, 16, 1)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_fully_connected_matches_onnxruntime_gemm(batch, k, o, with_bias):
    x, w = rand(batch, k, seed=1), rand(o, k, seed=2)
    consts = [w] + ([rand(o, seed=3)] if with_bias else [])
    (got,) = run_op(FullyConnected, [x], consts)
    (want,) = onnx_run("Gemm", [x], consts, transB=1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x_shape", [(7,), (2, 3, 5), (2, 1, 3, 5), (1, 2, 3, 4, 5)])
def test_fully_connected_applies_to_the_last_axis(x_shape):
    x, w, b = rand(*x_shape, seed=4), rand(6, x_shape[-1], seed=5), rand(6, seed=6)
    (got,) = run_op(FullyConnected, [x], [w, b])
    (product,) = onnx_run("MatMul", [x], [np.ascontiguousarray(w.T)])
    np.testing.assert_allclose(got, product + b, rtol=1e-5, atol=1e-6)


def test_fully_connected_infers_dynamic_dims():
    assert infer(FullyConnected, [(DYN, 8), (4, 8)]) == (DYN, 4)
    assert infer(FullyConnected, [(DYN, DYN, 8), (4, DYN), (4,)]) == (DYN, DYN, 4)
    assert infer(FullyConnected, [(2, DYN), (DYN, 8), (DYN,)]) == (2, DYN)


@pytest.mark.parametrize(
    "shapes, message",
    [
        ([(2, 3), (4, 5)], "input has 3 features but weights expect 5"),
        ([(2, 3), (4, 3, 1)], r"weights must have rank 2 \(\[out, in\]\), got 3"),
        ([(2, 3), (4, 3), (3,)], r"bias must have shape \[4\], got \[3\]"),
        ([(2, 3), (4, 3), (1, 4)], r"bias must have shape \[4\], got \[1, 4\]"),
        ([(2, 3), (DYN, 3), (DYN, 4)], r"bias must have shape \[\?\], got \[\?, 4\]"),
        ([(), (4, 3)], "input must have rank >= 1, got 0"),
    ],
)
def test_fully_connected_rejects(shapes, message):
    with pytest.raises(VerifyException, match=f"nn.fully_connected 'fc1': {message}"):
        infer(FullyConnected, shapes, name="fc1")


# -- MatMul ------------------------------------------------------------------------------
MATMUL_CASES = [
    # (a shape, b shape, transpose_a, transpose_b)
    ((3, 4), (4, 5), False, False),
    ((2, 3, 4), (2, 4, 5), False, False),
    ((2, 1, 3, 4), (5, 4, 7), False, False),
    ((4,), (4, 5), False, False),
    ((3, 4), (4,), False, False),
    ((4,), (4,), False, False),
    ((3, 2, 5, 4), (4,), False, False),
    ((7,), (2, 3, 7, 5), False, False),
    ((4, 3), (4, 5), True, False),
    ((3, 4), (5, 4), False, True),
    ((2, 4, 3), (1, 5, 4), True, True),
    ((1, 2, 3, 4, 5), (2, 1, 1, 6, 5), False, True),
]


@pytest.mark.parametrize("a_shape, b_shape, transpose_a, transpose_b", MATMUL_CASES)
def test_matmul_matches_onnxruntime(a_shape, b_shape, transpose_a, transpose_b):
    a, b = rand(*a_shape, seed=7), rand(*b_shape, seed=8)
    (got,) = run_op(MatMul, [a, b], transpose_a=transpose_a, transpose_b=transpose_b)
    # ONNX MatMul has no transposes: give it the transposed operands
    a_t = np.swapaxes(a, -1, -2) if transpose_a else a
    b_t = np.swapaxes(b, -1, -2) if transpose_b else b
    (want,) = onnx_run("MatMul", [np.ascontiguousarray(a_t), np.ascontiguousarray(b_t)])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_matmul_ignores_transposes_of_1d_operands():
    a, b = rand(4, seed=9), rand(4, 3, seed=10)
    (got,) = run_op(MatMul, [a, b], transpose_a=True)
    np.testing.assert_allclose(got, a @ b, rtol=1e-6)


def test_matmul_infers_dynamic_dims():
    assert infer(MatMul, [(DYN, 3, 4), (4, 5)]) == (DYN, 3, 5)
    assert infer(MatMul, [(DYN, 1, DYN, 4), (1, 6, 4, DYN)]) == (DYN, 6, DYN, DYN)
    assert infer(MatMul, [(DYN, 4), (DYN,)]) == (DYN,)
    assert infer(MatMul, [(4, DYN), (DYN, 5)], transpose_a=True) == (DYN, 5)


@pytest.mark.parametrize(
    "shapes, props, message",
    [
        ([(3, 4), (5, 6)], {}, r"a has 4 columns but b has 5 rows \(after transpose_a=False, transpose_b=False\)"),
        ([(3, 4), (5, 4)], {"transpose_a": True}, "a has 3 columns but b has 5 rows"),
        ([(4,), (3,)], {}, "a has 4 columns but b has 3 rows"),
        ([(2, 3, 4), (3, 4, 5)], {}, r"shapes \[2\] and \[3\] cannot be broadcast"),
        ([(), (4,)], {}, "a must have rank >= 1, got 0"),
        ([(4,), ()], {}, "b must have rank >= 1, got 0"),
    ],
)
def test_matmul_rejects(shapes, props, message):
    with pytest.raises(VerifyException, match=f"nn.matmul 'mm1': {message}"):
        infer(MatMul, shapes, name="mm1", **props)


# -- ScaleShift --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "x_shape, axis",
    [
        ((2, 3), None),
        ((2, 5, 7), 1),
        ((3, 4, 5, 6), None),
        ((1, 2, 3, 4, 5), 1),
        ((2, 3, 4), -1),
        ((5, 2, 3), 0),
        ((4, 3, 2, 5), -2),
    ],
)
def test_scale_shift_matches_numpy(x_shape, axis):
    channels = x_shape[1 if axis is None else axis]
    x, scale, shift = rand(*x_shape, seed=11), rand(channels, seed=12), rand(channels, seed=13)
    (got,) = run_op(ScaleShift, [x], [scale, shift], axis=axis)
    moved = np.moveaxis(x, 1 if axis is None else axis, -1)
    want = np.moveaxis(moved * scale + shift, -1, 1 if axis is None else axis)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_scale_shift_infers_dynamic_dims():
    assert infer(ScaleShift, [(DYN, 3, DYN, DYN), (3,), (3,)]) == (DYN, 3, DYN, DYN)
    assert infer(ScaleShift, [(DYN, DYN, 4), (DYN,), (4,)], axis=-1) == (DYN, DYN, 4)


@pytest.mark.parametrize(
    "shapes, props, message",
    [
        ([(2, 3, 4), (4,), (3,)], {}, r"scale must have shape \[3\], got \[4\]"),
        ([(2, 3, 4), (3,), (1, 3)], {}, r"shift must have shape \[3\], got \[1, 3\]"),
        ([(2, 3, 4), (4,), (4,)], {"axis": 3}, "axis 3 is out of range for rank 3"),
        ([(2, 3, 4), (2,), (2,)], {"axis": -4}, "axis -4 is out of range for rank 3"),
    ],
)
def test_scale_shift_rejects(shapes, props, message):
    with pytest.raises(VerifyException, match=f"nn.scale_shift 'ss1': {message}"):
        infer(ScaleShift, shapes, name="ss1", **props)


# -- BatchNormalization ------------------------------------------------------------------
@pytest.mark.parametrize("x_shape", [(3, 5), (2, 3, 7), (2, 3, 5, 4), (1, 4, 3, 2, 5)])
@pytest.mark.parametrize("epsilon", [None, 1e-3])
def test_batch_norm_matches_onnxruntime(x_shape, epsilon):
    c = x_shape[1]
    x = rand(*x_shape, seed=14, low=-3.0, high=3.0)
    params = [rand(c, seed=15), rand(c, seed=16), rand(c, seed=17), rand(c, seed=18, low=0.1, high=2.0)]
    (got,) = run_op(BatchNormalization, [x], params, epsilon=epsilon)
    (want,) = onnx_run("BatchNormalization", [x], params, opset=15, epsilon=1e-5 if epsilon is None else epsilon)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_batch_norm_infers_dynamic_dims():
    assert infer(BatchNormalization, [(DYN, 3, DYN, DYN)] + [(3,)] * 4) == (DYN, 3, DYN, DYN)
    assert infer(BatchNormalization, [(DYN, DYN, 5)] + [(DYN,)] * 4) == (DYN, DYN, 5)


@pytest.mark.parametrize(
    "shapes, props, message",
    [
        ([(2, 3, 4)] + [(3,)] * 4, {"epsilon": 0.0}, "epsilon must be > 0, got 0$"),
        ([(2, 3, 4)] + [(3,)] * 4, {"epsilon": -1.0}, "epsilon must be > 0, got -1$"),
        ([(6,)] + [(6,)] * 4, {}, r"input must have rank >= 2 \(N, C, ...\), got 1"),
        ([(2, 3, 4), (4,), (3,), (3,), (3,)], {}, r"gamma must have shape \[3\], got \[4\]"),
        ([(2, 3, 4), (3,), (3, 1), (3,), (3,)], {}, r"beta must have shape \[3\], got \[3, 1\]"),
        ([(2, 3, 4), (3,), (3,), (2,), (3,)], {}, r"mean must have shape \[3\], got \[2\]"),
        ([(2, 3, 4), (3,), (3,), (3,), (1,)], {}, r"variance must have shape \[3\], got \[1\]"),
    ],
)
def test_batch_norm_rejects(shapes, props, message):
    with pytest.raises(VerifyException, match=f"nn.batch_norm 'bn1': {message}"):
        infer(BatchNormalization, shapes, name="bn1", **props)


# -- Power -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "props",
    [
        {},
        {"power": 2.0},
        {"power": 0.5, "scale": 3.0, "shift": -1.0},
        {"scale": -1.0},
        {"power": -1.5, "shift": 0.25},
        {"power": 3},
    ],
)
@pytest.mark.parametrize("x_shape", [(7,), (2, 3, 5), (1, 3, 4, 2, 3)])
def test_power_matches_numpy(props, x_shape):
    x = rand(*x_shape, seed=19, low=0.1, high=2.0)
    (got,) = run_op(Power, [x], **props)
    p, scale, shift = props.get("power", 1.0), props.get("scale", 1.0), props.get("shift", 0.0)
    want = scale * x.astype(np.float64) ** p + shift
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_power_of_negative_inputs_with_integral_exponent():
    x = np.array([-2.0, -0.5, 0.0, 3.0], np.float32)
    (got,) = run_op(Power, [x], power=3.0, scale=0.5, shift=1.0)
    np.testing.assert_allclose(got, [-3.0, 0.9375, 1.0, 14.5], rtol=1e-6)


def test_power_keeps_integer_element_types():
    x = np.array([[1, 2], [3, 4]], np.int32)
    (got,) = run_op(Power, [x], power=2.0, scale=2.0, shift=1.0)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[3, 9], [19, 33]])


def test_power_infers_dynamic_dims_and_runs():
    b = ModelBuilder()
    y = b.add(Power, [b.input("x", (DYN, 3))], power=2.0).output
    assert tuple(y.type.get_shape()) == (DYN, 3)
    b.output(y, "y")
    x = rand(4, 3, seed=20)
    np.testing.assert_allclose(run(b.finish(), {"x": x})["y"], x**2, rtol=1e-6)


def test_power_rejects_a_wrong_result_type():
    x = ModelBuilder().input("x", (2, 3))
    op = Power.create(operands=[x], result_types=[TensorType(f32, [3, 2])], properties={"name": StringAttr("pw1")})
    message = r"nn.power 'pw1': result #0 has type tensor<3x2xf32> but the operands imply tensor<2x3xf32>"
    with pytest.raises(VerifyException, match=message):
        op.verify()
