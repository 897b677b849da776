"""B packed per block inside the GEMM (`GemmSpec.b_blocks`, `linear.PACK_BLOCKS_OVER`): 1x1
convolutions over planes too large to pack whole whose rows are a multiple of 4 KiB apart or
unaligned, and a MatMul of two inputs with such rows, against the reference, 1 and 2 threads,
the arena NaN-filled. The size floors are lowered so that small planes take the path: several
NC blocks and K blocks, a masked tail panel, a column tail, an M tail, bias, residual and
ReLU in the epilogue."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import gemm
from irforge.backends.cpu.ops import linear
from irforge.dialects.nn import Convolution, Eltwise, MatMul, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ModelBuilder, rand


@pytest.fixture
def block_copies(monkeypatch):  # type: ignore[no-untyped-def]
    """The list of block copies emitted (one entry each)."""
    calls = []
    original = gemm._pack_block

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        original(*args, **kwargs)

    monkeypatch.setattr(gemm, "_pack_block", counted)
    return calls


@pytest.fixture
def packed_blocks(monkeypatch, block_copies):  # type: ignore[no-untyped-def]
    """Planes over 300 positions pack per block (unaligned ones: where the knob is under the
    whole copy's cap); returns the list of block copies emitted."""
    monkeypatch.setattr(linear, "PACK_BLOCKS_OVER", 300)
    return block_copies


def test_large_aliased_plane_packs_per_block(block_copies) -> None:  # type: ignore[no-untyped-def]
    """Default knobs: 160 x 160 (25600 positions, rows 100 KiB apart) is over the whole copy's cap."""
    b = ModelBuilder()
    x = b.input("x", (1, 64, 160, 160))
    b.output(b.add(Convolution, [x, b.constant(rand(40, 64, 1, 1, seed=1))], group=1).output, "y")
    model = b.finish()
    compiled = compile_model(model, threads=2, cache_dir=False)
    assert block_copies
    matches_reference(compiled, model, {"x": rand(1, 64, 160, 160)})


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,h,w,o,blocks", [
    (400, 32, 32, 40, True),  # 1024 positions (rows 4 KiB apart): 2 K blocks, an M tail
    (64, 19, 19, 33, True),  # 361: a masked tail panel
    (72, 17, 17, 26, False),  # 289: not over the floor (packed whole)
    (96, 17, 19, 50, True),  # 323: a 3-column tail
    (64, 24, 24, 40, False),  # 576: whole vectors, no aliasing
])
def test_plane_packed_per_block(packed_blocks, c, h, w, o, blocks, threads) -> None:  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", (1, c, h, w))
    r = b.input("r", (1, o, h, w))
    conv = b.add(Convolution, [x, b.constant(rand(o, c, 1, 1, seed=1)), b.constant(rand(o, seed=2))], group=1).output
    b.output(b.add(ReLU, [b.add(Eltwise, [conv, r], operation="sum").output]).output, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert bool(packed_blocks) == blocks
    matches_reference(compiled, model, {"x": rand(1, c, h, w), "r": rand(1, o, h, w, seed=4)})


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("a_shape,b_shape,blocks", [
    ((37, 1100), (1100, 1024), True),  # 3 K blocks of 367 (`fc_kc`)
    ((5, 70), (70, 2048), True),
    ((37, 96), (96, 1000), False),  # rows 4000 bytes apart
])
def test_matmul_rows_packed_per_block(packed_blocks, monkeypatch, a_shape, b_shape, blocks, threads) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "PACK_UNALIGNED_MAX", 300)  # B rows over it: too wide to copy whole
    b = ModelBuilder()
    out = b.add(MatMul, [b.input("a", a_shape), b.input("b", b_shape)]).output
    b.output(out, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert bool(packed_blocks) == blocks
    matches_reference(compiled, model, {"a": rand(*a_shape), "b": rand(*b_shape, seed=3)}, atol=1e-4)  # K up to 1100
