"""Convolution, FullyConnected, MatMul and the fused epilogue on the CPU vs the reference."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen import gemm
from irforge.backends.cpu.codegen.gemm import largest_share, splits_columns
from irforge.backends.cpu.codegen.winograd import MATRICES, transform_weights
from irforge.backends.cpu.ops import linear, shifted
from irforge.backends.cpu.ops.linear import geometry, shifted_pays
from irforge.backends.cpu.ops.winograd import tile_size, winograd_pays
from irforge.builder import ModelBuilder
from irforge.backends.reference import run
from irforge.dialects.nn import Clamp, Convolution, Eltwise, FullyConnected, MatMul, ReLU
from tests.backends.cpu.conftest import check_op, matches_reference, one_op_model, run_cpu, use_avx512_tile
from tests.helpers import rand, winograd_phase_tags

CONV_CASES = [
    # (N, C, H, W), (O, C/g, kh, kw), props
    ((1, 3, 17, 19), (8, 3, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((2, 5, 9, 11), (7, 5, 3, 3), dict(strides=[2, 1], pads_begin=[1, 0], pads_end=[0, 2])),
    ((1, 19, 8, 8), (37, 19, 1, 1), {}),
    ((2, 17, 7, 5), (13, 17, 1, 1), dict(strides=[2, 2])),
    ((1, 6, 8, 9), (9, 2, 3, 3), dict(group=3, dilations=[2, 1], pads_begin=[2, 1], pads_end=[2, 1])),
    ((1, 8, 10, 10), (16, 2, 1, 1), dict(group=4)),
    ((2, 8, 9, 9), (8, 1, 3, 3), dict(group=8, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 24, 17, 35), (24, 1, 3, 3), dict(group=24, pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 5, 13, 13), (5, 1, 5, 5), dict(group=5, dilations=[2, 2], pads_begin=[3, 4], pads_end=[4, 3])),
    ((1, 3, 23, 41), (3, 1, 3, 3), dict(group=3, strides=[2, 2], pads_begin=[0, 1], pads_end=[1, 0])),
    ((1, 2, 15, 38), (2, 1, 5, 5), dict(group=2, strides=[1, 2], dilations=[1, 2], pads_begin=[2, 4], pads_end=[2, 3])),
    ((1, 2, 11, 50), (2, 1, 3, 3), dict(group=2, strides=[3, 3], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 4, 30, 30), (40, 4, 7, 7), dict(strides=[2, 2], pads_begin=[3, 3], pads_end=[3, 3])),
    ((1, 3, 20), (5, 3, 3), dict(pads_begin=[1], pads_end=[2], strides=[2])),
    ((1, 64, 14, 14), (50, 64, 3, 3), dict(pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 300, 4, 4), (20, 300, 1, 1), {}),
    # dilated far past the input (ASPP): bands of output rows with their live kernel rows
    ((2, 8, 14, 14), (6, 8, 3, 3), dict(dilations=[12, 12], pads_begin=[12, 12], pads_end=[12, 12])),
    ((1, 8, 14, 13), (6, 8, 3, 3), dict(dilations=[6, 5], pads_begin=[6, 5], pads_end=[6, 5])),
    ((1, 5, 11, 9), (4, 5, 3, 3), dict(strides=[2, 1], dilations=[5, 4], pads_begin=[5, 4], pads_end=[5, 4])),
    # im2col by output rows (>= 28 of them): rows of 23 and 12 positions start anywhere in a panel
    ((1, 3, 70, 45), (8, 3, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 3, 60, 12), (5, 3, 3, 2), dict(pads_begin=[1, 0], pads_end=[1, 1])),
    ((2, 4, 33, 40), (6, 4, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # threads split the rows
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("x_shape,w_shape,props", CONV_CASES)
def test_convolution(x_shape, w_shape, props, bias, cache_dir) -> None:  # type: ignore[no-untyped-def]
    consts = [rand(*w_shape, seed=1)] + ([rand(w_shape[0], seed=2)] if bias else [])
    check_op(Convolution, [rand(*x_shape)], consts, cache_dir, **props)


SHIFTED_CASES = [
    # stride-1 windows wide enough for the implicit GEMM on a zero-padded copy
    ((1, 70, 24, 30), (64, 70, 3, 5), dict(pads_begin=[1, 2], pads_end=[1, 2])),  # 2 K blocks, 4-row M tail
    ((2, 5, 20, 30), (13, 5, 3, 3), dict(dilations=[1, 2], pads_begin=[0, 2], pads_end=[2, 1])),
    ((1, 3, 12, 80), (9, 3, 5, 5), dict(dilations=[1, 2], pads_begin=[2, 4], pads_end=[2, 4])),
    ((1, 3, 10, 40), (5, 3, 2, 3), {}),
    ((1, 4, 50), (6, 4, 3), dict(pads_begin=[1], pads_end=[1])),
    # strided windows with many taps per phase run on the input's phase planes
    ((1, 3, 20, 80), (8, 3, 7, 7), dict(strides=[2, 2], pads_begin=[3, 3], pads_end=[3, 3])),
    ((2, 4, 9, 70), (6, 4, 5, 5), dict(strides=[1, 2], pads_begin=[2, 2], pads_end=[2, 1])),
    # grouped windows, one GEMM per group (threads take whole groups from 8 groups, one sample)
    ((1, 32, 20, 24), (32, 4, 3, 3), dict(group=8, pads_begin=[1, 1], pads_end=[1, 1])),  # 4-row groups
    ((2, 24, 12, 30), (36, 8, 3, 3), dict(group=3, dilations=[2, 2], pads_begin=[2, 2], pads_end=[2, 2])),  # 12-row groups, batch 2
    ((1, 64, 17, 40), (64, 8, 3, 3), dict(group=8, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # stride 2: phase planes
    ((1, 200, 9, 20), (50, 100, 3, 3), dict(group=2, pads_begin=[1, 1], pads_end=[1, 1])),  # 2 K blocks per group
    ((1, 64, 14, 14), (64, 2, 3, 3), dict(group=32, pads_begin=[1, 1], pads_end=[1, 1])),  # rows widened to a vector
    ((2, 48, 7, 7), (96, 16, 3, 3), dict(group=3, pads_begin=[1, 1], pads_end=[1, 1])),  # rows of 8: 7 columns of 8 computed
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape,props", SHIFTED_CASES)
def test_shifted_convolution(x_shape, w_shape, props, threads, cache_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The implicit GEMM (no im2col): a pad copy and one GEMM phase, equal to the reference
    (1-D windows too: not on the flat im2col here, `shifted.FLAT_IM2COL_MAX`)."""
    monkeypatch.setattr(shifted, "FLAT_IM2COL_MAX", 0)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    conv = next(op for op in model.module.walk() if isinstance(op, Convolution))
    g = geometry(conv)
    assert shifted_pays(g)
    feeds = {"x0": rand(*x_shape)}
    compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
    compiled._executable.arena[:] = np.nan  # what other layers left there: no valid lane may read it
    try:
        got = compiled(feeds)["y0"]
        assert [p.tag for p in compiled._executable.program.phases] == ["", f"conv{g.kh}x{g.kw}"]
    finally:
        compiled.close()
    np.testing.assert_allclose(got, run(model, feeds)["y0"], rtol=1e-4, atol=1e-5)


def _residual_model(x_shape, w_shape, out_shape, act, **props):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", x_shape)
    r = b.input("r", out_shape)
    y = b.add(Convolution, [x, b.constant(rand(*w_shape, seed=1)), b.constant(rand(w_shape[0], seed=2))], **props).output
    y = b.add(Eltwise, [r, y], operation="sum").output
    if act == "relu":
        y = b.add(ReLU, [y]).output
    elif act == "clamp":
        y = b.add(Clamp, [y], min=-0.2, max=0.3).output
    b.output(y, "y")
    return b.finish(), {"x": rand(*x_shape), "r": rand(*out_shape, seed=3)}


def test_shifted_convolution_fuses_residual_and_relu(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Residual reads and output stores skip the pad columns the implicit GEMM computes."""
    model, feeds = _residual_model((2, 20, 25, 33), (30, 20, 3, 3), (2, 30, 25, 33), "relu",
                                   dilations=[2, 2], pads_begin=[2, 2], pads_end=[2, 2])
    for threads in (1, 2):
        np.testing.assert_allclose(run_cpu(model, feeds, cache_dir, threads)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)


WINOGRAD_CASES = [
    # F(4x4, 3x3)
    ((1, 64, 56, 56), 64, dict(pads_begin=[1, 1], pads_end=[1, 1])),
    ((2, 7, 29, 31), 29, dict(pads_begin=[1, 1], pads_end=[1, 1])),  # partial tiles, batch 2
    ((1, 5, 30, 40), 13, {}),  # no padding
    ((1, 400, 28, 28), 20, dict(pads_begin=[0, 2], pads_end=[2, 0])),  # asymmetric pads, 2 K blocks
    ((1, 400, 14, 14), 41, dict(pads_begin=[1, 1], pads_end=[1, 1])),  # 16 tiles: whole vectors, 2 K blocks
    # F(2x2, 3x3)
    ((2, 7, 9, 11), 29, dict(pads_begin=[1, 1], pads_end=[1, 1])),  # odd outputs: partial tiles
    ((1, 5, 14, 40), 13, {}),  # no padding
    ((1, 3, 20, 35), 20, dict(pads_begin=[0, 2], pads_end=[2, 0])),  # asymmetric pads
    ((1, 300, 7, 7), 40, dict(pads_begin=[1, 1], pads_end=[1, 1])),  # 2 K blocks, 16 tiles
    ((1, 20, 14, 14), 10, dict(pads_begin=[1, 1], pads_end=[1, 1])),  # 16 tiles, too few channel pairs for F(4x4)
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,o,props", WINOGRAD_CASES)
def test_winograd_convolution(x_shape, o, props, threads, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """3x3 stride-1 windows: input transform, 16 GEMMs, output transform; equal to the reference."""
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(o, x_shape[1], 3, 3, seed=1), rand(o, seed=2)], **props)
    conv = next(op for op in model.module.walk() if isinstance(op, Convolution))
    g = geometry(conv)
    assert winograd_pays(g) and tile_size(g, o) == (4 if WINOGRAD_CASES.index((x_shape, o, props)) < 5 else 2)
    feeds = {"x0": rand(*x_shape)}
    compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
    compiled._executable.arena[:] = np.nan
    try:
        got = compiled(feeds)["y0"]
        assert [p.tag for p in compiled._executable.program.phases] == winograd_phase_tags()
    finally:
        compiled.close()
    want = run(model, feeds)["y0"]
    # Winograd sums in another order: an output near zero out of terms of size ~|y|max keeps
    # an absolute error of a few ulps of |y|max, not of itself (F(2x2): 2.6e-6 of |y|max at
    # 64 channels; F(4x4), whose transforms scale terms by up to 8 and 1/24: 3e-6 to 7e-6)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("act", ["relu", "clamp", None])
@pytest.mark.parametrize("height", [17, 30])  # F(2x2), F(4x4)
def test_winograd_output_transform_fuses_bias_residual_activation(act, height, cache_dir) -> None:  # type: ignore[no-untyped-def]
    model, feeds = _residual_model((2, 6, height, 33), (10, 6, 3, 3), (2, 10, height, 33), act, pads_begin=[1, 1], pads_end=[1, 1])
    for threads in (1, 2):
        np.testing.assert_allclose(run_cpu(model, feeds, cache_dir, threads)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("m", [2, 4])
def test_winograd_matrices(m) -> None:  # type: ignore[no-untyped-def]
    """U = G g G^T: the transform-domain product then A^T . A gives the direct m x m tile."""
    a = m + 2
    g, d = rand(1, 1, 3, 3, seed=4).astype(np.float64), rand(a, a, seed=5).astype(np.float64)
    u = transform_weights(g, m).reshape(a, a).astype(np.float64)
    bt, _, at = (np.array(x, np.float64) for x in MATRICES[m])
    tile = at @ (u * (bt @ d @ bt.T)) @ at.T
    direct = np.array([[np.sum(d[i:i + 3, j:j + 3] * g[0, 0]) for j in range(m)] for i in range(m)])
    np.testing.assert_allclose(tile, direct, rtol=1e-5)


@pytest.mark.parametrize("m", [2, 4])
def test_winograd_weight_transform_in_chunks(m) -> None:  # type: ignore[no-untyped-def]
    """U of a layer of more (output, input) pairs than one chunk: every pair as G g G^T in
    f64 rounded once to f32 (at most an ulp from it), the chunk boundary included."""
    g = rand(70, 61, 3, 3, seed=6)
    gm = np.array(MATRICES[m][1], np.float64)
    exact = np.einsum("ai,ocij,bj->aboc", gm, g.astype(np.float64), gm).reshape(-1, 70, 61)
    u = transform_weights(g, m)
    assert u.shape == exact.shape and u.dtype == np.float32
    np.testing.assert_array_max_ulp(u, exact.astype(np.float32), maxulp=1)


def test_narrow_windows_keep_im2col() -> None:
    """Stride-1 windows narrower than a vector, strided ones narrower than 15 columns, and 1x3
    stride-2 windows (1.5 taps per phase) keep im2col; wider 3x3 stride-2 windows (2.25)
    take the phase planes."""
    narrow = ConvGeometry(1, 64, 14, 14, 3, 3, 14, 14, (1, 1), (1, 1), (1, 1))
    assert not shifted_pays(narrow)
    assert shifted_pays(ConvGeometry(1, 64, 28, 28, 3, 3, 28, 28, (1, 1), (1, 1), (1, 1)))
    assert shifted_pays(ConvGeometry(1, 64, 56, 56, 3, 3, 28, 28, (2, 2), (1, 1), (1, 1)))
    assert not shifted_pays(ConvGeometry(1, 64, 56, 56, 1, 3, 28, 28, (2, 2), (1, 1), (0, 1)))
    assert not shifted_pays(ConvGeometry(1, 64, 28, 28, 3, 3, 14, 14, (2, 2), (1, 1), (1, 1)))
    assert shifted_pays(ConvGeometry(1, 64, 32, 32, 3, 3, 16, 16, (2, 2), (1, 1), (1, 1)))
    assert not shifted_pays(ConvGeometry(1, 64, 14, 14, 3, 3, 7, 7, (2, 2), (1, 1), (1, 1)))


COLUMN_TAIL_CASES = [
    # the last panel's 1-4 columns past its whole vectors run as column accumulators
    ((1, 40, 7, 7), (70, 40, 1, 1), {}, False),  # 49 = 32 + 16 + 1
    ((1, 20, 14, 14), (30, 20, 1, 1), {}, True),  # 196 = 6 * 32 + 4, with a residual
    ((2, 30, 3, 11), (13, 30, 1, 1), {}, True),  # 33 = 32 + 1, batch 2
    ((1, 50, 13, 13), (40, 50, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]), False),  # 2 K blocks
]


@pytest.mark.parametrize("pack_plane_max", [0, 196])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape,props,residual", COLUMN_TAIL_CASES)
def test_gemm_column_tail(x_shape, w_shape, props, residual, threads, pack_plane_max, cache_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """1x1 layers with B read in place (rows of 49, 196, 33 floats) and packed first
    (`linear.PACK_PLANE_MAX`), and a strided 3x3 on im2col."""
    monkeypatch.setattr(linear, "PACK_PLANE_MAX", pack_plane_max)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    feeds = {"x0": rand(*x_shape)}
    g = geometry(next(op for op in model.module.walk() if isinstance(op, Convolution)))
    assert 0 < g.p % gemm.NR % 16 <= 4
    if residual:
        model, feeds = _residual_model(x_shape, w_shape, (x_shape[0], w_shape[0], g.oh, g.ow), "relu", **props)
    compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
    matches_reference(compiled, model, feeds)


@pytest.mark.parametrize("x_shape,o", [((1, 37), 45), ((3, 300), 1000), ((2, 5, 33), 17), ((13, 64), 32)])
def test_fully_connected(x_shape, o, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(FullyConnected, [rand(*x_shape)], [rand(o, x_shape[-1], seed=1), rand(o, seed=2)], cache_dir)


@pytest.mark.parametrize(
    "a,b,props",
    [((5, 7), (7, 33), {}), ((2, 3, 9, 4), (2, 3, 4, 17), {}), ((4, 6, 5), (5, 6), {}),
     ((5, 8), (8, 3), dict(transpose_a=True, transpose_b=True)), ((7,), (7, 20), {})],
)
def test_matmul_constant_b(a, b, props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    b_shape = tuple(reversed(b)) if props.get("transpose_b") else b
    a_shape = (a[1], a[0]) if props.get("transpose_a") else a
    check_op(MatMul, [rand(*a_shape)], [rand(*b_shape, seed=1)], cache_dir, **props)


@pytest.mark.parametrize("a,b", [((6, 1, 24), (24, 40)), ((4, 3, 5, 24), (1, 24, 40)), ((2, 5, 24), (2, 24, 40))])
def test_matmul_constant_b_is_packed_once_per_matrix(a, b, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """A constant b shared by the batch entries of a (ViT's [197,1,768] x [768,2304]) is packed
    once, not once per entry: the constants hold as many packed matrices as b has."""
    check_op(MatMul, [rand(*a)], [rand(*b, seed=1)], cache_dir)
    model = one_op_model(MatMul, [rand(*a)], [rand(*b, seed=1)])
    compiled = compile_model(model, threads=1, cache_dir=cache_dir)
    matrices = int(np.prod(b[:-2])) if len(b) > 2 else 1
    assert compiled.stats.constant_bytes == matrices * 4 * b[-2] * -(-b[-1] // gemm.NR) * gemm.NR
    compiled.close()


def test_matmul_two_inputs_broadcast(cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(MatMul, [rand(2, 1, 6, 5), rand(3, 5, 18, seed=1)], [], cache_dir)


@pytest.mark.parametrize("act", ["relu", "clamp", None])
def test_conv_residual_activation_fused(act, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """conv -> add(residual) -> act runs as one kernel (2 phases with the im2col) and matches."""
    model, feeds = _residual_model((2, 6, 9, 9), (10, 6, 3, 3), (2, 10, 5, 5), act, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
    np.testing.assert_allclose(run_cpu(model, feeds, cache_dir)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)
    assert compile_model(model, threads=1, cache_dir=cache_dir).stats.phases == 2


@pytest.mark.parametrize(
    ("m", "n", "columns"),
    [(64, 196, True), (96, 196, False), (160, 49, False), (16, 1000, True), (1000, 1, False), (4, 49, True)],
)
def test_gemm_thread_split_picks_the_more_even_side(m, n, columns, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With AVX-512's 12 x 32 tile (set here whatever the host): 196 columns split 96 | 100
    beat 64 rows split 36 | 28; 96 rows split 48 | 48 win back."""
    monkeypatch.setattr(gemm, "MR", 12)
    monkeypatch.setattr(gemm, "NR", 32)
    assert splits_columns(m, n) is columns
    assert largest_share(196, 32) == pytest.approx(100 / 196) and largest_share(64, 12) == pytest.approx(36 / 64)


@pytest.mark.parametrize(("m", "n", "columns"), [(64, 196, True), (96, 100, False), (64, 100, True), (1000, 1, False), (4, 49, True)])
def test_gemm_thread_split_with_the_avx2_tile(m, n, columns, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With AVX2's 6 x 16 tile: 196 columns are 13 panels (>= 8: columns); 100 columns split
    48 | 52 lose to 96 rows' 48 | 48 but beat 64 rows' 30 | 34; one M block splits columns."""
    monkeypatch.setattr(gemm, "MR", 6)
    monkeypatch.setattr(gemm, "NR", 16)
    assert splits_columns(m, n) is columns


@pytest.mark.parametrize("x_shape,w_shape,props,tag", [
    # ASPP's rate 18 on a 14x14 map: only the centre tap reads the input, a direct 1x1 GEMM
    ((1, 16, 14, 14), (8, 16, 3, 3), dict(dilations=[18, 18], pads_begin=[18, 18], pads_end=[18, 18]), "conv1x1"),
    # dead rows only (a 1x3 window remains), bias and residual-free, batch 2
    ((2, 4, 10, 20), (6, 4, 3, 3), dict(dilations=[12, 1], pads_begin=[12, 1], pads_end=[12, 1]), "conv1x3"),
    # grouped, dead columns on one side only (asymmetric pads)
    ((1, 8, 9, 9), (8, 4, 3, 3), dict(group=2, dilations=[1, 10], pads_begin=[1, 20], pads_end=[1, 0]), "conv3x1"),
])
def test_dead_taps_are_cropped(x_shape, w_shape, props, tag, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Kernel rows/columns that read only padding are dropped before the path is chosen."""
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    feeds = {"x0": rand(*x_shape)}
    compiled = compile_model(model, threads=2, cache_dir=cache_dir)
    try:
        got = compiled(feeds)["y0"]
        assert tag in [p.tag for p in compiled._executable.program.phases]
    finally:
        compiled.close()
    np.testing.assert_allclose(got, run(model, feeds)["y0"], rtol=1e-4, atol=1e-5)


DILATED_CASES = [
    # (N, C, H, W), O, props: phase images of equal size, Winograd on them as a batch
    ((1, 32, 14, 14), 24, dict(dilations=[2, 2], pads_begin=[2, 2], pads_end=[2, 2])),  # DeepLab's stage 4: 7x7 phases
    ((2, 5, 16, 24), 7, dict(dilations=[2, 3], pads_begin=[2, 3], pads_end=[2, 3])),  # batch 2, unequal dilations
    ((1, 6, 24, 24), 9, dict(dilations=[3, 3], pads_begin=[0, 0], pads_end=[6, 6])),  # asymmetric pads
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("x_shape,o,props", DILATED_CASES)
def test_dilated_winograd(x_shape, o, props, relu, threads, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Dilated 3x3: phase copy, Winograd (bias and ReLU in its output transform), copy back."""
    b = ModelBuilder()
    x = b.input("x", x_shape)
    y = b.add(Convolution, [x, b.constant(rand(o, x_shape[1], 3, 3, seed=1)), b.constant(rand(o, seed=2))], **props).output
    if relu:
        y = b.add(ReLU, [y]).output
    b.output(y, "y")
    model = b.finish()
    feeds = {"x": rand(*x_shape)}
    compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
    compiled._executable.arena[:] = np.nan
    try:
        got = compiled(feeds)["y"]
        assert [p.tag for p in compiled._executable.program.phases] == ["", *winograd_phase_tags(), ""]
    finally:
        compiled.close()
    np.testing.assert_allclose(got, run(model, feeds)["y"], rtol=1e-4, atol=1e-4)


def test_aspp_rates_run_as_row_bands(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Rates 6 and 12 on a 14x14 map: three bands (im2col + GEMM each) whose GEMMs write their
    rows of the plane in place, the residual and ReLU fused; rate 2 keeps one window."""
    from irforge.backends.cpu.ops.segmented import bands, row_bands_pay

    assert bands(ConvGeometry(1, 8, 14, 14, 3, 3, 14, 14, (1, 1), (12, 12), (12, 12))) == [(0, 2, 1, 2), (2, 12, 1, 1), (12, 14, 0, 1)]
    assert row_bands_pay(ConvGeometry(1, 8, 14, 14, 3, 3, 14, 14, (1, 1), (6, 6), (6, 6)))
    assert not row_bands_pay(ConvGeometry(1, 8, 14, 14, 3, 3, 14, 14, (1, 1), (2, 2), (2, 2)))
    assert not row_bands_pay(ConvGeometry(1, 8, 14, 14, 3, 3, 14, 14, (1, 1), (18, 18), (18, 18)))  # one band
    model, feeds = _residual_model((2, 8, 14, 14), (6, 8, 3, 3), (2, 6, 14, 14), "relu",
                                   dilations=[12, 12], pads_begin=[12, 12], pads_end=[12, 12])
    compiled = compile_model(model, threads=2, cache_dir=cache_dir)
    try:
        got = compiled(feeds)["y"]
        assert [p.tag for p in compiled._executable.program.phases] == ["im2col", "conv2x3", "im2col", "conv1x3", "im2col", "conv2x3"]
    finally:
        compiled.close()
    np.testing.assert_allclose(got, run(model, feeds)["y"], rtol=1e-4, atol=1e-4)


def test_dilated_with_residual_or_uneven_phases_keeps_im2col() -> None:
    from irforge.backends.cpu.codegen.epilogue import Epilogue
    from irforge.backends.cpu.ops.dilated import dilated_winograd_pays

    g = ConvGeometry(1, 32, 14, 14, 3, 3, 14, 14, (1, 1), (2, 2), (2, 2))
    assert dilated_winograd_pays(g, Epilogue())
    assert not dilated_winograd_pays(g, Epilogue(residual=True))
    assert not dilated_winograd_pays(ConvGeometry(1, 32, 15, 15, 3, 3, 15, 15, (1, 1), (2, 2), (2, 2)), Epilogue())
    assert not dilated_winograd_pays(ConvGeometry(1, 32, 14, 14, 3, 3, 14, 14, (1, 1), (6, 6), (6, 6)), Epilogue())


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape,props", [
    ((1, 32, 20, 24), (32, 4, 3, 3), dict(group=8, pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 64, 14, 14), (64, 2, 3, 3), dict(group=32, pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 64, 17, 40), (64, 8, 3, 3), dict(group=8, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 32, 14, 14), (24, 32, 3, 3), dict(dilations=[2, 2], pads_begin=[2, 2], pads_end=[2, 2])),
    ((2, 16, 14, 14), (8, 16, 3, 3), dict(dilations=[6, 6], pads_begin=[6, 6], pads_end=[6, 6])),  # row bands
    ((1, 3, 70, 45), (8, 3, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # im2col, wide rows
])
def test_grouped_and_dilated_with_the_avx512_tile(x_shape, w_shape, props, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The grouped implicit GEMM and the dilated Winograd with AVX-512's 12x32 tile (LLVM
    legalises its 32-lane vectors here): the numbers, not just the structure. No object
    cache: a kernel's cache key does not hold the tile."""
    use_avx512_tile(monkeypatch)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    feeds = {"x0": rand(*x_shape)}
    np.testing.assert_allclose(run_cpu(model, feeds, False, threads)["y0"], run(model, feeds)["y0"], rtol=1e-4, atol=1e-4)
