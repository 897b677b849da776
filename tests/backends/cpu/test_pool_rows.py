"""Max and average pooling through a padded row (`codegen.pool._row_kernel`) against the
reference: column strides 1 and 2, dilations, ceil-mode overhang, row tails and plane widths
of whole vectors, NaN and -inf inputs (the reference's max propagates NaN and pads with
-inf), averages with and without the pads counted, 1 and 2 threads; and planes too wide for
the stack row keep the general kernel."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from llvmlite import ir

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import pool
from irforge.backends.reference import run
from irforge.dialects.nn import Pooling
from tests.helpers import one_op_model, rand

CASES = [
    # (input shape, pooling properties)
    ((1, 3, 112, 112), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # ResNet-50's
    ((2, 3, 17, 33), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], rounding_type="ceil")),
    ((1, 5, 9, 40), dict(kernel=[2, 2], strides=[2, 2])),
    ((1, 5, 9, 16), dict(kernel=[3, 3], strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 5, 20, 21), dict(kernel=[5, 3], strides=[1, 2], pads_begin=[2, 1], pads_end=[2, 1])),
    ((1, 5, 20, 37), dict(kernel=[3, 3], strides=[2, 1], dilations=[2, 2])),
    ((1, 4, 7, 7), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[2, 2], pads_end=[2, 2])),  # a window all pad
    ((1, 2, 5, 75), dict(kernel=[1, 4], strides=[1, 2], pads_begin=[0, 3], pads_end=[0, 0])),
    # a vector of columns in and out: the row stays in a register (`SMALL_IN_REGISTERS`)
    ((1, 6, 8, 8), dict(kernel=[3, 3], strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1])),  # Inception-v3's 8x8
    ((1, 3, 9, 13), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], rounding_type="ceil")),
    # two vectors of columns (`REGISTER_VECTORS`): Inception-v3's 17x17 pools, 17 -> 8 at stride 2
    ((1, 6, 17, 17), dict(kernel=[3, 3], strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 4, 17, 17), dict(kernel=[3, 3], strides=[2, 2])),
    ((1, 3, 5, 32), dict(kernel=[2, 3], strides=[1, 1], pads_begin=[0, 1], pads_end=[1, 1])),
]


def _pool(x_shape, props, feeds, threads, method: str = "max"):  # type: ignore[no-untyped-def]
    model = one_op_model(Pooling, [rand(*x_shape)], [], method=method, **props)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    try:
        return compiled(feeds)["y0"], run(model, feeds)["y0"]
    finally:
        compiled.close()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,props", CASES)
def test_row_max(x_shape, props, threads) -> None:  # type: ignore[no-untyped-def]
    x = rand(*x_shape)
    x.reshape(-1)[::13] = np.nan  # NaN wherever it falls in a window must come out
    x.reshape(-1)[5::17] = -np.inf
    got, want = _pool(x_shape, props, {"x0": x}, threads)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("exclude_pad", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,props", CASES + [
    ((1, 6, 35, 35), dict(kernel=[3, 3], strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1])),  # Inception-v3's
])
def test_row_avg(x_shape, props, threads, exclude_pad) -> None:  # type: ignore[no-untyped-def]
    """Sums over the padded row divided by rows counted times columns counted: a window all
    pad counts nothing with exclude_pad (0 / 0, NaN as in the reference), the overhang of
    ceil rounding never counts."""
    x = rand(*x_shape)
    x.reshape(-1)[::29] = 1e3  # sums of a wide range of values
    got, want = _pool(x_shape, {**props, "exclude_pad": exclude_pad}, {"x0": x}, threads, "avg")
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_wide_planes_keep_the_general_kernel(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    wide = pool.PoolSpec(pool.ConvGeometry(1, 2, 6, 75, 3, 3, 3, 38, (2, 2), (1, 1), (1, 1)), "max", False, (1, 1))
    narrow = pool.PoolSpec(pool.ConvGeometry(1, 2, 6, 20, 3, 3, 3, 10, (2, 2), (1, 1), (1, 1)), "max", False, (1, 1))
    monkeypatch.setattr(pool, "ROW_FLOATS_MAX", 64)
    taken = []
    monkeypatch.setattr(pool, "_row_kernel", lambda module, spec, name: taken.append((spec.geometry.w, spec.method)))
    stride_1 = pool.PoolSpec(pool.ConvGeometry(1, 2, 6, 20, 3, 3, 6, 20, (1, 1), (1, 1), (1, 1)), "avg", True, (1, 1))
    for spec in (wide, narrow, stride_1):
        pool.pool_kernel(ir.Module(), spec, "k")
    assert taken == [(20, "max"), (20, "avg")]
    # an average at column stride 2 keeps the general kernel unless its row fits registers
    monkeypatch.setattr(pool, "ROW_FLOATS_MAX", 16384)
    taken.clear()
    wider = pool.PoolSpec(pool.ConvGeometry(1, 2, 6, 36, 2, 2, 3, 18, (2, 2), (1, 1), (0, 0)), "avg", True, (0, 0))
    for spec in (replace(narrow, method="avg"), wider):
        pool.pool_kernel(ir.Module(), spec, "k")
    assert taken == [(20, "avg")]
    monkeypatch.undo()
    monkeypatch.setattr(pool, "ROW_FLOATS_MAX", 64)
    x_shape, props = (1, 2, 6, 75), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
    x = rand(*x_shape)
    got, want = _pool(x_shape, props, {"x0": x}, 1)
    np.testing.assert_allclose(got, want)
