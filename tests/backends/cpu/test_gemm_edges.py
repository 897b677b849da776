"""The GEMM core's edge tiles and the shifted (implicit-GEMM) path's prefetch and stores:
column accumulators split into interleaved copies (a tail of 1-4 columns alone is a chain
of dependent FMAs otherwise), one host register per column accumulator, one prefetch per
cache line of A and per padded row of B in a shifted tile, plain stores of C vectors inside
one output row. Against the reference interpreter, at AVX2's 6x16 tile and AVX-512's 12x32."""

from __future__ import annotations

import numpy as np
import pytest
from llvmlite import ir

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import gemm
from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.irutil import KernelBuilder
from irforge.backends.cpu.ops import shifted
from irforge.backends.cpu.ops.linear import geometry
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Convolution, Eltwise, ReLU
from tests.backends.cpu.conftest import matches_reference, one_op_model, use_avx512_tile
from tests.helpers import rand


@pytest.fixture(params=["avx2", "avx512"])
def tile(request, monkeypatch):  # type: ignore[no-untyped-def]
    """The host's tile, or AVX-512's 12x32 set whatever the host (LLVM legalises the wider
    vectors here)."""
    if request.param == "avx512":
        use_avx512_tile(monkeypatch)
    return request.param


def _check(model, feeds, threads: int = 2) -> None:  # type: ignore[no-untyped-def]
    compiled = compile_model(model, threads=threads, cache_dir=False)
    matches_reference(compiled, model, feeds)


def test_column_copies_fill_the_fma_pipes() -> None:
    """A tail of columns alone gets up to 8 registers of copies; a full tile's 12 host
    vectors need none."""
    assert gemm.column_copies(0, 1) == 8
    assert gemm.column_copies(0, 2) == 4
    assert gemm.column_copies(0, 4) == 2
    assert gemm.column_copies(12, 1) == 1
    assert gemm.column_copies(24, 4) == 1
    assert gemm.column_copies(8, 1) == 2
    assert gemm.column_copies(5, 0) == 1


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape,props", [
    ((1, 40, 7, 7), (70, 40, 1, 1), {}),  # 49 columns: 3 x 16 + 1 (AVX2), 32 + 16 + 1
    ((1, 20, 14, 14), (30, 20, 1, 1), {}),  # 196: 12 x 16 + 4, 6 x 32 + 4
    ((1, 50, 13, 13), (40, 50, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # 2 K blocks, 49
    ((1, 400, 2, 1), (9, 400, 1, 1), {}),  # 2 columns, K over one block (the copies start from C)
])
def test_column_tail_copies(x_shape, w_shape, props, threads, tile) -> None:  # type: ignore[no-untyped-def]
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    g = geometry(next(op for op in model.module.walk() if isinstance(op, Convolution)))
    assert 0 < g.p % gemm.NR % 16 <= 4
    assert gemm.column_lanes() == (16 if tile == "avx512" else gemm.host_lanes())
    _check(model, {"x0": rand(*x_shape)}, threads)


def _stem_spec() -> gemm.GemmSpec:
    g = ConvGeometry(1, 3, 40, 40, 7, 7, 20, 20, (2, 2), (1, 1), (3, 3))
    planes = shifted.Planes(g)
    offsets = planes.offsets()
    return gemm.GemmSpec(m=8, n=(g.oh - 1) * planes.row + g.ow, k=147, a_panel=True, ldc=g.p, kc=147,
                         shifted=gemm.Shifted(offsets, planes.channel, planes.row, g.ow, g.oh))


def test_shifted_taps_prefetch_each_line_of_a_and_each_row_of_b_once() -> None:
    """The 7x7 stride-2 stem: 49 taps of A rows (MR floats each) are ceil(49 MR / 16) cache
    lines, and read 14 padded rows of the four phase planes (4 + 4 + 3 + 3)."""
    spec = _stem_spec()
    kb = KernelBuilder(ir.Module("t"), "k")
    p = kb.slot(0)
    steps = gemm._k_rows(kb, spec, ir.Constant(ir.IntType(64), 0), p, p)
    assert len(steps) == 49
    assert sum(len(s[2]) for s in steps) == 14
    assert sum(len(s[3]) for s in steps) == -(-49 * gemm.MR // gemm.LINE_FLOATS)


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("size", [64, 61])
def test_shifted_stem_stores(size, residual, tile) -> None:  # type: ignore[no-untyped-def]
    """A 7x7 stride-2 window on phase planes (rows of 32 or 31 outputs: vectors inside one
    row stored plainly, those across two rows masked), with a residual and ReLU."""
    out = (size + 6 - 7) // 2 + 1
    b = ModelBuilder()
    x = b.input("x", (1, 3, size, size))
    y = b.add(Convolution, [x, b.constant(rand(13, 3, 7, 7, seed=1)), b.constant(rand(13, seed=2))],
              strides=[2, 2], pads_begin=[3, 3], pads_end=[3, 3]).output
    feeds = {"x": rand(1, 3, size, size)}
    if residual:
        r = b.input("r", (1, 13, out, out))
        feeds["r"] = rand(1, 13, out, out, seed=3)
        y = b.add(Eltwise, [y, r], operation="sum").output
    b.output(b.add(ReLU, [y]).output, "y")
    model = b.finish()
    g = geometry(next(op for op in model.module.walk() if isinstance(op, Convolution)))
    assert shifted.shifted_pays(g)
    _check(model, feeds)


@pytest.mark.parametrize("threads", [1, 2])
def test_strided_window_of_14_columns_on_phase_planes(threads, tile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A 3x3 stride-2 window with 14 output columns (rows of 15 on the planes: a C vector
    spans at most two output rows) runs on the planes when they start at 8 columns (session
    5's `MIN_STRIDED_COLUMNS`; since session 7 such windows take im2col by default), not
    im2col, and matches; one of 10 columns (rows widened to 15: 33% pad columns) keeps im2col."""
    model = one_op_model(Convolution, [rand(1, 24, 28, 28)], [rand(20, 24, 3, 3, seed=1), rand(20, seed=2)],
                         strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
    g = ConvGeometry(1, 24, 28, 28, 3, 3, 14, 14, (2, 2), (1, 1), (1, 1))
    assert not shifted.shifted_pays(g)  # the default: im2col through the stack row
    monkeypatch.setattr(shifted, "MIN_STRIDED_COLUMNS", 8)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    try:
        assert [p.tag for p in compiled._executable.program.phases][-1] == "conv3x3"
        assert "im2col" not in [p.tag for p in compiled._executable.program.phases]
    finally:
        compiled.close()
    _check(model, {"x0": rand(1, 24, 28, 28)}, threads)
    narrow = ConvGeometry(1, 3, 17, 19, 3, 3, 9, 10, (2, 2), (1, 1), (1, 1))
    assert shifted.Planes(narrow).row == 15 and not shifted.shifted_pays(narrow)


SHORT_ROW_CASES = [
    # grouped windows on planes with rows shorter than a vector: a C vector spans 2-5 rows
    # (rows of the window's own length, or rounded up to a divisor of the vector: `aligned`)
    ((1, 64, 7, 7), (64, 2, 3, 3), dict(group=32, pads_begin=[1, 1], pads_end=[1, 1]), (8, 8)),  # ResNeXt's 7x7
    ((1, 48, 14, 14), (48, 4, 3, 3), dict(group=12, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]), (8, 8)),  # 14 -> 7
    ((1, 32, 14, 14), (32, 4, 3, 3), dict(group=8, pads_begin=[1, 1], pads_end=[1, 1]), (15, 16)),
    ((2, 12, 5, 6), (18, 4, 5, 5), dict(group=3, pads_begin=[2, 2], pads_end=[2, 2]), (8, 8)),  # 2 samples
    ((1, 16, 4, 4), (16, 8, 3, 3), dict(group=2, pads_begin=[1, 1], pads_end=[1, 1]), (5, 8)),
    ((1, 16, 3, 3), (16, 8, 3, 3), dict(group=2, pads_begin=[1, 1], pads_end=[1, 1]), (4, 4)),
]


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("x_shape,w_shape,props,rows", SHORT_ROW_CASES)
def test_grouped_short_rows(x_shape, w_shape, props, rows, residual, aligned, tile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Grouped windows on small planes take rows only as long as the window needs (8 for a
    7x7 plane, not a vector's 16): each C vector's stores and residual loads split over up
    to five output rows, pad columns dropped, rows past the last skipped."""
    monkeypatch.setattr(shifted, "GROUPED_ALIGNED_ROWS", aligned)
    row = rows[aligned]
    b = ModelBuilder()
    x = b.input("x", x_shape)
    y = b.add(Convolution, [x, b.constant(rand(*w_shape, seed=1)), b.constant(rand(w_shape[0], seed=2))], **props).output
    feeds = {"x": rand(*x_shape)}
    conv_model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    g = geometry(next(op for op in conv_model.module.walk() if isinstance(op, Convolution)))
    assert shifted.Planes(g).row == row and shifted.shifted_pays(g)
    if residual:
        r = b.input("r", (g.n, w_shape[0], g.oh, g.ow))
        feeds["r"] = rand(g.n, w_shape[0], g.oh, g.ow, seed=3)
        y = b.add(Eltwise, [y, r], operation="sum").output
    b.output(b.add(ReLU, [y]).output, "y")
    model = b.finish()
    compiled = compile_model(model, threads=2, cache_dir=False)
    try:
        assert "im2col" not in [p.tag for p in compiled._executable.program.phases]
    finally:
        compiled.close()
    _check(model, feeds)


BALANCED_CASES = [
    # grouped windows whose rows per group are not a multiple of MR: equally full M blocks
    ((1, 64, 12, 12), (64, 8, 3, 3), dict(group=8, pads_begin=[1, 1], pads_end=[1, 1])),  # 8 rows: 4 + 4 (AVX2)
    ((1, 64, 13, 13), (64, 8, 3, 3), dict(group=8, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # stride 2
    ((1, 28, 9, 9), (140, 4, 3, 3), dict(group=7, pads_begin=[1, 1], pads_end=[1, 1])),  # 20 rows: 5 x 4 (AVX-512: 10 + 10)
    ((2, 28, 6, 7), (98, 4, 3, 3), dict(group=7, pads_begin=[1, 1], pads_end=[1, 1])),  # 14 rows: 5 + 5 + 4, 2 samples
    ((1, 18, 7, 7), (18, 9, 3, 3), dict(group=2, pads_begin=[1, 1], pads_end=[1, 1])),  # 9 rows: 5 + 4
]


@pytest.mark.parametrize("residual", [False, True])
@pytest.mark.parametrize("x_shape,w_shape,props", BALANCED_CASES)
def test_grouped_balanced_row_blocks(x_shape, w_shape, props, residual, tile) -> None:  # type: ignore[no-untyped-def]
    """A grouped layer's rows per group in equally full M blocks (`gemm.BALANCED_ROWS`): A
    packed with `block_rows` rows per MR-lane block, tiles `block_rows` rows apart, the last
    block short where the rows do not divide; 1 and 2 threads, the arena NaN-filled."""
    og = w_shape[0] // props["group"]
    rows = gemm.balanced_rows(og)
    assert (rows > 0) == (og > gemm.MR)  # (one block at most: as it was)
    b = ModelBuilder()
    x = b.input("x", x_shape)
    y = b.add(Convolution, [x, b.constant(rand(*w_shape, seed=1)), b.constant(rand(w_shape[0], seed=2))], **props).output
    feeds = {"x": rand(*x_shape)}
    if residual:
        conv_model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
        g = geometry(next(op for op in conv_model.module.walk() if isinstance(op, Convolution)))
        r = b.input("r", (g.n, w_shape[0], g.oh, g.ow))
        feeds["r"] = rand(g.n, w_shape[0], g.oh, g.ow, seed=3)
        y = b.add(Eltwise, [y, r], operation="sum").output
    b.output(b.add(ReLU, [y]).output, "y")
    model = b.finish()
    for threads in (1, 2):
        _check(model, feeds, threads)


def test_pack_a_block_rows() -> None:
    """`pack_a` with `block_rows`: block j's first lanes hold rows j * block_rows on, the rest
    and the short last block's missing rows are zeros; K blocks of kc as without."""
    w = np.arange(1, 8 * 5 + 1, dtype=np.float32).reshape(8, 5)
    packed = gemm.pack_a(w, 8, 5, kc=3, block_rows=3)
    blocks = 3
    first = packed[:blocks * 3 * gemm.MR].reshape(blocks, 3, gemm.MR)  # K block 0: [block][k][lane]
    for j in range(blocks):
        rows = w[j * 3:(j + 1) * 3, :3]
        np.testing.assert_array_equal(first[j, :, :len(rows)], rows.T)
        assert not first[j, :, len(rows):].any()


def _run_gemm(spec: gemm.GemmSpec, a, b, c, bias, res, threads: int) -> None:  # type: ignore[no-untyped-def]
    """Compile `spec` alone and call it on numpy buffers, `threads` thread ids in turn."""
    import ctypes

    from irforge.backends.cpu.jit import Jit

    jit = Jit(None)
    module = jit.module("kgemm_tail")
    gemm.gemm_kernel(module, spec, "kgemm_tail")
    jit.add_all([module])
    jit.finalize()
    fn = ctypes.CFUNCTYPE(None, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64, ctypes.c_int64)(jit.address("kgemm_tail"))
    slots = (ctypes.c_void_p * 5)(*(x.ctypes.data for x in (a, b, c, bias, res)))
    for t in range(threads):
        fn(slots, t, threads)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m,n,k", [
    (20, 49, 40),  # 49 columns: the column accumulators' lanes follow the short block
    (21, 15, 400),  # 15 columns (masked vectors), 2 K blocks: C loaded between them
    (26, 196, 24),  # 196 columns, split between threads by panels
])
def test_short_last_block_runs_the_full_micro_kernel(m, n, k, threads, tile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A GEMM whose last M block is short runs it with the MR-row micro-kernel (forced here
    for small M): rows past M are computed from A's zero padding and never stored (C's rows
    after M keep their canary), and C, the residual and the row bias are read only inside
    their M rows; bias, residual and ReLU as in ResNet's 1x1 layers."""
    monkeypatch.setattr(gemm, "TAIL_ROWS_WASTE", 1.0)
    spec = gemm.GemmSpec(m=m, n=n, k=k, a_panel=True, ldb=n, ldc=n, bias="row",
                         epilogue=gemm.Epilogue(residual=True, activation="relu"))
    assert m % gemm.MR and gemm.merges_tail_rows(spec)
    assert not gemm.merges_tail_rows(gemm.GemmSpec(m=m, n=n, k=k, a_panel=True, batches=(gemm.Batch(2, 0, 0, 0),)))
    weights, x = rand(m, k, seed=1), rand(k, n, seed=2)
    bias, res = rand(m, seed=3), rand(m, n, seed=4)
    c = np.full((m + gemm.MR, n), 7.0, np.float32)  # rows past M: a canary
    _run_gemm(spec, gemm.pack_a(weights, m, k), x, c, bias, res, threads)
    want = np.maximum(weights.astype(np.float64) @ x + bias[:, None] + res, 0)
    np.testing.assert_allclose(c[:m], want, rtol=1e-4, atol=1e-4)
    assert (c[m:] == 7.0).all()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m", [13, 20])
def test_shifted_short_last_block_runs_the_full_micro_kernel(m, threads, tile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The same merge for a shifted B (a stride-1 3x3 window on its padded plane, as the
    stem's 7x7 takes it at M = 64): rows past M are computed and never stored (C's canary
    rows stay), C's vectors across two output rows and the residual read inside M rows."""
    monkeypatch.setattr(gemm, "TAIL_ROWS_WASTE", 1.0)
    c_in, size = 5, 17
    g = ConvGeometry(1, c_in, size, size, 3, 3, size, size, (1, 1), (1, 1), (1, 1))
    planes = shifted.Planes(g)
    spec = gemm.GemmSpec(m=m, n=(g.oh - 1) * planes.row + g.ow, k=c_in * 9, a_panel=True, ldc=g.p, bias="row",
                         epilogue=gemm.Epilogue(residual=True, activation="relu"), kc=shifted.SHIFTED_KC // 9 * 9,
                         shifted=gemm.Shifted(planes.offsets(), planes.channel, planes.row, g.ow, g.oh))
    assert m % gemm.MR and gemm.merges_tail_rows(spec)
    x, weights = rand(c_in, size, size, seed=1), rand(m, c_in, 3, 3, seed=2)
    bias, res = rand(m, seed=3), rand(m, g.p, seed=4)
    padded = np.zeros(c_in * planes.channel + planes.row + gemm.NR, np.float32)
    view = padded[:c_in * planes.channel].reshape(c_in, planes.rows, planes.row)
    view[:, 1:size + 1, 1:size + 1] = x
    c = np.full((m + gemm.MR, g.p), 7.0, np.float32)  # rows past M: a canary
    _run_gemm(spec, gemm.pack_a(weights.reshape(m, -1), m, c_in * 9, spec.kc), padded, c, bias, res, threads)
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    conv = sum(np.einsum("oc,cyx->oyx", weights[:, :, ky, kx], xp[:, ky:ky + size, kx:kx + size]) for ky in range(3) for kx in range(3))
    want = np.maximum(conv.reshape(m, -1) + bias[:, None] + res, 0)
    np.testing.assert_allclose(c[:m], want, rtol=1e-4, atol=1e-4)
    assert (c[m:] == 7.0).all()


GAP_CASES = [
    # (input, weights, attributes, pad columns per plane row d): C vectors over a row's end,
    # its d pad columns and the next row's start take two plain half-vector stores (d <= 8)
    ((1, 72, 30, 30), (13, 72, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]), 1),  # 2 K blocks
    ((1, 8, 20, 20), (10, 8, 5, 5), dict(pads_begin=[2, 2], pads_end=[2, 2]), 2),
    ((1, 6, 24, 24), (7, 6, 3, 3), dict(dilations=[4, 4], pads_begin=[4, 4], pads_end=[4, 4]), 4),
    ((1, 6, 24, 24), (7, 6, 3, 3), dict(dilations=[8, 8], pads_begin=[8, 8], pads_end=[8, 8]), 8),
    ((1, 6, 24, 24), (7, 6, 3, 3), dict(dilations=[9, 9], pads_begin=[9, 9], pads_end=[9, 9]), 9),  # masked
]


@pytest.mark.parametrize("threads", [2])
@pytest.mark.parametrize("x_shape,w_shape,props,gap", GAP_CASES)
def test_shifted_gap_stores(x_shape, w_shape, props, gap, threads, tile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`SHIFTED_GAP_STORES`: a vector holding a whole gap of pad columns is stored closed up
    (its outputs before the gap from lane 0, those after it shifted down by d) as two
    overlapping plain stores; with a residual and ReLU, C reloaded between K blocks, the
    arena NaN-filled. Vectors with a gap wider than half a vector keep the masked stores."""
    monkeypatch.setattr(shifted, "MAX_WASTE", 0.5)  # the dilated planes' wide pads
    b = ModelBuilder()
    x = b.input("x", x_shape)
    conv = b.add(Convolution, [x, b.constant(rand(*w_shape, seed=1)), b.constant(rand(w_shape[0], seed=2))], **props)
    g = geometry(conv)
    planes = shifted.Planes(g)
    assert shifted.shifted_pays(g) and planes.row - g.ow == gap
    assert gemm.gap_pays(gemm.Shifted((), 0, planes.row, g.ow, g.oh)) == (gap <= 8)
    r = b.input("r", (1, w_shape[0], g.oh, g.ow))
    b.output(b.add(ReLU, [b.add(Eltwise, [conv.output, r], operation="sum").output]).output, "y")
    _check(b.finish(), {"x": rand(*x_shape), "r": rand(1, w_shape[0], g.oh, g.ow, seed=3)}, threads)


@pytest.mark.parametrize("residual", [False, True])
def test_plain_tiles_prefetch_the_next_panels_c_and_residual(residual, tile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`NEXT_TILE_PREFETCH`: a whole tile of a 1x1 layer's GEMM (packed A) prefetches the
    next panel's C rows, and its residual rows when it has one (one line per row and vector:
    MR * NV each); the masked tail tile, whose next panel does not exist, and a shifted B's
    tiles do not; the GEMM still matches with them."""
    spec = gemm.GemmSpec(m=2 * gemm.MR, n=3 * gemm.NR + 5, k=24, a_panel=True, ldb=3 * gemm.NR + 5, ldc=3 * gemm.NR + 5,
                         bias="row", epilogue=gemm.Epilogue(residual=residual, activation="relu"))

    def prefetches(spec: gemm.GemmSpec, masked: bool) -> int:
        module = ir.Module("t")
        gemm.micro_kernel(module, spec, "k", gemm.MR, masked)
        return str(module).count("call void @\"llvm.prefetch")

    for masked in (False, True):
        monkeypatch.setattr(gemm, "NEXT_TILE_PREFETCH", False)
        before = prefetches(spec, masked)
        monkeypatch.setattr(gemm, "NEXT_TILE_PREFETCH", True)
        assert prefetches(spec, masked) - before == (0 if masked else gemm.MR * gemm.NV * (1 + residual))
    assert not gemm.next_tile_prefetches(_stem_spec())
    m, n, k = spec.m, spec.n, spec.k
    weights, x, bias, res = rand(m, k, seed=1), rand(k, n, seed=2), rand(m, seed=3), rand(m, n, seed=4)
    c = np.full((m, n), np.nan, np.float32)
    _run_gemm(spec, gemm.pack_a(weights, m, k), x, c, bias, res, 2)
    want = np.maximum(weights.astype(np.float64) @ x + bias[:, None] + (res if residual else 0), 0)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("unroll", [2, 3])
@pytest.mark.parametrize("m,n", [(2 * 6, 2 * 16 + 3), (13, 16 + 9)])
def test_k_unroll_leaves_the_remainder_to_a_loop_of_one(m, n, unroll, tile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`K_UNROLL`: K blocks of 16, 16 and 8 k steps run `unroll` steps an iteration and the
    1-2 left over in a loop of one step (whose blocks the micro-kernel has); bias, residual
    and ReLU, C NaN-filled, the column tail and the masked vector as above."""
    monkeypatch.setattr(gemm, "K_UNROLL", unroll)
    k, kc = 40, 16
    spec = gemm.GemmSpec(m=m, n=n, k=k, a_panel=True, ldb=n, ldc=n, bias="row", kc=kc,
                         epilogue=gemm.Epilogue(residual=True, activation="relu"))
    module = ir.Module("t")
    gemm.micro_kernel(module, spec, "k", gemm.MR, False)
    assert "kr.body" in str(module)
    weights, x, bias, res = rand(m, k, seed=1), rand(k, n, seed=2), rand(m, seed=3), rand(m, n, seed=4)
    c = np.full((m, n), np.nan, np.float32)
    _run_gemm(spec, gemm.pack_a(weights, m, k, kc), x, c, bias, res, 2)
    want = np.maximum(weights.astype(np.float64) @ x + bias[:, None] + res, 0)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("on", [False, True])
@pytest.mark.parametrize("n", [2 * 16 + 1, 2 * 32 + 1, 16 + 4, 49])
def test_column_tail_unroll(n, on, tile, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`COLUMN_K_UNROLL` / `COLUMNS_K_UNROLL`: a tail tile of column accumulators alone (33
    and 65 columns: one at 16 and 32 lanes; 20: four at 16 lanes) runs 4 (one column) or 2 k
    steps an iteration, the 1-3 left of K blocks of 18, 18 and 5 in a loop of one; a column
    tail beside whole vectors (20 or 49 at 32 lanes) keeps the loop of one. Bias, residual and
    ReLU, C NaN-filled, 2 threads' shares run in turn."""
    if not on:
        monkeypatch.setattr(gemm, "COLUMN_UNROLL_MAX", 0)
        monkeypatch.setattr(gemm, "COLUMNS_K_UNROLL", 1)
    m, k, kc = 2 * gemm.MR + 1, 41, 18
    spec = gemm.GemmSpec(m=m, n=n, k=k, a_panel=True, ldb=n, ldc=n, bias="row", kc=kc,
                         epilogue=gemm.Epilogue(residual=True, activation="relu"))
    module = ir.Module("t")
    gemm.micro_kernel(module, spec, "k", gemm.MR, True)
    columns_alone = gemm.column_tail(spec) > 0 and n % gemm.NR < 16
    assert ("kr.body" in str(module)) == (on and columns_alone)
    weights, x, bias, res = rand(m, k, seed=1), rand(k, n, seed=2), rand(m, seed=3), rand(m, n, seed=4)
    c = np.full((m, n), np.nan, np.float32)
    _run_gemm(spec, gemm.pack_a(weights, m, k, kc), x, c, bias, res, 2)
    want = np.maximum(weights.astype(np.float64) @ x + bias[:, None] + res, 0)
    np.testing.assert_allclose(c, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape", [
    ((1, 43, 7, 7), (70, 43, 1, 1)),  # 49 positions, K = 43: 10 steps of 4 and 3 of one
    ((1, 401, 7, 7), (9, 401, 1, 1)),  # two K blocks (384 + 17): C reloaded, 1 step left
    ((1, 21, 14, 14), (30, 21, 1, 1)),  # 196 positions: 4 columns alone at 16 lanes, 2 steps an iteration
])
def test_column_tail_unroll_in_a_model(x_shape, w_shape, threads, tile) -> None:  # type: ignore[no-untyped-def]
    """The unrolled column tails inside whole 1x1 layers with bias, arena NaN-filled."""
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)])
    _check(model, {"x0": rand(*x_shape)}, threads)
