"""A squeeze-excite's global average pool summed by the depthwise kernel (`DepthwiseSpec.pool`,
`excite.plane_mean_of`) against the reference: Swish / Sigmoid / HardSwish after the stores on
the padded-plane kernel (7x7, 9x9 with a masked last vector: Sigmoid(0) = 0.5 must not be
summed) and on the cut kernel (a 56x56 plane), a residual, a Reduce mean without kept axes,
two samples; 1 and 2 threads, the arena NaN-filled. ReLU (applied on the accumulators, no
per-plane pass) keeps the pool as its own phase."""

from __future__ import annotations

import tempfile

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.dialects.nn import Activation, Convolution, Eltwise, Pooling, Reduce, ReLU
from tests.helpers import ModelBuilder, rand

CACHE = tempfile.mkdtemp(prefix="irforge-dwpool-")

CASES = [
    # (n, c, h, w), k, activation, residual, pool as Reduce
    ((1, 5, 7, 7), 5, "swish", False, False),
    ((2, 3, 9, 9), 3, "sigmoid", True, False),  # 81 outputs: a masked last vector
    ((1, 4, 14, 14), 5, "hswish", False, True),
    ((1, 2, 56, 56), 3, "swish", False, False),  # the cut kernel (rows over PADDED_OW_MAX)
]


def _model(x_shape, k, act, residual, as_reduce):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    n, c, h, w = x_shape
    x = b.input("x", x_shape)
    pad = k // 2
    y = b.add(Convolution, [x, b.constant(rand(c, 1, k, k, seed=1)), b.constant(rand(c, seed=2))], group=c,
              pads_begin=[pad, pad], pads_end=[pad, pad]).output
    feeds = {"x": rand(*x_shape) * 2}
    if residual:
        r = b.input("r", x_shape)
        y = b.add(Eltwise, [r, y], operation="sum").output
        feeds["r"] = rand(*x_shape, seed=3)
    if act == "relu":
        y = b.add(ReLU, [y]).output
    else:
        y = b.add(Activation, [y], kind=act, alpha=1.0).output
    if as_reduce:
        pooled = b.add(Reduce, [y], operation="mean", axes=[2, 3], keep_dims=False).output
    else:
        pooled = b.add(Pooling, [y], method="avg", global_pool=True).output
    b.output(y, "y")
    b.output(pooled, "pooled")
    return b.finish(), feeds


def _check(model, feeds, fused: bool) -> None:  # type: ignore[no-untyped-def]
    want = run(model, feeds)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=CACHE)
        compiled._executable.arena[:] = np.nan
        try:
            functions = [p.function for p in compiled._executable.program.phases]
            assert any("_rows" in f for f in functions) != fused
            got = compiled(feeds)
            for name in ("y", "pooled"):
                np.testing.assert_allclose(got[name].reshape(want[name].shape), want[name], rtol=1e-5, atol=1e-6)
        finally:
            compiled.close()


@pytest.mark.parametrize("x_shape,k,act,residual,as_reduce", CASES)
def test_pool_in_depthwise(x_shape, k, act, residual, as_reduce) -> None:  # type: ignore[no-untyped-def]
    _check(*_model(x_shape, k, act, residual, as_reduce), fused=True)


def test_relu_keeps_the_pool() -> None:
    _check(*_model((1, 3, 7, 7), 3, "relu", False, False), fused=False)
