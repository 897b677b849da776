"""f64 arithmetic on the CPU backend (TensorFlow graphs that Cast to float64 and back),
computed in f64 and compared with numpy's f64."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Convert, Eltwise
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


def test_f64_without_a_kernel_is_named(cache_dir) -> None:  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", [4], np.float64)
    b.output(b.add(Eltwise, [x, x], operation="pow").results[0], "y")
    with pytest.raises(IrforgeError, match="operation 'pow' on f64 has no CPU kernel"):
        compile_model(b.finish(), cache_dir=cache_dir)
