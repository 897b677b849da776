"""Max pooling through a padded row (`codegen.pool._row_max_kernel`) against the reference:
column strides 1 and 2, dilations, ceil-mode overhang, row tails and plane widths of whole
vectors, NaN and -inf inputs (the reference's max propagates NaN and pads with -inf), 1 and 2
threads; and planes too wide for the stack row keep the general kernel."""

from __future__ import annotations

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
]


def _pool(x_shape, props, feeds, threads):  # type: ignore[no-untyped-def]
    model = one_op_model(Pooling, [rand(*x_shape)], [], method="max", **props)
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


def test_wide_planes_keep_the_general_kernel(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    wide = pool.PoolSpec(pool.ConvGeometry(1, 2, 6, 75, 3, 3, 3, 38, (2, 2), (1, 1), (1, 1)), "max", False, (1, 1))
    narrow = pool.PoolSpec(pool.ConvGeometry(1, 2, 6, 20, 3, 3, 3, 10, (2, 2), (1, 1), (1, 1)), "max", False, (1, 1))
    monkeypatch.setattr(pool, "ROW_FLOATS_MAX", 64)
    taken = []
    monkeypatch.setattr(pool, "_row_max_kernel", lambda module, g, name: taken.append(g.w))
    for spec in (wide, narrow):
        pool.pool_kernel(ir.Module(), spec, "k")
    assert taken == [20]
    monkeypatch.undo()
    monkeypatch.setattr(pool, "ROW_FLOATS_MAX", 64)
    x_shape, props = (1, 2, 6, 75), dict(kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
    x = rand(*x_shape)
    got, want = _pool(x_shape, props, {"x0": x}, 1)
    np.testing.assert_allclose(got, want)
