"""The smooth activations of mobile networks (Swish, HardSwish, HardSigmoid, Sigmoid) fused
into the producing convolution's epilogue: GEMM (1x1), depthwise, Winograd (3x3), with and
without a residual, against the reference interpreter; one phase fewer per activation."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, Convolution, Eltwise
from tests.backends.cpu.conftest import run_cpu
from tests.helpers import rand

KINDS = [("swish", 1.0, 0.0), ("hswish", 1.0, 0.0), ("hsigmoid", 1 / 6, 0.5), ("hsigmoid", 0.2, 0.5), ("sigmoid", 1.0, 0.0)]
CONVS = {
    "gemm1x1": ((1, 6, 9, 11), (10, 6, 1, 1), {}),
    "depthwise": ((1, 6, 21, 30), (6, 1, 5, 5), dict(group=6, pads_begin=[2, 2], pads_end=[2, 2])),  # exp: after the rows
    "depthwise3x3": ((1, 6, 21, 30), (6, 1, 3, 3), dict(group=6, pads_begin=[1, 1], pads_end=[1, 1])),  # in registers
    "winograd": ((1, 16, 14, 14), (16, 16, 3, 3), dict(pads_begin=[1, 1], pads_end=[1, 1])),
}


def _model(conv: str, kind: str, alpha: float, beta: float, residual: bool):  # type: ignore[no-untyped-def]
    x_shape, w_shape, props = CONVS[conv]
    b = ModelBuilder()
    x = b.input("x", x_shape)
    y = b.add(Convolution, [x, b.constant(rand(*w_shape, seed=1)), b.constant(rand(w_shape[0], seed=2))], **props).output
    feeds = {"x": rand(*x_shape) * 3}
    if residual:
        out_shape = (x_shape[0], w_shape[0], *_spatial(x_shape, w_shape, props))
        r = b.input("r", out_shape)
        feeds["r"] = rand(*out_shape, seed=3)
        y = b.add(Eltwise, [r, y], operation="sum").output
    y = b.add(Activation, [y], kind=kind, alpha=alpha, beta=beta).output
    b.output(y, "y")
    return b.finish(), feeds


def _spatial(x_shape, w_shape, props) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    pads = props.get("pads_begin", [0, 0])
    return tuple(x_shape[2 + i] + 2 * pads[i] - w_shape[2 + i] + 1 for i in range(2))  # type: ignore[return-value]


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("kind,alpha,beta", KINDS)
@pytest.mark.parametrize("conv", sorted(CONVS))
def test_activation_fused_into_convolution(conv, kind, alpha, beta, residual, cache_dir) -> None:  # type: ignore[no-untyped-def]
    model, feeds = _model(conv, kind, alpha, beta, residual)
    want = run(model, feeds)["y"]
    np.testing.assert_allclose(run_cpu(model, feeds, cache_dir, threads=2)["y"], want, rtol=1e-4, atol=1e-5)
    fused = compile_model(model, threads=1, cache_dir=cache_dir)
    unfused, _ = _model(conv, "tanh", 1.0, 0.0, residual)  # not fused: its own phase
    assert fused.stats.phases == compile_model(unfused, threads=1, cache_dir=cache_dir).stats.phases - 1
    fused.close()


@pytest.mark.parametrize("kind,alpha,beta", KINDS)
def test_activation_extremes(kind, alpha, beta, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Past exp's limits, at 0 and infinities, NaN: the reference's values (NaN where it has NaN)."""
    values = np.array([-1e4, -100, -88.8, -87, -50, -3, -1e-3, 0, 1e-3, 3, 50, 87, 88.8, 100, 1e4, np.inf, -np.inf, np.nan], np.float32)
    b = ModelBuilder()
    y = b.add(Activation, [b.input("x", (1, values.size))], kind=kind, alpha=alpha, beta=beta).output
    b.output(y, "y")
    model, feeds = b.finish(), {"x": values[None]}
    with np.errstate(all="ignore"):
        want = run(model, feeds)["y"]
    np.testing.assert_allclose(run_cpu(model, feeds, cache_dir)["y"], want, rtol=1e-5, atol=1e-6)
