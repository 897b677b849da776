"""Non-f32 element-wise ops on the CPU vs the reference interpreter: comparisons (i1
results), logic, integer arithmetic, Select and Convert."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.dialects.nn import Convert, Eltwise, Select
from irforge.weights.dtypes import to_xdsl
from tests.backends.cpu.conftest import check_op
from tests.helpers import rand

SHAPES = [((2, 3, 5, 7), (2, 3, 5, 7)), ((4, 1, 33), (5, 1)), ((17,), (3, 1, 17))]


def values(shape: tuple[int, ...], dtype, seed: int = 0) -> np.ndarray:  # type: ignore[no-untyped-def]
    x = rand(*shape, seed=seed, low=-20, high=20)
    if dtype == np.bool_:
        return x > 0
    return np.round(x).astype(dtype) if np.issubdtype(dtype, np.integer) else x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("operation", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"])
@pytest.mark.parametrize("a,b", SHAPES)
def test_comparison(operation, a, b, dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    x, y = values(a, dtype), values(b, dtype, seed=1)
    if dtype == np.float32:
        x.flat[::7] = np.nan
        x.flat[1] = y.flat[1 % y.size]
    check_op(Eltwise, [x, y], [], cache_dir, operation=operation)


@pytest.mark.parametrize("operation", ["and", "or", "xor"])
@pytest.mark.parametrize("a,b", SHAPES)
def test_logic(operation, a, b, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Eltwise, [values(a, np.bool_), values(b, np.bool_, seed=1)], [], cache_dir, operation=operation)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("operation", ["sum", "sub", "mul", "div", "mod", "floor_mod", "max", "min", "squared_diff"])
@pytest.mark.parametrize("a,b", SHAPES)
def test_integer_arithmetic(operation, a, b, dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    y = values(b, dtype, seed=1)
    if operation in ("div", "mod", "floor_mod"):
        y = np.where(y == 0, 3, y).astype(dtype)
    check_op(Eltwise, [values(a, dtype), y], [], cache_dir, operation=operation)


def test_integer_division_by_zero_does_not_trap(cache_dir) -> None:  # type: ignore[no-untyped-def]
    x = np.array([7, -7, np.iinfo(np.int32).min, 5], np.int32)
    y = np.array([0, 2, -1, 0], np.int32)
    from irforge.backends.cpu import compile_model
    from tests.helpers import one_op_model

    model = one_op_model(Eltwise, [x, y], [], operation="div")
    got = compile_model(model, threads=1, cache_dir=cache_dir)({"x0": x, "x1": y})["y0"]
    np.testing.assert_array_equal(got[[1, 2]], [-3, np.iinfo(np.int32).min])


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64, np.bool_])
def test_select(dtype, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Select, [values((3, 1, 7), np.bool_), values((5, 7), dtype, 1), values((3, 5, 1), dtype, 2)], [], cache_dir)


TYPES = [np.float32, np.float16, np.float64, np.int32, np.int64, np.bool_]


@pytest.mark.parametrize("to", TYPES)
@pytest.mark.parametrize("source", TYPES)
def test_convert(source, to, cache_dir) -> None:  # type: ignore[no-untyped-def]
    x = values((3, 37), source) if source != np.float32 else rand(3, 37, low=-300, high=300)
    if np.issubdtype(source, np.floating):
        x.flat[::5] = 0
        if to == np.float16 or np.issubdtype(to, np.integer):
            x = np.clip(x, -1000, 1000).astype(source)
    check_op(Convert, [x], [], cache_dir, destination_type=to_xdsl(np.dtype(to)))
