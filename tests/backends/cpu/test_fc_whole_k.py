"""A one-row FC / MatMul GEMM of constant weights takes K in one block
(`linear.FC_WHOLE_K_ROWS`); two rows, run-time weights and the knob off keep blocks of
`fc_kc`. K = 1300 (three blocks otherwise), with bias, residual and ReLU; against the
reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu.ops import gemm_function, linear
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Eltwise, FullyConnected, MatMul, ReLU
from tests.backends.cpu.conftest import run_cpu
from tests.helpers import rand

K, N = 1300, 37


def _model(producer: str, m: int, constant: bool = True):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", (m, K))
    feeds = {"x": rand(m, K, seed=1) / 20}
    shape = (N, K) if producer == "fc" else (K, N)
    if constant:
        w = b.constant(rand(*shape, seed=2))
    else:
        w = b.input("w", shape)
        feeds["w"] = rand(*shape, seed=2)
    y = b.add(FullyConnected if producer == "fc" else MatMul, [x, w]).output
    y = b.add(Eltwise, [y, b.constant(rand(N, seed=3))], operation="sum").output
    r = b.input("r", (m, N))
    feeds["r"] = rand(m, N, seed=4)
    y = b.add(Eltwise, [y, r], operation="sum").output
    b.output(b.add(ReLU, [y]).output, "y")
    return b.finish(), feeds


def _blocks(model, feeds, monkeypatch) -> int:  # type: ignore[no-untyped-def]
    taken = []
    original = gemm_function.gemm_kernel
    monkeypatch.setattr(gemm_function, "gemm_kernel", lambda mod, spec, name: (taken.append(spec.kc), original(mod, spec, name))[1])
    np.testing.assert_allclose(run_cpu(model, feeds, False, threads=2)["y"], run(model, feeds)["y"], rtol=1e-5, atol=1e-5)
    assert len(taken) == 1
    return -(-K // taken[0])


@pytest.mark.parametrize("producer", ["fc", "matmul"])
def test_one_row_one_block(producer: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert _blocks(*_model(producer, 1), monkeypatch) == 1
    assert _blocks(*_model(producer, 2), monkeypatch) == 3
    assert _blocks(*_model(producer, 1, constant=False), monkeypatch) == 3
    monkeypatch.setattr(linear, "FC_WHOLE_K_ROWS", 0)
    assert _blocks(*_model(producer, 1), monkeypatch) == 3
