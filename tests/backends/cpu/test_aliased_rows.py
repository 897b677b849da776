"""B operands whose rows lie a multiple of 4 KiB apart (`linear.PACK_ALIASED`): a 1x1
convolution over a 32x32 plane and a MatMul of two inputs with 1024 columns copy B into
panels first (an "im2col"-tagged pack phase), against the reference, 1 and 2 threads, the
arena NaN-filled. Other strides, K under 64 and batched MatMuls read B in place."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import linear
from irforge.dialects.nn import Convolution, MatMul
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ModelBuilder, rand


def _packs(compiled) -> bool:  # type: ignore[no-untyped-def]
    return "im2col" in [p.tag for p in compiled._executable.program.phases]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,size,o,packed", [
    (64, 32, 40, True),  # 1024 positions: rows 4 KiB apart
    (64, 64, 33, True),  # 4096 positions, a 1-row M tail
    (64, 24, 40, False),  # 576 positions: whole vectors, no aliasing
    (16, 32, 40, False),  # K under 64
])
def test_aliased_plane_packed(monkeypatch, c, size, o, packed, threads) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "PACK_BLOCKS_OVER", None)  # the whole copy (default: per block, test_b_blocks.py)
    b = ModelBuilder()
    x = b.input("x", (1, c, size, size))
    out = b.add(Convolution, [x, b.constant(rand(o, c, 1, 1, seed=1)), b.constant(rand(o, seed=2))], group=1).output
    b.output(out, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert _packs(compiled) == packed
    matches_reference(compiled, model, {"x": rand(1, c, size, size)})


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("a_shape,b_shape,packed", [
    ((37, 96), (96, 1024), True),
    ((5, 70), (70, 2048), True),
    ((37, 96), (96, 1000), False),  # rows 4000 bytes apart
    ((37, 32), (32, 1024), False),  # K under 64
    ((2, 9, 96), (2, 96, 1024), False),  # batched B: read in place
])
def test_aliased_matmul_rows_packed(a_shape, b_shape, packed, threads) -> None:  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    out = b.add(MatMul, [b.input("a", a_shape), b.input("b", b_shape)]).output
    b.output(out, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert _packs(compiled) == packed
    matches_reference(compiled, model, {"a": rand(*a_shape), "b": rand(*b_shape, seed=3)})
