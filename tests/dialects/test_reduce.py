"""nn.reduce and nn.argmax: shape inference, verifier and numerics against onnxruntime's
Reduce* (opset 18, axes as an input) and ArgMax/ArgMin."""

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import ArgMax, Reduce
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.reduce import REDUCE_OPERATIONS
from tests.helpers import onnx_run, rand, run_op

ONNX_REDUCE = {
    "mean": "ReduceMean",
    "sum": "ReduceSum",
    "max": "ReduceMax",
    "min": "ReduceMin",
    "prod": "ReduceProd",
    "l1": "ReduceL1",
    "l2": "ReduceL2",
    "sum_square": "ReduceSumSquare",
    "log_sum": "ReduceLogSum",
    "log_sum_exp": "ReduceLogSumExp",
}

AXES_CASES = [
    ((2, 3, 4, 5), None),
    ((2, 3, 4, 5), []),
    ((2, 3, 4, 5), [1]),
    ((2, 3, 4, 5), [-1]),
    ((3, 4, 5), [0, 2]),
    ((3, 4, 5), [-3, 1]),
    ((7,), [0]),
    ((2, 1, 6), [2, 1]),
]


def test_every_operation_has_an_onnx_counterpart():
    assert set(ONNX_REDUCE) == REDUCE_OPERATIONS


@pytest.mark.parametrize("operation", sorted(ONNX_REDUCE))
@pytest.mark.parametrize("x_shape, axes", AXES_CASES)
@pytest.mark.parametrize("keep_dims", [True, False])
def test_reduce_matches_onnxruntime(operation, x_shape, axes, keep_dims):
    # log_sum needs positive sums; the rest see signed values
    x = rand(*x_shape, seed=1, low=0.1 if operation == "log_sum" else -1.0)
    (got,) = run_op(Reduce, [x], operation=operation, axes=axes, keep_dims=keep_dims)
    consts = [] if axes is None else [np.array(axes, np.int64)]
    (want,) = onnx_run(ONNX_REDUCE[operation], [x], consts, opset=18, keepdims=int(keep_dims))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_log_sum_exp_is_stable_for_large_inputs():
    x = np.array([[1000.0, 1000.0], [-1000.0, -1001.0]], np.float32)
    (got,) = run_op(Reduce, [x], operation="log_sum_exp", axes=[1], keep_dims=False)
    np.testing.assert_allclose(got, [1000 + np.log(2), -1000 + np.log1p(np.exp(-1))], rtol=1e-6)


def test_reduce_keeps_integer_element_types():
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    (got,) = run_op(Reduce, [x], operation="sum", axes=[0])
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, [[12, 15, 18, 21]])


def infer(cls, x_shape, **props):
    b = ModelBuilder()
    result = b.add(cls, [b.input("x", x_shape)], **props).output.type
    return tuple(result.get_shape()), result.element_type


def test_reduce_infers_dynamic_dims():
    assert infer(Reduce, (DYN, 3, 4), operation="mean", axes=[2])[0] == (DYN, 3, 1)
    assert infer(Reduce, (DYN, 3, DYN), operation="max", axes=[-1], keep_dims=False)[0] == (DYN, 3)
    assert infer(Reduce, (DYN, 3, 4), operation="sum", keep_dims=False)[0] == ()


@pytest.mark.parametrize(
    "props, message",
    [
        ({"operation": "avg"}, "operation must be one of l1, l2, log_sum, log_sum_exp, max, mean"),
        ({"operation": "sum", "axes": [3]}, "axes 3 is out of range for rank 3"),
        ({"operation": "sum", "axes": [-4]}, "axes -4 is out of range for rank 3"),
        ({"operation": "sum", "axes": [1, -2]}, "axes names axis 1 more than once"),
    ],
)
def test_reduce_rejects(props, message):
    with pytest.raises(VerifyException, match=message):
        run_op(Reduce, [rand(2, 3, 4)], name="reduce1", **props)


ONNX_ARG = {"max": "ArgMax", "min": "ArgMin"}


@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize(
    "x_shape, axis", [((2, 3, 4), 0), ((2, 3, 4), 1), ((2, 3, 4), -1), ((5,), 0), ((3, 1, 2), 1)]
)
@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("select_last_index", [False, True])
def test_argmax_matches_onnxruntime(mode, x_shape, axis, keep_dims, select_last_index):
    # few distinct values, so ties decide between the first and the last index
    x = np.round(rand(*x_shape, seed=2) * 2).astype(np.float32)
    props = {"axis": axis, "keep_dims": keep_dims, "select_last_index": select_last_index}
    (got,) = run_op(ArgMax, [x], mode=mode, **props)
    attrs = {"axis": axis, "keepdims": int(keep_dims), "select_last_index": int(select_last_index)}
    (want,) = onnx_run(ONNX_ARG[mode], [x], **attrs)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)


def test_argmax_defaults_to_the_first_max_along_axis_0():
    x = np.array([[1.0, 5.0], [3.0, 5.0]], np.float32)
    (got,) = run_op(ArgMax, [x])
    np.testing.assert_array_equal(got, [[1, 0]])


def test_argmax_infers_dynamic_dims_and_i64():
    shape, element_type = infer(ArgMax, (DYN, 10, DYN), axis=1, keep_dims=False)
    assert shape == (DYN, DYN) and str(element_type) == "i64"


@pytest.mark.parametrize(
    "x_shape, props, message",
    [
        ((2, 3), {"axis": 2}, "axis 2 is out of range for rank 2"),
        ((2, 3), {"axis": -3}, "axis -3 is out of range for rank 2"),
        ((2, 3), {"mode": "median"}, "mode must be one of max, min"),
        ((2, 0), {"axis": 1}, "axis 1 has no elements to choose from"),
    ],
)
def test_argmax_rejects(x_shape, props, message):
    with pytest.raises(VerifyException, match=message):
        run_op(ArgMax, [rand(*x_shape)], name="arg1", **props)
