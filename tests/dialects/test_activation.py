"""nn.activation, nn.relu, nn.clamp, nn.prelu: numerics against onnxruntime (numpy where ONNX
has no such op), shape inference and verifier."""

import numpy as np
import pytest
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType, f16, f32, i1
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, Clamp, PReLU, ReLU
from irforge.dialects.nn.activation import ACTIVATION_KINDS
from tests.helpers import onnx_run, rand, run_op

# a kernel must not warn (overflow in exp, out-of-range casts), whatever its input
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

SELU_ALPHA, SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


def positive(x: np.ndarray) -> np.ndarray:
    return np.abs(x) + np.asarray(0.01, x.dtype)


def unit(x: np.ndarray) -> np.ndarray:
    """Inside (-1, 1): the domain of asin, acos and atanh."""
    return (np.tanh(x / 3) * 0.99).astype(x.dtype)


def above_one(x: np.ndarray) -> np.ndarray:
    """At least 1: the domain of acosh."""
    return np.abs(x) + np.asarray(1.0, x.dtype)


def halves(x: np.ndarray) -> np.ndarray:
    """Values on a half grid, so that Round meets its ties (to even, in ONNX and numpy)."""
    return np.round(x * 2) / 2


# (kind, irforge props, ONNX op, ONNX attributes, input transform)
ONNX_ACTIVATIONS = [
    ("sigmoid", {}, "Sigmoid", {}, None),
    ("tanh", {}, "Tanh", {}, None),
    ("elu", {}, "Elu", {}, None),
    ("elu", {"alpha": 0.7}, "Elu", {"alpha": 0.7}, None),
    ("selu", {"alpha": SELU_ALPHA, "beta": SELU_GAMMA}, "Selu", {}, None),
    ("selu", {"alpha": 1.5, "beta": 2.0}, "Selu", {"alpha": 1.5, "gamma": 2.0}, None),
    ("exp", {}, "Exp", {}, None),
    ("log", {}, "Log", {}, positive),
    ("abs", {}, "Abs", {}, None),
    ("sqrt", {}, "Sqrt", {}, positive),
    ("erf", {}, "Erf", {}, None),
    ("gelu", {}, "Gelu", {}, None),
    ("gelu_tanh", {}, "Gelu", {"approximate": "tanh"}, None),
    ("hswish", {}, "HardSwish", {}, None),
    ("hsigmoid", {"alpha": 0.2, "beta": 0.5}, "HardSigmoid", {}, None),
    ("hsigmoid", {"alpha": 0.3, "beta": 0.4}, "HardSigmoid", {"alpha": 0.3, "beta": 0.4}, None),
    ("softplus", {}, "Softplus", {}, None),
    ("softsign", {}, "Softsign", {}, None),
    ("mish", {}, "Mish", {}, None),
    ("neg", {}, "Neg", {}, None),
    ("reciprocal", {}, "Reciprocal", {}, None),
    ("floor", {}, "Floor", {}, None),
    ("ceil", {}, "Ceil", {}, None),
    ("round", {}, "Round", {}, halves),
    ("sign", {}, "Sign", {}, halves),
    ("sin", {}, "Sin", {}, None),
    ("cos", {}, "Cos", {}, None),
    ("asin", {}, "Asin", {}, unit),
    ("acos", {}, "Acos", {}, unit),
    ("atan", {}, "Atan", {}, None),
    ("asinh", {}, "Asinh", {}, None),
    ("acosh", {}, "Acosh", {}, above_one),
    ("atanh", {}, "Atanh", {}, unit),
]


def activation_input(transform, dtype=np.float32, seed: int = 3) -> np.ndarray:
    x = rand(2, 3, 4, 5, seed=seed, low=-6.0, high=6.0).astype(dtype)
    return x if transform is None else transform(x)


@pytest.mark.parametrize(
    "kind, props, onnx_op, onnx_attrs, transform",
    ONNX_ACTIVATIONS,
    ids=[f"{c[0]}-{c[2]}-{i}" for i, c in enumerate(ONNX_ACTIVATIONS)],
)
def test_activation_matches_onnxruntime(kind, props, onnx_op, onnx_attrs, transform):
    x = activation_input(transform)
    (got,) = run_op(Activation, [x], kind=kind, **props)
    (want,) = onnx_run(onnx_op, [x], opset=20, **onnx_attrs)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


F16_KINDS = ["sigmoid", "tanh", "gelu", "hswish", "exp", "softplus", "abs", "floor"]


@pytest.mark.parametrize("kind", F16_KINDS)
def test_activation_f16_matches_onnxruntime(kind):
    case = next(c for c in ONNX_ACTIVATIONS if c[0] == kind)
    _, props, onnx_op, onnx_attrs, transform = case
    x = activation_input(transform, np.float16, seed=5)
    (got,) = run_op(Activation, [x], kind=kind, **props)
    (want,) = onnx_run(onnx_op, [x], opset=20, **onnx_attrs)
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_activation_covers_every_kind():
    """Each kind is checked against onnxruntime above or against numpy below."""
    assert {c[0] for c in ONNX_ACTIVATIONS} | {"swish", "relu6", "not"} == ACTIVATION_KINDS


@pytest.mark.parametrize("alpha", [1.0, 1.702, 0.5])
def test_swish_matches_numpy(alpha):
    x = rand(2, 3, 4, 5, seed=4, low=-8.0, high=8.0)
    (got,) = run_op(Activation, [x], kind="swish", alpha=alpha)
    want = x.astype(np.float64) / (1 + np.exp(-alpha * x.astype(np.float64)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_relu6_matches_numpy():
    x = rand(3, 17, seed=6, low=-10.0, high=10.0)
    (got,) = run_op(Activation, [x], kind="relu6")
    np.testing.assert_array_equal(got, np.minimum(np.maximum(x, 0), 6))


def test_not_matches_onnxruntime():
    x = rand(4, 6, seed=7) > 0
    (got,) = run_op(Activation, [x], kind="not")
    (want,) = onnx_run("Not", [x])
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("kind, onnx_op", [("abs", "Abs"), ("neg", "Neg"), ("sign", "Sign")])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_integer_activation_matches_onnxruntime(kind, onnx_op, dtype):
    x = np.array([[-7, -1, 0, 1, 5, 123456]], dtype)
    (got,) = run_op(Activation, [x], kind=kind)
    (want,) = onnx_run(onnx_op, [x])
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


LARGE = np.array(
    [-3.4028235e38, -1e30, -1e4, -100.0, -88.7, -20.0, 0.0, 20.0, 88.8, 100.0, 1e4, 1e30, 3.4028235e38],
    np.float32,
)


@pytest.mark.parametrize(
    "kind, onnx_op", [("sigmoid", "Sigmoid"), ("softplus", "Softplus"), ("tanh", "Tanh"), ("mish", "Mish")]
)
def test_large_inputs_neither_overflow_nor_warn(kind, onnx_op):
    (got,) = run_op(Activation, [LARGE], kind=kind)
    assert not np.isnan(got).any()
    (want,) = onnx_run(onnx_op, [LARGE], opset=20)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)  # onnxruntime flushes sigmoid(-20)


def test_large_f16_inputs_do_not_warn():
    x = np.array([-65504, -1000, -12, 0, 12, 1000, 65504], np.float16)
    for kind in ("sigmoid", "softplus", "gelu_tanh", "elu", "swish"):
        (got,) = run_op(Activation, [x], kind=kind)
        assert not np.isnan(got).any(), kind
    (sig,) = run_op(Activation, [x], kind="sigmoid")
    np.testing.assert_array_equal(sig[[0, 3, -1]], np.array([0, 0.5, 1], np.float16))


# -- relu, clamp, prelu ------------------------------------------------------------------


def test_relu_matches_onnxruntime():
    x = rand(2, 3, 5, 5, seed=8)
    (got,) = run_op(ReLU, [x])
    (want,) = onnx_run("Relu", [x])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("slope", [0.01, 0.2, -0.5])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_leaky_relu_matches_onnxruntime(slope, dtype):
    x = rand(2, 3, 5, 5, seed=9, low=-4.0, high=4.0).astype(dtype)
    (got,) = run_op(ReLU, [x], negative_slope=slope)
    (want,) = onnx_run("LeakyRelu", [x], alpha=slope)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=1e-3 if dtype == np.float16 else 1e-6)


@pytest.mark.parametrize("low, high", [(0.0, 6.0), (-0.5, 0.25), (-1.0, -1.0), (0.1, 1e30)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_clamp_matches_onnxruntime(low, high, dtype):
    x = rand(2, 3, 4, 4, seed=10, low=-8.0, high=8.0).astype(dtype)
    (got,) = run_op(Clamp, [x], min=low, max=high)
    # Clip's bounds have the input's type: 1e30 is +inf in float16
    with np.errstate(over="ignore"):
        bounds = [np.array(low, dtype), np.array(high, dtype)]
    (want,) = onnx_run("Clip", [x], bounds)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_clamp_integers_exactly(dtype):
    info = np.iinfo(dtype)
    x = np.array([info.min, -7, 0, 3, 2**30 + 1, info.max], dtype)
    (got,) = run_op(Clamp, [x], min=-5.0, max=float(2**40))
    (want,) = onnx_run("Clip", [x], [np.array(-5, dtype), np.array(min(2**40, info.max), dtype)])
    np.testing.assert_array_equal(got, want)
    # bounds beyond the type's range (as imported for a Clip without them) change nothing
    (same,) = run_op(Clamp, [x], min=-3.4028234663852886e38, max=3.4028234663852886e38)
    np.testing.assert_array_equal(same, x)


@pytest.mark.parametrize("channels", [1, 3])
def test_prelu_per_channel_matches_onnxruntime(channels):
    x = rand(2, channels, 4, 5, seed=11)
    slope = rand(channels, seed=12)
    (got,) = run_op(PReLU, [x], [slope])
    (want,) = onnx_run("PRelu", [x], [slope.reshape(channels, 1, 1)])
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize(
    "x_shape, slope_shape",
    [
        ((2, 3, 4, 5), (3, 1, 1)),
        ((2, 3, 4, 5), (5,)),  # ONNX's 1-D slope on the last axis: irforge needs it broadcast
        ((2, 3, 4, 5), (1, 4, 1)),
        ((2, 3, 4, 5), ()),
        ((6,), (6,)),
        ((3, 7), (7,)),
    ],
)
def test_prelu_broadcast_slope_matches_onnxruntime(x_shape, slope_shape):
    x = rand(*x_shape, seed=13)
    slope = np.asarray(rand(*slope_shape, seed=14))
    onnx_slope = slope
    if len(slope_shape) == 1 and len(x_shape) >= 3:
        slope = slope.reshape(1, 1, -1)  # a 1-D irforge slope would apply to the channels
    (got,) = run_op(PReLU, [x], [slope])
    (want,) = onnx_run("PRelu", [x], [onnx_slope])
    np.testing.assert_allclose(got, want, rtol=1e-6)


# -- shape inference and verifier --------------------------------------------------------


def build_unary(cls, shape, element_type=f32, **props):
    b = ModelBuilder()
    x = b.block.insert_arg(TensorType(element_type, list(shape)), 0)
    return b.add(cls, [x], **props)


@pytest.mark.parametrize("cls, props", [(Activation, {"kind": "gelu"}), (ReLU, {}), (Clamp, {"min": 0.0, "max": 1.0})])
@pytest.mark.parametrize("element_type", [f32, f16])
def test_unary_result_type_is_the_input_type(cls, props, element_type):
    op = build_unary(cls, [DYNAMIC_INDEX, 3, DYNAMIC_INDEX], element_type, **props)
    assert op.output.type == TensorType(element_type, [DYNAMIC_INDEX, 3, DYNAMIC_INDEX])
    op.verify()


def test_prelu_accepts_dynamic_channels():
    b = ModelBuilder()
    x = b.block.insert_arg(TensorType(f32, [DYNAMIC_INDEX, DYNAMIC_INDEX, 8]), 0)
    per_channel = b.block.insert_arg(TensorType(f32, [16]), 1)
    broadcast = b.block.insert_arg(TensorType(f32, [DYNAMIC_INDEX, 1]), 2)
    for slope in (per_channel, broadcast):
        op = b.add(PReLU, [x, slope])
        assert op.output.type == x.type
        op.verify()


def test_activation_default_properties():
    op = build_unary(Activation, [2], kind="elu")
    assert op.float_prop("alpha") == 1.0 and op.float_prop("beta") == 0.0
    assert build_unary(ReLU, [2]).float_prop("negative_slope") == 0.0


@pytest.mark.parametrize(
    "cls, element_type, props, message",
    [
        (Activation, f32, {"kind": "silu"}, "nn.activation 'a1': kind must be one of abs, acos, .*, got 'silu'"),
        (Activation, f32, {"kind": "not"}, "kind 'not' needs an i1 input, got f32"),
        (Activation, i1, {"kind": "sigmoid"}, "kind 'sigmoid' needs a numeric input, got i1"),
        (Clamp, f32, {"min": 1.0, "max": 0.5}, "nn.clamp 'a1': min must not exceed max, got min 1.0 and max 0.5"),
        (Clamp, f32, {"min": float("nan"), "max": 0.5}, "min and max must not be NaN"),
        (Activation, f32, {"kind": 3}, "property 'kind' cannot be 3"),
    ],
)
def test_unary_rejects(cls, element_type, props, message):
    with pytest.raises(VerifyException, match=message):
        build_unary(cls, [2, 3], element_type, name="a1", **props)


@pytest.mark.parametrize(
    "x_shape, slope_shape, slope_type, message",
    [
        ((1, 3, 4, 4), (4,), f32, "slope of 4 values does not match 3 channels"),
        ((1, 3, 4, 4), (2, 1, 1), f32, r"slope shape \[2, 1, 1\] does not broadcast to \[1, 3, 4, 4\]"),
        ((1, 3, 4, 4), (1, 1, 3, 4, 4), f32, "does not broadcast"),
        ((1, 1, 4), (1, 3, 1), f32, "does not broadcast"),  # slope would widen the input
        ((5,), (3,), f32, r"slope shape \[3\] does not broadcast to \[5\]"),
        ((1, 3, 4, 4), (3,), f16, "slope element type f16 differs from the input's f32"),
    ],
)
def test_prelu_rejects(x_shape, slope_shape, slope_type, message):
    b = ModelBuilder()
    x = b.block.insert_arg(TensorType(f32, list(x_shape)), 0)
    slope = b.block.insert_arg(TensorType(slope_type, list(slope_shape)), 1)
    with pytest.raises(VerifyException, match=message):
        b.add(PReLU, [x, slope], name="p1")
