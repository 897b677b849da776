"""nn.eltwise, nn.convert, nn.identity: numerics against onnxruntime (numpy where ONNX has no
such op), broadcasting, shape inference and verifier."""

import numpy as np
import pytest
from onnx import helper
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, StringAttr, TensorType, f16, f32, i1, i32, i64
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import Convert, Eltwise, Identity, Select
from irforge.dialects.nn.elementwise import ARITHMETIC, COMPARISON, LOGICAL
from irforge.weights.dtypes import to_xdsl
from tests.helpers import onnx_run, rand, run_op

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

DYN = DYNAMIC_INDEX

# operation -> (ONNX op, ONNX attributes)
ONNX_BINARY = {
    "sum": ("Add", {}),
    "sub": ("Sub", {}),
    "mul": ("Mul", {}),
    "div": ("Div", {}),
    "max": ("Max", {}),
    "min": ("Min", {}),
    "pow": ("Pow", {}),
    "mod": ("Mod", {"fmod": 1}),
    "equal": ("Equal", {}),
    "less": ("Less", {}),
    "less_equal": ("LessOrEqual", {}),
    "greater": ("Greater", {}),
    "greater_equal": ("GreaterOrEqual", {}),
}
NUMPY_BINARY = {
    "squared_diff": lambda a, b: np.square(a - b),
    "not_equal": np.not_equal,
}

BROADCASTS = [
    ((2, 3, 4, 5), (2, 3, 4, 5)),
    ((2, 3, 4, 5), ()),  # scalar
    ((), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (3, 1, 1)),  # per channel
    ((3, 1, 1), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (5,)),  # rank-different
    ((4, 1), (2, 3, 1, 5)),
    ((2, 1, 4, 1), (1, 3, 1, 5)),  # both sides broadcast
]


def operands(a_shape, b_shape, operation: str, dtype=np.float32) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(rand(*a_shape, seed=1, low=-4.0, high=4.0))
    b = np.asarray(rand(*b_shape, seed=2, low=-4.0, high=4.0))
    if operation == "pow":
        a = np.abs(a) + np.float32(0.1)  # a negative base has no real power
    if operation in ("div", "mod"):
        b = np.where(np.abs(b) < 0.5, np.float32(1.5), b)
    if operation in COMPARISON:
        a, b = np.round(a), np.round(b)  # with ties
    return np.asarray(a, dtype), np.asarray(b, dtype)


@pytest.mark.parametrize("operation", sorted(ONNX_BINARY))
@pytest.mark.parametrize("a_shape, b_shape", BROADCASTS)
def test_eltwise_matches_onnxruntime(operation, a_shape, b_shape):
    a, b = operands(a_shape, b_shape, operation)
    (got,) = run_op(Eltwise, [a, b], operation=operation)
    op_type, attrs = ONNX_BINARY[operation]
    (want,) = onnx_run(op_type, [a, b], **attrs)
    assert got.dtype == (np.bool_ if operation in COMPARISON else np.float32)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("operation", sorted(NUMPY_BINARY))
@pytest.mark.parametrize("a_shape, b_shape", BROADCASTS)
def test_eltwise_matches_numpy(operation, a_shape, b_shape):
    a, b = operands(a_shape, b_shape, operation)
    (got,) = run_op(Eltwise, [a, b], operation=operation)
    np.testing.assert_allclose(got, NUMPY_BINARY[operation](a, b), rtol=1e-6)


def test_not_equal_is_not_of_equal():
    a = np.array([[1.0, 2.0, np.nan], [0.0, -0.0, 3.0]], np.float32)
    b = np.array([2.0, -0.0, np.nan], np.float32)
    (got,) = run_op(Eltwise, [a, b], operation="not_equal")
    (equal,) = onnx_run("Equal", [a, b])
    np.testing.assert_array_equal(got, ~equal)


def test_every_operation_is_checked():
    assert set(ONNX_BINARY) | set(NUMPY_BINARY) | LOGICAL | {"floor_mod"} == ARITHMETIC | COMPARISON | LOGICAL


INTEGER_OPERATIONS = ["sum", "sub", "mul", "div", "max", "min", "mod", "equal", "less", "greater_equal"]


@pytest.mark.parametrize("operation", INTEGER_OPERATIONS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_eltwise_matches_onnxruntime(operation, dtype):
    a = np.array([[-7, -7, 7, 7, 0, 9, -9, 100], [1, -1, 5, -5, 6, -6, 13, -13]], dtype)
    b = np.array([2, -2, 2, -2, 3, 4, 4, 7], dtype)
    (got,) = run_op(Eltwise, [a, b], operation=operation)
    op_type, attrs = ONNX_BINARY[operation]
    (want,) = onnx_run(op_type, [a, b], **attrs)
    assert got.dtype == (np.bool_ if operation in COMPARISON else dtype)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_division_truncates_toward_zero(dtype):
    a = np.array([7, -7, 7, -7, 1, -1, 0], dtype)
    b = np.array([2, 2, -2, -2, 3, 3, -5], dtype)
    (got,) = run_op(Eltwise, [a, b], operation="div")
    np.testing.assert_array_equal(got, np.array([3, -3, -3, 3, 0, 0, 0], dtype))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_pow_matches_onnxruntime(dtype):
    a = np.array([[2, -2, 1, -1, -1, 3, 5, -3, 0], [7, -7, 2, 2, 1, 1, 10, -10, 0]], dtype)
    b = np.array([-1, -1, -3, -3, -2, 0, 2, 3, 4], dtype)
    (got,) = run_op(Eltwise, [a, b], operation="pow")
    (want,) = onnx_run("Pow", [a, b])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_floor_mod_matches_onnxruntime_mod(dtype):
    a = np.array([7, -7, 7, -7, 0, 12], dtype)
    b = np.array([3, 3, -3, -3, 5, -4], dtype)
    (got,) = run_op(Eltwise, [a, b], operation="floor_mod")
    (want,) = onnx_run("Mod", [a, b], fmod=0)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.array([1, 2, -2, -1, 0, 0], dtype))


@pytest.mark.parametrize("operation, op_type", [("and", "And"), ("or", "Or"), ("xor", "Xor")])
@pytest.mark.parametrize("a_shape, b_shape", [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (3, 1)), ((), (4,))])
def test_logical_matches_onnxruntime(operation, op_type, a_shape, b_shape):
    a = np.asarray(rand(*a_shape, seed=4) > 0)
    b = np.asarray(rand(*b_shape, seed=5) > 0)
    (got,) = run_op(Eltwise, [a, b], operation=operation)
    (want,) = onnx_run(op_type, [a, b])
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("operation", ["sum", "mul", "max", "div", "less"])
def test_f16_eltwise_matches_onnxruntime(operation):
    a, b = operands((2, 3, 4), (3, 1), operation, np.float16)
    (got,) = run_op(Eltwise, [a, b], operation=operation)
    op_type, attrs = ONNX_BINARY[operation]
    (want,) = onnx_run(op_type, [a, b], **attrs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=1e-3)


# -- convert, identity -----------------------------------------------------------------

CONVERTS = [
    (np.array([[-2.7, -1.5, -0.5, 0.0], [0.5, 1.5, 2.7, 1e6]], np.float32), np.int32),
    (np.array([-2.7, -0.2, 3.9, 2.0**40], np.float32), np.int64),
    (rand(3, 5, seed=6, low=-1e3, high=1e3), np.float16),
    (np.array([1e5, -1e5, 65519.0, 65520.0, np.nan], np.float32), np.float16),  # overflow gives inf
    (np.array([-(2**40), -1, 0, 3, 2**40 + 1], np.int64), np.float32),
    (np.array([-5, 0, 7], np.int64), np.int32),
    (np.array([-5, 0, 7], np.int32), np.int64),
    (np.array([[True, False], [False, True]]), np.float32),
    (np.array([[True, False]]), np.int64),
    (np.array([-1.5, 0.0, -0.0, 0.25, np.inf], np.float32), np.bool_),
    (np.array([0, 3, -1], np.int32), np.bool_),
    (np.array([1.5, -65504.0, 6e-5], np.float16), np.float32),
    (np.array([200, 0, 255], np.uint8), np.float32),
    (np.array([-128, 5, 127], np.int8), np.int32),
]


@pytest.mark.parametrize("x, dtype", CONVERTS, ids=[f"{x.dtype}-{np.dtype(d)}" for x, d in CONVERTS])
def test_convert_matches_onnxruntime(x, dtype):
    (got,) = run_op(Convert, [x], destination_type=to_xdsl(np.dtype(dtype)))
    (want,) = onnx_run("Cast", [x], to=helper.np_dtype_to_tensor_dtype(np.dtype(dtype)))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("x", [rand(2, 3, seed=7), np.array([1, -2], np.int64), np.array(True)])
def test_identity_forwards_its_input(x):
    (got,) = run_op(Identity, [x])
    (want,) = onnx_run("Identity", [x])
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, want)


# -- shape inference and verifier --------------------------------------------------------


def build_op(cls, types, **props):
    b = ModelBuilder()
    args = [b.block.insert_arg(t, i) for i, t in enumerate(types)]
    return b.add(cls, args, **props)


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ([DYN, 3, 4], [3, 1], [DYN, 3, 4]),
        ([DYN, 3, 4], [DYN, 3, 4], [DYN, 3, 4]),
        ([1, 3, DYN], [2, 1, 5], [2, 3, 5]),  # a DYN meeting a size takes it
        ([DYN, 1], [1, DYN], [DYN, DYN]),
        ([DYN], [2, 3, 1], [2, 3, DYN]),
        ([], [DYN, 2], [DYN, 2]),
        ([1, 5], [4, 1], [4, 5]),
    ],
)
@pytest.mark.parametrize("operation, element", [("sum", f32), ("greater", i1), ("squared_diff", f32)])
def test_eltwise_shape_inference(a, b, expected, operation, element):
    op = build_op(Eltwise, [TensorType(f32, a), TensorType(f32, b)], operation=operation)
    assert op.output.type == TensorType(element, expected)
    op.verify()


@pytest.mark.parametrize("operation", sorted(COMPARISON | LOGICAL))
def test_comparisons_give_i1(operation):
    element = i1 if operation in LOGICAL else i64
    op = build_op(Eltwise, [TensorType(element, [2, 3])] * 2, operation=operation)
    assert op.output.type == TensorType(i1, [2, 3])


@pytest.mark.parametrize("element", [f32, f16, i32, i64])
def test_arithmetic_keeps_the_element_type(element):
    op = build_op(Eltwise, [TensorType(element, [4])] * 2, operation="mul")
    assert op.output.type == TensorType(element, [4])


@pytest.mark.parametrize(
    "types, props, message",
    [
        ([TensorType(f32, [2, 3]), TensorType(f16, [2, 3])], {"operation": "sum"}, "nn.eltwise 'e1': operand element types differ: f32 vs f16"),
        ([TensorType(f32, [2, 3]), TensorType(i32, [3])], {"operation": "less"}, "operand element types differ: f32 vs i32"),
        ([TensorType(f32, [2, 3]), TensorType(f32, [2])], {"operation": "sum"}, r"shapes \[2, 3\] and \[1, 2\] cannot be broadcast"),
        ([TensorType(f32, [4, 3, 1]), TensorType(f32, [2, 5])], {"operation": "mul"}, "cannot be broadcast"),
        ([TensorType(f32, [2]), TensorType(f32, [2])], {"operation": "add"}, "operation must be one of and, div, equal, .*, got 'add'"),
        ([TensorType(f32, [2]), TensorType(f32, [2])], {"operation": "and"}, "operation 'and' needs i1 operands, got f32"),
        ([TensorType(i32, [2]), TensorType(i32, [2])], {"operation": "xor"}, "operation 'xor' needs i1 operands, got i32"),
    ],
)
def test_eltwise_rejects(types, props, message):
    with pytest.raises(VerifyException, match=message):
        build_op(Eltwise, types, name="e1", **props)


def test_convert_result_type():
    op = build_op(Convert, [TensorType(f32, [DYN, 3])], destination_type=f16)
    assert op.output.type == TensorType(f16, [DYN, 3])
    op.verify()


@pytest.mark.parametrize(
    "destination, message",
    [
        (TensorType(f16, [2]), r"destination_type must be an integer or float type, got tensor<2xf16>"),
        (IndexType(), "destination_type must be an integer or float type, got index"),
    ],
)
def test_convert_rejects(destination, message):
    with pytest.raises(VerifyException, match=message):
        build_op(Convert, [TensorType(f32, [2])], destination_type=destination)


def test_declared_result_type_must_match():
    a = build_op(Eltwise, [TensorType(i64, [2, 3])] * 2, operation="equal").lhs
    op = Eltwise.create(
        operands=[a, a],
        result_types=[TensorType(i64, [2, 3])],
        properties={"operation": StringAttr("equal")},
    )
    with pytest.raises(VerifyException, match=r"result #0 has type tensor<2x3xi64> but the operands imply tensor<2x3xi1>"):
        op.verify()


@pytest.mark.parametrize(
    "c_shape, a_shape, b_shape",
    [((2, 3, 4), (2, 3, 4), (2, 3, 4)), ((3, 1), (2, 3, 4), (4,)), ((), (2, 3), (1, 3)), ((2, 1, 4), (3, 1), ())],
)
def test_select_matches_onnxruntime_where(c_shape, a_shape, b_shape):
    condition = np.asarray(rand(*c_shape, seed=1) > 0)
    a, b = rand(*a_shape, seed=2), rand(*b_shape, seed=3)
    (got,) = run_op(Select, [condition, a, b])
    (want,) = onnx_run("Where", [condition, a, b])
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "types, message",
    [
        ([TensorType(f32, [2]), TensorType(f32, [2]), TensorType(f32, [2])], "nn.select 's1': condition must be i1, got f32"),
        ([TensorType(i1, [2]), TensorType(f32, [2]), TensorType(i32, [2])], "then and otherwise element types differ: f32 vs i32"),
        ([TensorType(i1, [3]), TensorType(f32, [2]), TensorType(f32, [2])], "cannot be broadcast"),
    ],
)
def test_select_rejects(types, message):
    with pytest.raises(VerifyException, match=message):
        build_op(Select, types, name="s1")
