"""Element-wise, activation, pooling, softmax, reduction, normalisation and layout ops on
the CPU vs the reference interpreter; unsupported ops fail with a one-line error."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.dialects.nn import (
    MVN, Activation, Clamp, Eltwise, Flatten, Pooling, Power, PReLU, Reduce, ReLU, Reshape, ScaleShift, SoftMax,
    BatchNormalization, Permute, PriorBox,
)
from irforge.dialects.nn.activation import ACTIVATION_KINDS
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from tests.backends.cpu.conftest import check_op
from tests.helpers import one_op_model, rand


@pytest.mark.parametrize("kind", sorted(ACTIVATION_KINDS - {"not"}))
def test_activation(kind, cache_dir) -> None:  # type: ignore[no-untyped-def]
    low = 0.1 if kind in ("log", "sqrt", "reciprocal") else 1.0 if kind == "acosh" else -3.0
    x = rand(2, 3, 37, low=low, high=3.0)
    if kind in ("asin", "acos", "atanh"):  # their domain (-1, 1)
        x = x / np.float32(3.1)
    check_op(Activation, [x], [], cache_dir, kind=kind, alpha=0.7, beta=0.3)


@pytest.mark.parametrize("cls,props", [(ReLU, {}), (ReLU, dict(negative_slope=0.1)), (Clamp, dict(min=-0.5, max=0.25)),
                                       (Power, dict(power=2.0, scale=0.5, shift=1.0)), (Power, dict(power=0.5, scale=2.0, shift=0.0))])
def test_unary(cls, props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    low = 0.0 if props.get("power") == 0.5 else -1.0
    check_op(cls, [rand(3, 5, 7, 11, low=low)], [], cache_dir, **props)


@pytest.mark.parametrize("operation", ["sum", "sub", "mul", "div", "max", "min", "pow", "squared_diff", "mod", "floor_mod"])
@pytest.mark.parametrize("a,b", [((2, 3, 5, 7), (2, 3, 5, 7)), ((2, 3, 5, 7), (1, 3, 1, 1)), ((4, 1, 33), (5, 1)), ((17,), (3, 1, 17))])
def test_eltwise(operation, a, b, cache_dir) -> None:  # type: ignore[no-untyped-def]
    low = 0.2 if operation == "pow" else -2.0
    rhs = rand(*b, seed=1, low=0.5, high=2.0) * np.where(rand(*b, seed=2) > 0, 1, -1).astype(np.float32)
    check_op(Eltwise, [rand(*a, low=low, high=2.0), rhs], [], cache_dir, operation=operation)


def test_prelu_and_scale_shift(cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(PReLU, [rand(2, 5, 6, 7)], [rand(5, seed=1)], cache_dir)
    check_op(ScaleShift, [rand(2, 5, 6, 7)], [rand(5, seed=1), rand(5, seed=2)], cache_dir)
    check_op(ScaleShift, [rand(3, 40)], [rand(40, seed=1), rand(40, seed=2)], cache_dir, axis=-1)


POOL_CASES = [
    dict(method="max", kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]),
    dict(method="max", kernel=[2, 2], strides=[2, 2]),
    dict(method="avg", kernel=[3, 3], strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1]),
    dict(method="avg", kernel=[3, 3], strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1], exclude_pad=False),
    dict(method="avg", kernel=[3, 2], strides=[2, 3], pads_begin=[1, 0], pads_end=[0, 1], rounding_type="ceil", exclude_pad=False),
    dict(method="max", kernel=[3, 3], strides=[2, 2], rounding_type="ceil"),
    dict(method="avg", global_pool=True),
    dict(method="max", global_pool=True),
]


@pytest.mark.parametrize("props", POOL_CASES)
def test_pooling(props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Pooling, [rand(2, 3, 19, 21)], [], cache_dir, **props)


@pytest.mark.parametrize("props", POOL_CASES[:2] + POOL_CASES[4:6])
def test_pooling_rows_wider_than_two_vectors(props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Stride-2 rows are read as pairs of vectors: rows of 75 cover every lane position."""
    check_op(Pooling, [rand(1, 2, 9, 75)], [], cache_dir, **props)


@pytest.mark.parametrize("shape,axis,log", [((2, 1000), 1, False), ((2, 5, 7), 1, False), ((3, 4, 37), -1, True), ((2, 19, 3), 1, True),
                                            ((3, 32), 1, False), ((4, 5), -1, False), ((2, 3, 197), -1, False)])  # full vectors only, a tail only, both
def test_softmax(shape, axis, log, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(SoftMax, [rand(*shape, low=-5, high=5)], [], cache_dir, axis=axis, log=log)


@pytest.mark.parametrize("operation", ["mean", "sum", "max", "min", "prod", "l1", "l2", "sum_square", "log_sum", "log_sum_exp"])
@pytest.mark.parametrize("axes,keep", [((1,), True), ((2, 3), False), ((3,), True)])
def test_reduce(operation, axes, keep, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Reduce, [rand(2, 3, 5, 7, low=0.5, high=1.5)], [], cache_dir, operation=operation, axes=list(axes), keep_dims=keep)


@pytest.mark.parametrize("props", [dict(axes=[2, 3]), dict(axes=[-1], eps_mode="outside_sqrt", eps=1e-3), dict(axes=[1], normalize_variance=False)])
def test_mvn(props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(MVN, [rand(2, 3, 5, 33)], [], cache_dir, **props)


@pytest.mark.parametrize("shape,order", [((2, 3, 4, 5), [0, 2, 1, 3]), ((2, 3, 4, 5), [3, 2, 1, 0]), ((1, 8, 4, 8), [0, 1, 3, 2]), ((40, 33), [1, 0])])
def test_permute(shape, order, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Permute, [rand(*shape)], [], cache_dir, order=order)


def test_views(cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Flatten, [rand(2, 3, 4)], [], cache_dir, axis=1)
    check_op(Reshape, [rand(2, 3, 4)], [], cache_dir, shape=[4, 6])


def test_batch_norm_unfused(cache_dir) -> None:  # type: ignore[no-untyped-def]
    x, params = rand(2, 5, 6, 7), [rand(5, seed=i) for i in range(1, 5)]
    params[3] = np.abs(params[3])
    model = one_op_model(BatchNormalization, [x], params, epsilon=1e-3)
    got = compile_model(model, threads=1, cache_dir=cache_dir, pipeline="infer-shapes")({"x0": x})["y0"]
    np.testing.assert_allclose(got, run(model, {"x0": x})["y0"], rtol=1e-4, atol=1e-5)


def test_unsupported_op_is_named(cache_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # every nn op has a kernel or a host step now: take PriorBox's host step away
    from irforge.backends.cpu import host_steps

    import irforge.backends.cpu.ops  # noqa: F401  (registers the host steps first)

    monkeypatch.setattr(host_steps, "HOST_STEP_OPS", host_steps.HOST_STEP_OPS - {PriorBox})
    model = one_op_model(PriorBox, [rand(1, 3, 4, 4), rand(1, 3, 32, 32)], [], min_size=[4.0])
    with pytest.raises(IrforgeError, match="no CPU kernel for nn.prior_box"):
        compile_model(model, cache_dir=cache_dir, pipeline="")  # canonicalize would fold it


def test_non_f32_is_refused(cache_dir) -> None:  # type: ignore[no-untyped-def]
    model = one_op_model(ReLU, [np.arange(6, dtype=np.int32).reshape(2, 3)], [])
    with pytest.raises(IrforgeError, match="f32 only"):
        compile_model(model, cache_dir=cache_dir)


@pytest.mark.parametrize("kind", ["erf", "gelu"])
def test_erf_polynomial_is_accurate_everywhere(kind, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """erf runs as a rational polynomial in registers: within 5e-7 of math.erf on [-8, 8],
    relative accuracy near 0 (subnormals included), +-1 beyond +-4, inf and NaN as libm."""
    import math

    x = np.concatenate([np.linspace(-8, 8, 4001), [0.0, 1e-30, -1e-38, 1e-6, 4.0, -4.0, 3.99, np.inf, -np.inf, np.nan]]).astype(np.float32)
    model = one_op_model(Activation, [x], [], kind=kind)
    from tests.backends.cpu.conftest import run_cpu

    got = run_cpu(model, {"x0": x}, cache_dir)["y0"].astype(np.float64)
    wide = x.astype(np.float64)
    if kind == "erf":
        want = np.array([math.erf(v) if not math.isnan(v) else np.nan for v in wide])
    else:  # -inf: 0.5 * -inf * 0 is NaN in the formula, as in the reference
        want = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) if math.isfinite(v) else (v if v > 0 else np.nan) for v in wide])
    # gelu: 1 + erf cancels below -3, where erf's 4.2e-7 becomes |x| / 2 times that
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=5e-7 if kind == "erf" else 2e-6)
    assert np.isnan(got[-1])


@pytest.mark.parametrize("op,props", [(Reduce, dict(operation="sum", axes=[1], keep_dims=False)), (SoftMax, dict(axis=1)),
                                      (MVN, dict(axes=[1]))])
def test_rows_across_whole_vectors(op, props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """A reduced axis with 32 contiguous elements after it: units of 16 lanes, no masks."""
    check_op(op, [rand(2, 5, 4, 8, low=-2, high=2)], [], cache_dir, **props)
