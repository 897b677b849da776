"""heads-in-weights' output projection `a[B, H, S, D] @ Wo[H, D, N]` summed over H by a
Reduce, lowered as one GEMM of K = H * D (`linear.merged_heads`: one K block per head,
`GemmSpec.a_block_step`): with and without the bias and residual Adds after the Reduce (the
residual stored over or read), keep_dims either way, a batch of 2, rows and columns that
leave tails; equal to the reference, the arena NaN-filled."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import linear
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Eltwise, MatMul, Reduce, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import rand


def _projection(batch: int, h: int, s: int, d: int, n: int, bias: bool, residual: str, keep_dims: bool = False):  # type: ignore[no-untyped-def]
    """relu(a) @ Wo summed over heads [+ bias] [+ relu(r)]; residual: none | added | read_later."""
    b = ModelBuilder()
    a0 = b.input("a", (batch, h, s, d))
    out_shape = (batch, 1, s, n) if keep_dims else (batch, s, n)
    feeds = {"a": rand(batch, h, s, d)}
    c = b.constant(rand(n, seed=2))  # before the MatMul, as exporters place them: lowered first
    if residual != "none":
        r = b.add(ReLU, [b.input("r", out_shape)]).output
        feeds["r"] = rand(*out_shape, seed=3)
    p = b.add(MatMul, [b.add(ReLU, [a0]).output, b.constant(rand(h, d, n, seed=1))]).output
    y = b.add(Reduce, [p], operation="sum", axes=[1], keep_dims=keep_dims).output
    if bias:
        y = b.add(Eltwise, [y, c], operation="sum").output
    if residual != "none":
        y = b.add(Eltwise, [r, y], operation="sum").output
        if residual == "read_later":
            b.output(b.add(Eltwise, [r, r], operation="sum").output, "z")
    b.output(y, "y")
    return b.finish(), feeds


@pytest.fixture(autouse=True)
def any_head_size(monkeypatch):  # type: ignore[no-untyped-def]
    """The path for every D here (`HEADS_MIN_D` is a speed choice: small cases test it)."""
    monkeypatch.setattr(linear, "HEADS_MIN_D", 1)


def test_short_heads_keep_the_batched_gemm(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "HEADS_MIN_D", 64)
    model, feeds = _projection(1, 3, 10, 32, 20, True, "added")
    compiled = compile_model(model, threads=1, cache_dir=False)
    assert _gemms(compiled._executable.program)[0].args[2].nbytes == 4 * 3 * 10 * 20
    matches_reference(compiled, model, feeds)


def _gemms(program) -> list:  # type: ignore[no-untyped-def]
    return [p for p in program.phases if p.function.endswith("_gemm")]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch,h,s,d,n,bias,residual", [
    (1, 4, 13, 16, 45, True, "added"),  # 13 rows: a tail block; 45 columns: a tail
    (1, 3, 20, 8, 32, False, "none"),
    (1, 2, 7, 64, 40, True, "read_later"),  # the residual read in the epilogue
    (2, 3, 9, 16, 24, True, "added"),  # a batch level: A S*D*H, C S*N apart
])
def test_merged_heads(batch, h, s, d, n, bias, residual, threads) -> None:  # type: ignore[no-untyped-def]
    model, feeds = _projection(batch, h, s, d, n, bias, residual)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    program = compiled._executable.program
    gemms = _gemms(program)
    assert len(gemms) == 1 and not any(p.function.endswith("_rows") for p in program.phases)
    assert gemms[0].args[2].nbytes == 4 * batch * s * n  # C is the summed result, not [B, H, S, N]
    # the bias Add and the residual Add are the GEMM's: nothing but the two ReLUs (and r + r) besides
    assert len(program.phases) == 1 + (residual != "none") + 1 + (residual == "read_later")
    # K in H blocks: never over the residual (`linear._over_residual`), r read in the epilogue
    assert gemms[0].args[2].first == program.phases.index(gemms[0])
    matches_reference(compiled, model, feeds)


def test_keep_dims_and_the_batched_path() -> None:
    """keep_dims: the same GEMM; HEADS_AS_K off: the batched GEMM and the Reduce, equal too."""
    model, feeds = _projection(1, 3, 10, 16, 20, True, "added", keep_dims=True)
    compiled = compile_model(model, threads=1, cache_dir=False)
    assert len(_gemms(compiled._executable.program)) == 1
    matches_reference(compiled, model, feeds)
    linear.HEADS_AS_K = False
    try:
        compiled = compile_model(model, threads=1, cache_dir=False)
        assert _gemms(compiled._executable.program)[0].args[2].nbytes == 4 * 3 * 10 * 20
        matches_reference(compiled, model, feeds)
    finally:
        linear.HEADS_AS_K = True
