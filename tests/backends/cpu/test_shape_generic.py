"""Kernels generic in a size taken at run time: one compiled kernel serves the layers that
differ in that size only (`gemm.runtime_k`, `pointwise.runtime_leading`)."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import gemm
from irforge.backends.cpu.codegen.pointwise import PointwiseSpec, broadcast_strides, runtime_leading
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Concat, Convolution, Eltwise, ReLU
from tests.backends.cpu.conftest import use_avx512_tile
from tests.helpers import rand


@pytest.mark.parametrize("pack_plane_max,small_blocks,kernels", [(0, False, 6), (196, False, 5), (196, True, 6)])
@pytest.mark.parametrize("tile", ["host", "avx512"])
def test_gemm_generic_in_k_serves_layers_of_any_k(tile, pack_plane_max, small_blocks, kernels, cache_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """1x1 layers that differ in their input channels only share one GEMM kernel taking K at
    run time (`gemm.runtime_k`): 1, 2 and 3 K blocks (KC = 384), and a stride-2 layer whose
    im2col panels are K rows deep (B's panel stride is K * NR). Also with AVX-512's 12x32
    tile (LLVM legalises its 32-lane vectors on an AVX2 host; no object cache: a kernel's
    key does not hold the tile). With the stride-1 layers' B packed first
    (`linear.PACK_PLANE_MAX`, 10x10 planes), one packing kernel (generic in K) serves all
    four and their GEMMs share the panel GEMMs of the stride-2 layers; with the blocks of B
    copied inside the GEMM instead (`linear.SMALL_PLANE_BLOCKS`), the four share two such
    GEMMs (one K block, more) and no packing kernel."""
    from irforge.backends.cpu.ops import linear as linear_ops

    monkeypatch.setattr(linear_ops, "PACK_PLANE_MAX", pack_plane_max)
    monkeypatch.setattr(linear_ops, "SMALL_PLANE_BLOCKS", small_blocks)
    cache_dir = cache_dir / f"pack-{pack_plane_max}-{small_blocks}"  # the program cache's key does not hold the knobs
    if tile == "avx512":
        use_avx512_tile(monkeypatch)
        cache_dir = False
    b = ModelBuilder()
    feeds = {}
    for index, (c, stride) in enumerate([(8, 1), (400, 1), (800, 1), (24, 1), (400, 2), (40, 2)]):
        size = 10 * stride
        x = b.input(f"x{index}", (1, c, size, size))
        feeds[f"x{index}"] = rand(1, c, size, size, seed=index)
        w, bias = b.constant(rand(16, c, 1, 1, seed=10 + index)), b.constant(rand(16, seed=20 + index))
        y = b.add(Convolution, [x, w, bias], strides=[stride, stride]).output
        b.output(b.add(ReLU, [y]).output, f"y{index}")
    model = b.finish()
    want = run(model, feeds)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
        try:
            got = compiled(feeds)
            # in place: per B layout (rows, panels) one GEMM of one K block and one of more, two im2col
            assert compiled.stats.kernels == kernels
        finally:
            compiled.close()
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=1e-4)


def test_runtime_k_keeps_k_where_the_code_depends_on_it() -> None:
    """K stays a constant of the kernel where it is part of its addressing: strided A (an FC's
    rows are K apart), batch levels, a shifted B."""
    panel = gemm.GemmSpec(m=16, n=49, k=300, a_panel=True, ldb=49, ldc=49)
    spec, sizes = gemm.runtime_k(panel)
    assert (spec.k, spec.k_arg, spec.one_k_block, sizes) == (0, True, True, [300])
    assert gemm.runtime_k(gemm.GemmSpec(m=16, n=49, k=385, a_panel=True, ldb=49, ldc=49))[0].one_k_block is False
    for fixed in (
        gemm.GemmSpec(m=1, n=1000, k=2048, a_panel=False, a_rs=2048, a_cs=1, b_panel=True),
        gemm.GemmSpec(m=16, n=49, k=300, a_panel=True, ldb=49, ldc=49, batches=(gemm.Batch(2, 0, 300 * 49, 16 * 49),)),
    ):
        assert gemm.runtime_k(fixed) == (fixed, [])



def test_pointwise_generic_in_the_first_axis(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """ReLU over any element count (one axis: the chunk count is a run-time value too) and a
    per-channel product over any channel count each share one kernel; numbers as the
    reference interpreter's, on 1 and 2 threads (counts that split unevenly)."""
    b = ModelBuilder()
    feeds = {}
    for index, channels in enumerate([3, 64, 5, 2]):
        shape = (1, channels, 7, 600 if index == 1 else 9)  # planes of 63 and 4200 (> CHUNK: 2 chunks)
        x = b.input(f"x{index}", shape)
        feeds[f"x{index}"] = rand(*shape, seed=index)
        scale = b.constant(rand(1, channels, 1, 1, seed=10 + index))
        y = b.add(Eltwise, [b.add(ReLU, [x]).output, scale], operation="mul").output
        b.output(y, f"y{index}")
    model = b.finish()
    want = run(model, feeds)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
        try:
            got = compiled(feeds)
            assert compiled.stats.kernels == 3  # ReLU; the products over planes of 63 and of 4200
        finally:
            compiled.close()
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=1e-6)


def test_runtime_leading_collapses_first() -> None:
    """The kernel's key holds the collapsed shape with the first axis's size 0, the size
    goes to the extra slot: a contiguous tensor is one axis of all its elements."""
    shape = (1, 96, 56, 56)
    spec, sizes = runtime_leading(PointwiseSpec(shape, (broadcast_strides(shape, shape),), "relu", (0.0,)))
    assert (spec.shape, spec.strides, spec.leading_arg, sizes) == ((0,), ((1,),), True, [96 * 56 * 56])
    spec, sizes = runtime_leading(PointwiseSpec(shape, (broadcast_strides(shape, shape), broadcast_strides((1, 96, 1, 1), shape)), "bin.mul"))
    assert (spec.shape, spec.strides, sizes) == ((0, 3136), ((3136, 1), (1, 0)), [96])


def test_concats_of_contiguous_blocks_share_one_kernel(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """A dense block's concats (each of all the features so far, a growing list) are one
    table-driven kernel (`codegen.blocks`), whose threads split every block; a concat at
    batch 2 (blocks that are not contiguous) keeps its own copy kernel."""
    b = ModelBuilder()
    feats = [b.input("x", (1, 3, 5, 7))]
    feeds = {"x": rand(1, 3, 5, 7)}
    for index in range(3):
        new = b.input(f"n{index}", (1, 2 + index, 5, 7))
        feeds[f"n{index}"] = rand(1, 2 + index, 5, 7, seed=index + 1)
        feats.append(new)
        b.output(b.add(Concat, feats, axis=1).output, f"y{index}")
    pair = [b.input(f"p{i}", (2, 3 + i, 4)) for i in range(2)]
    feeds.update({f"p{i}": rand(2, 3 + i, 4, seed=9 + i) for i in range(2)})
    b.output(b.add(Concat, pair, axis=1).output, "z")
    model = b.finish()
    want = run(model, feeds)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
        try:
            got = compiled(feeds)
            assert compiled.stats.kernels == 2
        finally:
            compiled.close()
        for name in want:
            np.testing.assert_array_equal(got[name], want[name])
