"""nn.softmax, nn.lrn, nn.mvn, nn.normalize and nn.grn: shape inference, verifier and numerics
against onnxruntime (Softmax, LogSoftmax, LRN, MeanVarianceNormalization, LayerNormalization,
InstanceNormalization, LpNormalization) or hand-written numpy formulas."""

import itertools

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import GRN, MVN, Norm, Normalize, SoftMax
from irforge.dialects.nn.base import DYN
from tests.helpers import onnx_run, rand, run_op


def infer(cls, shapes, **props):
    """The inferred result shape of `cls` applied to inputs of `shapes`."""
    b = ModelBuilder()
    operands = [b.input(f"x{i}", shape) for i, shape in enumerate(shapes)]
    return tuple(b.add(cls, operands, **props).output.type.get_shape())


# -- SoftMax -----------------------------------------------------------------------------
SOFTMAX_CASES = [
    ((7,), 0),
    ((3, 5), None),
    ((3, 5), -1),
    ((2, 3, 5), 0),
    ((2, 3, 5), -2),
    ((2, 3, 4, 5), None),
    ((2, 3, 4, 5), 3),
    ((1, 2, 3, 4, 5), -3),
]


@pytest.mark.parametrize("x_shape, axis", SOFTMAX_CASES)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_matches_onnxruntime(x_shape, axis, log):
    x = rand(*x_shape, seed=1, low=-5.0, high=5.0)
    (got,) = run_op(SoftMax, [x], axis=axis, log=log)
    (want,) = onnx_run("LogSoftmax" if log else "Softmax", [x], opset=13, axis=1 if axis is None else axis)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_softmax_is_stable_for_large_inputs():
    x = np.array([[1000.0, 1000.0, -1000.0], [-np.inf, 0.0, 0.0]], np.float32)
    (got,) = run_op(SoftMax, [x], axis=-1)
    np.testing.assert_allclose(got, [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]], atol=1e-7)
    (got,) = run_op(SoftMax, [x], axis=1, log=True)
    np.testing.assert_allclose(got[0], [-np.log(2), -np.log(2), -2000 - np.log(2)], rtol=1e-6)


def test_softmax_infers_dynamic_dims():
    assert infer(SoftMax, [(DYN, 10)]) == (DYN, 10)
    assert infer(SoftMax, [(DYN, DYN, 4)], axis=-1, log=True) == (DYN, DYN, 4)


@pytest.mark.parametrize(
    "x_shape, props, message",
    [
        ((2, 3), {"axis": 2}, "axis 2 is out of range for rank 2"),
        ((2, 3), {"axis": -3}, "axis -3 is out of range for rank 2"),
        ((5,), {}, "axis 1 is out of range for rank 1"),
    ],
)
def test_softmax_rejects(x_shape, props, message):
    with pytest.raises(VerifyException, match=f"nn.softmax 'sm1': {message}"):
        infer(SoftMax, [x_shape], name="sm1", **props)


# -- Norm (LRN) --------------------------------------------------------------------------
def lrn_by_loops(x, size, alpha=1e-4, beta=0.75, bias=1.0, region="across"):
    """LRN element by element: the window reaches (size - 1) // 2 before and the rest after."""
    axes = (1,) if region == "across" else tuple(range(2, x.ndim))
    before = (size - 1) // 2
    out = np.empty(x.shape, np.float64)
    for index in itertools.product(*(range(d) for d in x.shape)):
        window = tuple(
            slice(max(i - before, 0), i - before + size) if axis in axes else i for axis, i in enumerate(index)
        )
        squares = np.sum(x[window].astype(np.float64) ** 2)
        out[index] = x[index] / (bias + alpha / size ** len(axes) * squares) ** beta
    return out


LRN_PARAMS = [
    {"size": 1},
    {"size": 3, "alpha": 1e-2},
    {"size": 5, "alpha": 1.0, "beta": 1.5},
    {"size": 9, "alpha": 0.3, "bias": 2.0},
]
EVEN_LRN_PARAMS = [
    {"size": 2, "alpha": 0.5, "beta": 0.5, "bias": 2.0},
    {"size": 4, "alpha": 2.0, "beta": 0.75, "bias": 0.5},
]


# onnxruntime's LRN takes 4-D inputs and odd sizes only; the loops cover the rest
@pytest.mark.parametrize("x_shape", [(1, 5, 3, 4), (2, 7, 5, 3)])
@pytest.mark.parametrize("params", LRN_PARAMS)
def test_lrn_across_matches_onnxruntime(x_shape, params):
    x = rand(*x_shape, seed=2, low=-3.0, high=3.0)
    (got,) = run_op(Norm, [x], **params)
    (want,) = onnx_run("LRN", [x], **params)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x_shape", [(3, 6), (2, 5, 4), (2, 7, 2, 3), (1, 4, 2, 3, 3)])
@pytest.mark.parametrize("params", LRN_PARAMS[1:3] + EVEN_LRN_PARAMS)
def test_lrn_across_matches_loops(x_shape, params):
    x = rand(*x_shape, seed=3, low=-2.0, high=2.0)
    (got,) = run_op(Norm, [x], **params)
    np.testing.assert_allclose(got, lrn_by_loops(x, **params), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x_shape", [(2, 3, 7), (1, 2, 5, 6), (2, 2, 3, 4, 5)])
@pytest.mark.parametrize("params", LRN_PARAMS[:3] + EVEN_LRN_PARAMS)
def test_lrn_same_matches_loops(x_shape, params):
    x = rand(*x_shape, seed=4, low=-2.0, high=2.0)
    (got,) = run_op(Norm, [x], region="same", **params)
    np.testing.assert_allclose(got, lrn_by_loops(x, region="same", **params), rtol=1e-5, atol=1e-6)


def test_lrn_defaults():
    x = rand(1, 3, 2, 2, seed=5)
    (got,) = run_op(Norm, [x], size=3)
    (want,) = onnx_run("LRN", [x], size=3, alpha=1e-4, beta=0.75, bias=1.0)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_lrn_infers_dynamic_dims():
    assert infer(Norm, [(DYN, 16, DYN, DYN)], size=5) == (DYN, 16, DYN, DYN)
    assert infer(Norm, [(DYN, DYN, 7)], size=3, region="same") == (DYN, DYN, 7)


@pytest.mark.parametrize(
    "x_shape, props, message",
    [
        ((1, 3, 4, 4), {"size": 0}, "size must be >= 1, got 0"),
        ((1, 3, 4, 4), {"size": 3, "region": "within"}, "region must be one of across, same, got 'within'"),
        ((6,), {"size": 3}, r"input must have rank >= 2 \(N, C, ...\), got 1"),
        ((2, 6), {"size": 3, "region": "same"}, r"input must have rank >= 3 \(N, C, spatial...\) for region same"),
    ],
)
def test_lrn_rejects(x_shape, props, message):
    with pytest.raises(VerifyException, match=f"nn.lrn 'lrn1': {message}"):
        infer(Norm, [x_shape], name="lrn1", **props)


# -- MVN ---------------------------------------------------------------------------------
MVN_AXES = [
    ((3, 5), [1]),
    ((2, 3, 7), [0, 2]),
    ((2, 3, 4, 5), [2, 3]),
    ((2, 3, 4, 5), [-3, -1]),
    ((2, 3, 4, 5), [0, 1, 2, 3]),
    ((1, 2, 3, 4, 5), [1, 3, 4]),
]


@pytest.mark.parametrize("x_shape, axes", MVN_AXES)
def test_mvn_outside_sqrt_matches_onnxruntime(x_shape, axes):
    x = rand(*x_shape, seed=6, low=-2.0, high=3.0)
    (got,) = run_op(MVN, [x], axes=axes, eps_mode="outside_sqrt")
    # ONNX MVN divides by sqrt(variance) + 1e-9
    (want,) = onnx_run("MeanVarianceNormalization", [x], opset=13, axes=axes)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("x_shape, axis", [((3, 5), 1), ((2, 3, 7), 1), ((2, 3, 4, 5), 2), ((1, 2, 3, 4, 5), -2)])
@pytest.mark.parametrize("eps", [1e-5, 0.1])
def test_mvn_inside_sqrt_matches_onnxruntime_layer_norm(x_shape, axis, eps):
    x = rand(*x_shape, seed=7, low=-2.0, high=3.0)
    axes = list(range(axis % len(x_shape), len(x_shape)))
    (got,) = run_op(MVN, [x], axes=axes, eps=eps)
    ones, zeros = np.ones(x_shape[axis:], np.float32), np.zeros(x_shape[axis:], np.float32)
    (want,) = onnx_run("LayerNormalization", [x], [ones, zeros], opset=17, axis=axis, epsilon=eps)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("x_shape", [(2, 3, 7), (2, 3, 4, 5), (1, 2, 3, 4, 5)])
def test_mvn_spatial_matches_onnxruntime_instance_norm(x_shape):
    x = rand(*x_shape, seed=8)
    c = x_shape[1]
    (got,) = run_op(MVN, [x], axes=list(range(2, len(x_shape))), eps=1e-3)
    ones, zeros = np.ones(c, np.float32), np.zeros(c, np.float32)
    (want,) = onnx_run("InstanceNormalization", [x], [ones, zeros], epsilon=1e-3)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("x_shape, axes", MVN_AXES)
@pytest.mark.parametrize("eps_mode", ["inside_sqrt", "outside_sqrt"])
@pytest.mark.parametrize("normalize_variance", [False, True])
def test_mvn_matches_numpy(x_shape, axes, eps_mode, normalize_variance):
    x = rand(*x_shape, seed=9, low=-1.0, high=4.0)
    (got,) = run_op(MVN, [x], axes=axes, eps=0.01, eps_mode=eps_mode, normalize_variance=normalize_variance)
    x64 = x.astype(np.float64)
    axes_t = tuple(axes)
    mean = x64.mean(axis=axes_t, keepdims=True)
    # variance as E[x^2] - E[x]^2: another way to the same value
    variance = (x64**2).mean(axis=axes_t, keepdims=True) - mean**2
    if not normalize_variance:
        want = x64 - mean
    elif eps_mode == "inside_sqrt":
        want = (x64 - mean) / np.sqrt(variance + 0.01)
    else:
        want = (x64 - mean) / (np.sqrt(variance) + 0.01)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_mvn_infers_dynamic_dims():
    assert infer(MVN, [(DYN, 3, DYN, DYN)], axes=[2, 3]) == (DYN, 3, DYN, DYN)
    assert infer(MVN, [(DYN, DYN)], axes=[-1], normalize_variance=False) == (DYN, DYN)


@pytest.mark.parametrize(
    "x_shape, props, message",
    [
        ((2, 3, 4), {"axes": []}, "axes must not be empty"),
        ((2, 3, 4), {"axes": [3]}, "axes 3 is out of range for rank 3"),
        ((2, 3, 4), {"axes": [1, -2]}, r"axes names axis 1 more than once, got \[1, -2\]"),
        ((2, 3, 4), {"axes": [2], "eps": -1e-3}, "eps must be >= 0, got -0.001"),
        ((2, 3, 4), {"axes": [2], "eps_mode": "add"}, "eps_mode must be one of inside_sqrt, outside_sqrt, got 'add'"),
    ],
)
def test_mvn_rejects(x_shape, props, message):
    with pytest.raises(VerifyException, match=f"nn.mvn 'mvn1': {message}"):
        infer(MVN, [x_shape], name="mvn1", **props)


# -- Normalize ---------------------------------------------------------------------------
def normalize_by_hand(x, scale, across_spatial, eps):
    """Per sample (across_spatial) or per sample and position: divide by the L2 norm."""
    x64 = x.astype(np.float64)
    out = np.empty_like(x64)
    for n in range(x.shape[0]):
        if across_spatial:
            out[n] = x64[n] / np.sqrt(np.vdot(x64[n], x64[n]) + eps)
            continue
        for position in itertools.product(*(range(d) for d in x.shape[2:])):
            column = x64[(n, slice(None), *position)]
            out[(n, slice(None), *position)] = column / np.sqrt(column @ column + eps)
    if scale is not None:
        out *= (scale if scale.size > 1 else np.full(x.shape[1], scale[0])).reshape((-1,) + (1,) * (x.ndim - 2))
    return out


@pytest.mark.parametrize("x_shape", [(3, 5), (2, 3, 7), (2, 5, 3, 4), (1, 3, 2, 3, 4)])
def test_normalize_over_channels_matches_onnxruntime(x_shape):
    x = rand(*x_shape, seed=10)
    (got,) = run_op(Normalize, [x], eps=0.0)
    (want,) = onnx_run("LpNormalization", [x], axis=1, p=2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("x_shape", [(3, 5), (2, 3, 7), (2, 5, 3, 4), (1, 3, 2, 3, 4)])
@pytest.mark.parametrize("across_spatial", [False, True])
@pytest.mark.parametrize("scale_kind", ["none", "per_channel", "shared"])
@pytest.mark.parametrize("eps", [None, 0.5])
def test_normalize_matches_numpy(x_shape, across_spatial, scale_kind, eps):
    x = rand(*x_shape, seed=11)
    scale = {"none": None, "per_channel": rand(x_shape[1], seed=12), "shared": np.array([1.5], np.float32)}[scale_kind]
    props = {"across_spatial": across_spatial, "channel_shared": scale_kind == "shared", "eps": eps}
    (got,) = run_op(Normalize, [x], [] if scale is None else [scale], **props)
    want = normalize_by_hand(x, scale, across_spatial, 1e-10 if eps is None else eps)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_normalize_infers_dynamic_dims_and_runs():
    assert infer(Normalize, [(DYN, 8, DYN, DYN), (8,)]) == (DYN, 8, DYN, DYN)
    assert infer(Normalize, [(DYN, DYN, 4), (1,)], channel_shared=True, across_spatial=True) == (DYN, DYN, 4)
    b = ModelBuilder()
    scale = rand(3, seed=13)
    y = b.add(Normalize, [b.input("x", (DYN, 3, DYN, DYN)), b.constant(scale, "scale")]).output
    b.output(y, "y")
    x = rand(2, 3, 4, 5, seed=14)
    np.testing.assert_allclose(run(b.finish(), {"x": x})["y"], normalize_by_hand(x, scale, False, 1e-10), rtol=1e-5)


@pytest.mark.parametrize(
    "shapes, props, message",
    [
        ([(2, 3, 4), (4,)], {}, r"scale must have shape \[3\], got \[4\]"),
        ([(2, 3, 4), (3,)], {"channel_shared": True}, r"scale must have shape \[1\], got \[3\]"),
        ([(2, 3, 4), (1, 3)], {}, r"scale must have shape \[3\], got \[1, 3\]"),
        ([(6,)], {}, r"input must have rank >= 2 \(N, C, ...\), got 1"),
        ([(2, 3, 4)], {"eps": -1.0}, "eps must be >= 0, got -1$"),
    ],
)
def test_normalize_rejects(shapes, props, message):
    with pytest.raises(VerifyException, match=f"nn.normalize 'l2n': {message}"):
        infer(Normalize, shapes, name="l2n", **props)


# -- GRN ---------------------------------------------------------------------------------
@pytest.mark.parametrize("x_shape", [(3, 5), (2, 3, 7), (2, 5, 3, 4), (1, 3, 2, 3, 4)])
@pytest.mark.parametrize("bias", [None, 0.0, 0.25, 3.0])
def test_grn_matches_numpy(x_shape, bias):
    x = rand(*x_shape, seed=15, low=-2.0, high=2.0)
    (got,) = run_op(GRN, [x], bias=bias)
    x64 = x.astype(np.float64)
    squares = np.einsum("nc...,nc...->n...", x64, x64)[:, None]
    want = x64 / np.sqrt(squares + (1.0 if bias is None else bias))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_grn_infers_dynamic_dims():
    assert infer(GRN, [(DYN, 3, DYN, DYN)]) == (DYN, 3, DYN, DYN)
    assert infer(GRN, [(DYN, DYN)], bias=0.5) == (DYN, DYN)


@pytest.mark.parametrize(
    "x_shape, props, message",
    [
        ((2, 3, 4), {"bias": -0.5}, "bias must be >= 0, got -0.5"),
        ((6,), {}, r"input must have rank >= 2 \(N, C, ...\), got 1"),
    ],
)
def test_grn_rejects(x_shape, props, message):
    with pytest.raises(VerifyException, match=f"nn.grn 'grn1': {message}"):
        infer(GRN, [x_shape], name="grn1", **props)
