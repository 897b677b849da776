"""1x1 convolutions over planes whose rows are not whole vectors (33x33: 1089 positions, a
1-column tail panel; 15x15: 225) with B packed first (`linear.packs_unaligned`) against the
reference, with a bias and a residual + ReLU stored in place; 1 and 2 threads, the arena
NaN-filled. Aligned planes (16x16), K under 64 and fewer than 32 outputs stay in place."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import linear
from irforge.dialects.nn import Convolution, Eltwise, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ModelBuilder, rand


def _model(c: int, size: int, o: int):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", (1, c, size, size))
    out = b.add(Convolution, [x, b.constant(rand(o, c, 1, 1, seed=1)), b.constant(rand(o, seed=2))], group=1).output
    r = b.add(ReLU, [b.input("r", (1, o, size, size))]).output  # an arena tensor: stored over in place
    out = b.add(ReLU, [b.add(Eltwise, [r, out], operation="sum").output]).output
    b.output(out, "y")
    return b.finish(), {"x": rand(1, c, size, size), "r": rand(1, o, size, size, seed=4)}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,size,o,packed", [
    (64, 33, 40, True),
    (70, 15, 33, True),
    (64, 16, 40, False),  # rows of whole vectors
    (16, 33, 40, False),  # K under 64
    (64, 33, 20, False),  # under 32 outputs
])
def test_unaligned_plane_packed(c, size, o, packed, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "PACK_UNALIGNED_MAX", 25000)
    monkeypatch.setattr(linear, "PACK_UNALIGNED_LEAST", (32, 64))
    model, feeds = _model(c, size, o)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert ("im2col" in [p.tag for p in compiled._executable.program.phases]) == packed  # the pack_rows phase
    matches_reference(compiled, model, feeds)
