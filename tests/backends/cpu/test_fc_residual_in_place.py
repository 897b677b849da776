"""A FullyConnected / MatMul result stored over its fused residual (`fusion.residual_in_place`
through `linear._over_residual`, the GEMM starting from C's content: `GemmSpec.accumulate`):
only where no later op reads the residual, it is an arena tensor and K is one block
(`linear.fc_kc`; several: the residual read in the epilogue); a column tail, a bias per
column, a batched MatMul of two run-time operands; equal to the reference in every case, the
arena NaN-filled."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import linear
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Eltwise, FullyConnected, MatMul, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import rand


def _linear(b: ModelBuilder, x, k: int, n: int, seed: int, fc: bool):  # type: ignore[no-untyped-def]
    """x @ W + bias: a FullyConnected (W [n, k]) or a MatMul then the bias Add (W [k, n])."""
    if fc:
        return b.add(FullyConnected, [x, b.constant(rand(n, k, seed=seed)), b.constant(rand(n, seed=seed + 1))]).output
    y = b.add(MatMul, [x, b.constant(rand(k, n, seed=seed))]).output
    return b.add(Eltwise, [y, b.constant(rand(n, seed=seed + 1))], operation="sum").output


def _block(case: str, d: int, hidden: int, fc: bool):  # type: ignore[no-untyped-def]
    """relu(x0) -> MLP (d -> hidden, ReLU, hidden -> d) + x, with `case`'s twist."""
    b = ModelBuilder()
    x0 = b.input("x", (1, 7, d))
    x = b.add(ReLU, [x0]).output
    if case == "own_input":  # y = x @ W + b + x: the residual is the GEMM's A
        y = _linear(b, x, d, d, 1, fc)
    else:
        y = _linear(b, b.add(ReLU, [_linear(b, x, d, hidden, 1, fc)]).output, hidden, d, 3, fc)
    b.output(b.add(Eltwise, [y, x], operation="sum").output, "y")
    if case == "read_later":  # x read again after the block
        b.output(b.add(Eltwise, [x, x], operation="sum").output, "z")
    if case == "model_output":
        b.output(x, "x_out")
    return b.finish(), {"x": rand(1, 7, d)}


def _in_place(program) -> bool:  # type: ignore[no-untyped-def]
    """Whether the last GEMM's C (its args: A, B, C, ...) is a tensor written before it."""
    index = max(i for i, p in enumerate(program.phases) if p.function.endswith("_gemm"))
    return program.phases[index].args[2].first < index


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("fc", [False, True])
@pytest.mark.parametrize("case,d,hidden,in_place", [
    ("mlp", 45, 24, True),  # one K block, 45 columns: two vectors and a tail
    ("mlp", 40, 500, True),  # K = 500: one block (FC_KC 512)
    ("mlp", 40, 1030, False),  # K = 1030: three blocks of 344: the residual read at the end
    ("read_later", 45, 24, False),
    ("own_input", 45, 24, False),
    ("model_output", 45, 24, False),
])
def test_fc_residual_in_place(case, d, hidden, in_place, fc, threads) -> None:  # type: ignore[no-untyped-def]
    if hidden > 512:
        assert linear.fc_kc(hidden) < hidden
    model, feeds = _block(case, d, hidden, fc)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert _in_place(compiled._executable.program) == in_place
    matches_reference(compiled, model, feeds)


@pytest.mark.parametrize("threads", [1, 2])
def test_batched_matmul_over_its_residual(threads) -> None:  # type: ignore[no-untyped-def]
    """[3, 9, 20] @ [3, 20, 33] (both run-time) + r: three batch entries, each C over r's."""
    b = ModelBuilder()
    a0, b0, r0 = b.input("a", (3, 9, 20)), b.input("b", (3, 20, 33)), b.input("r", (3, 9, 33))
    r = b.add(ReLU, [r0]).output
    y = b.add(MatMul, [b.add(ReLU, [a0]).output, b0]).output
    b.output(b.add(Eltwise, [r, y], operation="sum").output, "y")
    model = b.finish()
    feeds = {"a": rand(3, 9, 20), "b": rand(3, 20, 33, seed=2), "r": rand(3, 9, 33, seed=3)}
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert _in_place(compiled._executable.program)
    matches_reference(compiled, model, feeds)
