"""A transformer MLP's `MatMul(constant W) -> Add(bias) -> GELU` (erf and tanh forms): the
bias added per column by the GEMM; GELU in the epilogue when switched on (`GELU_KINDS` added
to `FUSED_KINDS`; off by default, it measured no faster), its own phase by default. Against
the reference interpreter; also after FullyConnected, with a residual after the bias, with
AVX-512's 12x32 tile, and the cases that must stay unfused."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import gemm
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, Eltwise, FullyConnected, MatMul
from tests.backends.cpu.conftest import run_cpu, use_avx512_tile
from tests.helpers import rand

GELUS = ["gelu", "gelu_tanh"]


@pytest.fixture
def gelu_fused(monkeypatch):  # type: ignore[no-untyped-def]
    """GELU fused (tests under it and the default-phase test compile without the program
    cache, whose key does not hold FUSED_KINDS)."""
    from irforge.backends.cpu.codegen.epilogue import GELU_KINDS
    from irforge.backends.cpu.ops import fusion

    monkeypatch.setattr(fusion, "FUSED_KINDS", fusion.FUSED_KINDS | GELU_KINDS)


def _mlp(kind: str, bias_shape: tuple[int, ...] | None, residual: bool = False, m: int = 13, k: int = 20, n: int = 37,
         producer: str = "matmul", bias_first: bool = False):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", (1, m, k))
    feeds = {"x": rand(1, m, k) * 2}
    if producer == "matmul":
        y = b.add(MatMul, [x, b.constant(rand(k, n, seed=1))]).output
    else:
        y = b.add(FullyConnected, [x, b.constant(rand(n, k, seed=1))]).output
    if bias_shape is not None:
        c = b.constant(rand(*bias_shape, seed=2))
        y = b.add(Eltwise, [c, y] if bias_first else [y, c], operation="sum").output
    if residual:
        r = b.input("r", (1, m, n))
        feeds["r"] = rand(1, m, n, seed=3)
        y = b.add(Eltwise, [y, r], operation="sum").output
    if kind != "none":
        y = b.add(Activation, [y], kind=kind).output
    b.output(y, "y")
    return b.finish(), feeds


def _phases(model, cache_dir) -> int:  # type: ignore[no-untyped-def]
    compiled = compile_model(model, threads=1, cache_dir=cache_dir)
    try:
        return compiled.stats.phases
    finally:
        compiled.close()


@pytest.mark.parametrize("bias_shape,bias_first", [((37,), False), ((1, 1, 37), True), (None, False)])
@pytest.mark.parametrize("kind", GELUS)
def test_bias_and_gelu_fused_into_matmul(kind, bias_shape, bias_first, gelu_fused) -> None:  # type: ignore[no-untyped-def]
    model, feeds = _mlp(kind, bias_shape, bias_first=bias_first)
    np.testing.assert_allclose(run_cpu(model, feeds, False)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)
    assert _phases(model, False) == 1  # the GEMM alone: bias and GELU in its epilogue


@pytest.mark.parametrize("kind", GELUS + ["swish"])
def test_epilogue_only_after_the_last_k_block(kind, gelu_fused) -> None:  # type: ignore[no-untyped-def]
    """K = 2.1 x KC: the blocks before the last store raw partial sums (a branch), the last
    one adds the bias and applies the activation once."""
    k = int(gemm.KC * 2.1)
    model, feeds = _mlp(kind, (37,), k=k, m=9)
    feeds["x"] = feeds["x"] / np.sqrt(k / 20)
    np.testing.assert_allclose(run_cpu(model, feeds, False)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", GELUS)
def test_residual_after_the_bias_and_fully_connected(kind, gelu_fused) -> None:  # type: ignore[no-untyped-def]
    model, feeds = _mlp(kind, (37,), residual=True)
    np.testing.assert_allclose(run_cpu(model, feeds, False)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)
    assert _phases(model, False) == 1
    model, feeds = _mlp(kind, None, producer="fc")
    np.testing.assert_allclose(run_cpu(model, feeds, False)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)
    assert _phases(model, False) == 1


def test_bias_that_is_not_per_column_stays_an_add(gelu_fused) -> None:  # type: ignore[no-untyped-def]
    """A (m, 1) constant broadcasts along rows, a full (m, n) one is no bias: both stay Adds
    (the GELU after them then runs in the Add's phase: `elementwise.ELTWISE_ACTIVATION`)."""
    for shape in [(13, 1), (13, 37)]:
        model, feeds = _mlp("gelu", shape)
        np.testing.assert_allclose(run_cpu(model, feeds, False)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)
        assert _phases(model, False) == 2


@pytest.mark.parametrize("kind", GELUS)
def test_gelu_epilogue_with_the_avx512_tile(kind, monkeypatch, gelu_fused) -> None:  # type: ignore[no-untyped-def]
    """AVX-512's 12x32 tile (two 16-lane vectors per row, LLVM legalises them here): bias and
    GELU per vector of the wider tile, partial panels included (n = 37)."""
    use_avx512_tile(monkeypatch)
    model, feeds = _mlp(kind, (37,), m=29)
    np.testing.assert_allclose(run_cpu(model, feeds, False, threads=2)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kind", GELUS)
def test_by_default_gelu_is_its_own_phase_after_the_biased_matmul(kind) -> None:  # type: ignore[no-untyped-def]
    model, feeds = _mlp(kind, (37,))
    np.testing.assert_allclose(run_cpu(model, feeds, False)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)
    assert _phases(model, False) == 2  # the GEMM with its bias, then GELU


@pytest.mark.parametrize("kind", GELUS)
def test_gelu_extremes(kind, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """The register forms at the limits of exp and the erf polynomial, infinities and NaN."""
    values = np.array([-1e4, -100, -88.8, -50, -10, -5, -4.5, -3, -1, -1e-3, 0, 1e-3, 1, 3, 4.5, 5, 10, 50, 88.8, 100, 1e4,
                       np.inf, -np.inf, np.nan], np.float32)
    b = ModelBuilder()
    y = b.add(Activation, [b.input("x", (1, values.size))], kind=kind).output
    b.output(y, "y")
    model, feeds = b.finish(), {"x": values[None]}
    with np.errstate(all="ignore"):
        want = run(model, feeds)["y"]
    np.testing.assert_allclose(run_cpu(model, feeds, cache_dir)["y"], want, rtol=1e-5, atol=1e-6)
