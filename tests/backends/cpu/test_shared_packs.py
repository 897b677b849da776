"""1x1 layers over one input read the B panels the first one's copy made
(`linear.SHARED_PACKS`): Inception's branches (three 1x1 layers on a block's input, one with
a residual + ReLU stored in place over another tensor, a max pool reading the input between
them, the results joined by a Concat in place), on a 15x15 plane (unaligned rows) and a 14x14
one (a small plane), and two MatMuls with one run-time B of aliased rows. Against the
reference with the arena NaN-filled, 1 and 2 threads, AVX2's and AVX-512's panels, on and
off; on, one pack phase per shared input."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import linear
from irforge.dialects.nn import Concat, Convolution, Eltwise, MatMul, Pooling, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ModelBuilder, rand


def _branches(c: int, size: int):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.add(ReLU, [b.input("x", (1, c, size, size))]).output

    def conv(inp, o: int, seed: int):  # type: ignore[no-untyped-def]
        return b.add(Convolution, [inp, b.constant(rand(o, c, 1, 1, seed=seed)), b.constant(rand(o, seed=seed + 1))], group=1).output

    y1 = conv(x, 40, 1)
    pooled = b.add(Pooling, [x], kernel=[3, 3], strides=[1, 1], pads_begin=[1, 1], pads_end=[1, 1], method="max").output
    y2 = conv(pooled, 33, 3)  # another input: its own pack
    r = b.add(ReLU, [b.input("r", (1, 48, size, size))]).output  # an arena tensor stored over in place
    y3 = b.add(ReLU, [b.add(Eltwise, [r, conv(x, 48, 5)], operation="sum").output]).output
    y4 = conv(x, 36, 7)
    b.output(b.add(Concat, [y1, y2, y3, y4], axis=1).output, "y")
    return b.finish(), {"x": rand(1, c, size, size, seed=9), "r": rand(1, 48, size, size, seed=10)}


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,size", [(64, 15), (70, 14)])
def test_branches_share_packs(c, size, threads, shared, panels, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "SHARED_PACKS", shared)
    # planes of <= 196 positions otherwise copy B inside each GEMM (`SMALL_PLANE_BLOCKS`): no pack to share
    monkeypatch.setattr(linear, "SMALL_PLANE_BLOCKS", False)
    model, feeds = _branches(c, size)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    packs = sum("pack_rows" in p.function for p in compiled._executable.program.phases)
    assert packs == (2 if shared else 4)
    matches_reference(compiled, model, feeds)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
def test_matmuls_share_packs(threads, shared, panels, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "SHARED_PACKS", shared)
    b = ModelBuilder()
    rhs = b.add(ReLU, [b.input("b", (64, 1024))]).output
    y1 = b.add(MatMul, [b.input("a1", (7, 64)), rhs]).output
    y2 = b.add(MatMul, [b.input("a2", (5, 64)), rhs]).output
    b.output(y1, "y1")
    b.output(y2, "y2")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    packs = sum("pack_rows" in p.function for p in compiled._executable.program.phases)
    assert packs == (1 if shared else 2)
    matches_reference(compiled, model, {"b": rand(64, 1024), "a1": rand(7, 64, seed=1), "a2": rand(5, 64, seed=2)})


@pytest.mark.parametrize("threads", [1, 2])
def test_small_plane_branches_copy_in_gemm(threads, panels) -> None:  # type: ignore[no-untyped-def]
    """With both knobs on (the defaults) a 14x14 block's 1x1 branches copy B inside their
    GEMMs and make no pack phase; the numbers are the same."""
    model, feeds = _branches(70, 14)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert not any("pack_rows" in p.function for p in compiled._executable.program.phases)
    matches_reference(compiled, model, feeds)


def _bottlenecks(c: int, size: int):  # type: ignore[no-untyped-def]
    """Two residual blocks of 1x1 layers (FCN-ResNet50's dilated stages at 65x65: every block's
    output is stored in place over its input, `fusion.residual_in_place`): the second block's
    1x1 layer reads the same buffer as the first block's, holding the new content."""
    b = ModelBuilder()
    x = b.add(ReLU, [b.input("x", (1, c, size, size))]).output

    def conv(inp, o: int, k: int, seed: int):  # type: ignore[no-untyped-def]
        return b.add(Convolution, [inp, b.constant(rand(o, k, 1, 1, seed=seed)), b.constant(rand(o, seed=seed + 1))], group=1).output

    for seed in (1, 5):
        inner = b.add(ReLU, [conv(x, 40, c, seed)]).output
        x = b.add(ReLU, [b.add(Eltwise, [x, conv(inner, c, 40, seed + 2)], operation="sum").output]).output
    b.output(conv(x, 36, c, 9), "y")
    return b.finish(), {"x": rand(1, c, size, size, seed=11)}


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,size", [(64, 15), (72, 33)])
def test_pack_of_a_buffer_stored_over_in_place(c, size, threads, shared, panels, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A block's output stored over its input in place is packed again: the panels of the
    input's earlier content are not reused (FCN-ResNet50 read 0.99 relative error when they
    were). Unaligned planes over `PACK_PLANE_MAX` positions: every 1x1 layer packs B."""
    monkeypatch.setattr(linear, "SHARED_PACKS", shared)
    model, feeds = _bottlenecks(c, size)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    packs = sum("pack_rows" in p.function for p in compiled._executable.program.phases)
    assert packs == 3  # x, x', x'' (K = 40 layers read in place): none reuses another content's panels
    matches_reference(compiled, model, feeds, atol=1e-3)  # outputs up to ~100
