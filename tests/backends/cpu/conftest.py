"""CPU backend tests: one object cache per test session, so repeated kernels compile once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.model import Model
from tests.helpers import one_op_model


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return tmp_path_factory.mktemp("cpu-cache")


def run_cpu(model: Model, feeds: Mapping[str, np.ndarray], cache, threads: int = 2) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    compiled = compile_model(model, threads=threads, cache_dir=cache)
    try:
        return compiled(feeds)
    finally:
        compiled.close()


def matches_reference(compiled, model: Model, feeds: Mapping[str, np.ndarray], rtol: float = 1e-4, atol: float = 1e-5) -> None:  # type: ignore[no-untyped-def]
    """Every output of `compiled`, run once with its arena NaN-filled first (a lane a kernel
    leaves unwritten shows), equals the reference interpreter's; `compiled` is closed."""
    compiled._executable.arena[:] = np.nan
    try:
        got = compiled(feeds)
    finally:
        compiled.close()
    want = run(model, feeds)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=rtol, atol=atol)


def check_op(cls, inputs: Sequence[np.ndarray], constants: Sequence[np.ndarray], cache, rtol: float = 1e-4, atol: float = 1e-5, **props) -> None:  # type: ignore[no-untyped-def]
    """The CPU output of one op equals the reference interpreter's."""
    model = one_op_model(cls, inputs, constants, **props)
    feeds = {f"x{i}": x for i, x in enumerate(inputs)}
    want = run(model, feeds)["y0"]
    got = run_cpu(model, feeds, cache)["y0"]
    assert got.shape == want.shape and got.dtype == want.dtype
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, want)


def use_avx512_tile(monkeypatch: pytest.MonkeyPatch) -> None:
    """AVX-512's 12x32 GEMM tile (two 16-lane vectors a row) whatever the host: LLVM
    legalises the wider vectors here, so its kernels' numbers are checked on an AVX2 machine.
    A kernel's object-cache key does not hold the tile: compile such models without a cache."""
    from irforge.backends.cpu.codegen import conv as conv_codegen
    from irforge.backends.cpu.codegen import gemm
    from irforge.backends.cpu.ops import linear, shifted

    for module in (gemm, shifted, linear, conv_codegen):
        monkeypatch.setattr(module, "NR", 32)
    monkeypatch.setattr(gemm, "MR", 12)
    monkeypatch.setattr(gemm, "NV", 2)


@pytest.fixture(params=["host", "avx512"])
def panels(request, monkeypatch):  # type: ignore[no-untyped-def]
    """The host's GEMM tile and AVX-512's (`use_avx512_tile`): a test taking `panels` runs both."""
    if request.param == "avx512":
        use_avx512_tile(monkeypatch)
    return request.param
