"""f64 arithmetic on the CPU backend (TensorFlow graphs that Cast to float64 and back),
computed in f64 and compared with numpy's f64."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.builder import ModelBuilder
from irforge.backends.reference import run
from irforge.dialects.nn import Activation, Convert, Eltwise, MatMul, SoftMax
from irforge.errors import IrforgeError
from irforge.weights.dtypes import to_xdsl

NUMPY = {"sum": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide, "max": np.maximum,
         "min": np.minimum, "squared_diff": lambda a, b: (a - b) ** 2}


@pytest.mark.parametrize("operation", sorted(NUMPY))
def test_f64_eltwise_between_casts(operation, cache_dir) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    c = rng.uniform(0.5, 2.0, (3, 1)) * 1.0000001  # not representable in f32
    b = ModelBuilder()
    x = b.input("x", [2, 3, 37])
    wide = b.add(Convert, [x], destination_type=to_xdsl(np.dtype(np.float64))).results[0]
    y = b.add(Eltwise, [wide, b.constant(c)], operation=operation).results[0]
    b.output(y, "y64")
    b.output(b.add(Convert, [y], destination_type=to_xdsl(np.dtype(np.float32))).results[0], "y")
    model = b.finish()
    feed = rng.standard_normal((2, 3, 37)).astype(np.float32)
    got = compile_model(model, threads=2, cache_dir=cache_dir)({"x": feed})
    want = NUMPY[operation](feed.astype(np.float64), c)
    assert got["y64"].dtype == np.float64
    np.testing.assert_allclose(got["y64"], want, rtol=1e-15, atol=1e-15)
    np.testing.assert_array_equal(got["y"], want.astype(np.float32))


def test_f64_eltwise_without_a_native_kernel_runs_numpys(cache_dir) -> None:  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", [4], np.float64)
    b.output(b.add(Eltwise, [x, x], operation="pow").results[0], "y")
    feed = np.array([0.5, 1.0000001, 2.5, 3.0])
    got = compile_model(b.finish(), cache_dir=cache_dir)({"x": feed})["y"]
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, feed**feed)


def test_f16_model_computes_in_f32(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """widen-f16: an f16 op without an f16 kernel runs in f32; f16 in and out."""
    b = ModelBuilder()
    x = b.input("x", [4], np.float16)
    b.output(b.add(Eltwise, [x, x], operation="pow").results[0], "y")
    feed = np.array([0.5, 1.5, 2.5, 3.0], np.float16)
    got = compile_model(b.finish(), cache_dir=cache_dir)({"x": feed})["y"]
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, (feed.astype(np.float32) ** feed.astype(np.float32)).astype(np.float16))


def test_f64_activations_softmax_and_matmul_run_in_f64(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Ops whose native kernels are f32-only run numpy's f64 on f64 tensors (host steps),
    exactly as the reference interpreter; the f32 ones beside them keep their kernels."""
    rng = np.random.default_rng(1)
    w = rng.standard_normal((5, 3)) * 1.0000001
    b = ModelBuilder()
    x = b.input("x", [2, 5], np.float64)
    y = x
    for kind in ("tanh", "sigmoid", "exp", "erf"):
        y = b.add(Activation, [y], kind=kind).results[0]
    y = b.add(MatMul, [y, b.constant(w)]).results[0]
    y = b.add(SoftMax, [y], axis=1).results[0]
    b.output(y, "y")
    narrow = b.add(Convert, [x], destination_type=to_xdsl(np.dtype(np.float32))).results[0]
    b.output(b.add(Activation, [narrow], kind="tanh").results[0], "f32")
    model = b.finish()
    feed = rng.standard_normal((2, 5))
    got = compile_model(model, threads=2, cache_dir=cache_dir)({"x": feed})
    want = run(model, {"x": feed})
    assert got["y"].dtype == np.float64
    np.testing.assert_array_equal(got["y"], want["y"])
    np.testing.assert_allclose(got["f32"], np.tanh(feed).astype(np.float32), rtol=1e-6)
