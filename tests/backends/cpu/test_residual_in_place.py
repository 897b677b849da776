"""A convolution's fused residual Add stored over the residual tensor (`fusion.residual_in_place`,
the GEMM starting from C's content: `GemmSpec.accumulate`): only where no later op reads the
residual and it is an arena tensor (not a model input or output); one K block or several;
equal to the reference in every case, the arena NaN-filled."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import linear
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Convolution, Eltwise, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import rand


def _conv(b: ModelBuilder, x, c_in: int, c_out: int, seed: int):  # type: ignore[no-untyped-def]
    return b.add(Convolution, [x, b.constant(rand(c_out, c_in, 1, 1, seed=seed)), b.constant(rand(c_out, seed=seed + 1))]).output


def _block(case: str, c: int):  # type: ignore[no-untyped-def]
    """relu(x0) -> bottleneck (1x1 c -> 8, ReLU, 1x1 8 -> c) + x -> ReLU, with `case`'s twist."""
    b = ModelBuilder()
    hw = (15, 16) if case == "own_input" else (9, 11)  # 240 positions: B read in place (> PACK_PLANE_MAX)
    x0 = b.input("x", (1, c, *hw))
    x = b.add(ReLU, [x0]).output
    if case == "own_input":  # y = relu(conv(x) + x): the residual is the GEMM's B
        y = _conv(b, x, c, c, 1)
    else:
        y = _conv(b, b.add(ReLU, [_conv(b, x, c, 8, 1)]).output, 8, c, 3)
    out = b.add(ReLU, [b.add(Eltwise, [y, x], operation="sum").output]).output
    b.output(out, "y")
    if case == "read_later":  # x read again after the block
        b.output(b.add(Eltwise, [x, x], operation="sum").output, "z")
    if case == "model_output":
        b.output(x, "x_out")
    return b.finish(), {"x": rand(1, c, *hw)}


def _in_place(program) -> bool:  # type: ignore[no-untyped-def]
    """Whether the last 1x1 GEMM's C (its args: A, B, C, ...) is a tensor written before it."""
    index = max(i for i, p in enumerate(program.phases) if p.tag == "conv1x1")
    return program.phases[index].args[2].first < index


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case,c,in_place", [
    ("bottleneck", 40, True),
    ("read_later", 40, False),
    ("own_input", 40, False),
    ("model_output", 40, False),
    ("bottleneck", 400, True),  # the last GEMM's K is 8: one block
])
def test_residual_in_place(case, c, in_place, threads) -> None:  # type: ignore[no-untyped-def]
    model, feeds = _block(case, c)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    program = compiled._executable.program
    assert _in_place(program) == in_place
    matches_reference(compiled, model, feeds)


@pytest.mark.parametrize("threads", [1, 2])
def test_two_k_blocks_accumulate_over_the_residual(threads) -> None:  # type: ignore[no-untyped-def]
    """K = 400 > KC: the first K block starts from the residual in C, the second from the
    first's partial sums; bias and ReLU after the last."""
    assert 400 > linear.CONV_KC
    b = ModelBuilder()
    x0 = b.input("x", (1, 400, 5, 6))
    r0 = b.input("r", (1, 24, 5, 6))
    x, r = b.add(ReLU, [x0]).output, b.add(ReLU, [r0]).output
    y = _conv(b, x, 400, 24, 1)
    b.output(b.add(ReLU, [b.add(Eltwise, [y, r], operation="sum").output]).output, "y")
    model, feeds = b.finish(), {"x": rand(1, 400, 5, 6), "r": rand(1, 24, 5, 6, seed=5)}
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert _in_place(compiled._executable.program)
    matches_reference(compiled, model, feeds)
