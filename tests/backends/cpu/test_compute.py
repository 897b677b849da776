"""Deconvolution, Resample (linear, cubic), LRN, Normalize, GRN, ArgMax, reductions over
non-adjacent axes and GEMM ops with non-constant weights on the CPU vs the reference."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.dialects.nn import GRN, MVN, ArgMax, Convolution, Deconvolution, FullyConnected, MatMul, Norm, Normalize, Reduce, Resample
from tests.backends.cpu.conftest import check_op
from tests.helpers import rand

DECONV_CASES = [
    # (N, C, H, W), (C, O/g, kh, kw), props
    ((1, 4, 5, 6), (4, 3, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((2, 3, 4, 4), (3, 5, 4, 4), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),
    ((1, 6, 5, 5), (6, 2, 3, 3), dict(group=3, dilations=[2, 1], output_padding=[1, 0], strides=[2, 2])),
    ((1, 8, 7, 9), (8, 6, 1, 1), {}),
    ((1, 5, 6, 7), (5, 7, 3, 2), dict(pads_begin=[0, 1], pads_end=[2, 0], strides=[1, 3])),
    ((2, 3, 11), (3, 4, 5), dict(strides=[3], pads_begin=[2], pads_end=[1])),
    ((1, 2, 3, 3), (2, 2, 3, 3), dict(strides=[2, 2], auto_pad="same_upper")),
]


@pytest.mark.parametrize("weights", ["constant", "input"])
@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("x_shape,w_shape,props", DECONV_CASES)
def test_deconvolution(x_shape, w_shape, props, bias, weights, cache_dir) -> None:  # type: ignore[no-untyped-def]
    w = rand(*w_shape, seed=1)
    out_channels = w_shape[1] * props.get("group", 1)
    b = [rand(out_channels, seed=2)] if bias else []
    if weights == "constant":
        check_op(Deconvolution, [rand(*x_shape)], [w, *b], cache_dir, **props)
    elif not bias:
        check_op(Deconvolution, [rand(*x_shape), w], [], cache_dir, **props)


@pytest.mark.parametrize("x_shape,w_shape,props", [
    ((1, 3, 9, 9), (5, 3, 3, 3), dict(pads_begin=[1, 1], pads_end=[1, 1])),
    ((2, 4, 6, 6), (4, 2, 1, 1), dict(group=2)),
    ((1, 6, 7, 7), (6, 1, 3, 3), dict(group=6, strides=[2, 2])),
])
def test_convolution_weights_as_input(x_shape, w_shape, props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Convolution, [rand(*x_shape), rand(*w_shape, seed=1)], [], cache_dir, **props)


def test_gemm_ops_with_non_constant_b(cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(FullyConnected, [rand(3, 37), rand(45, 37, seed=1)], [], cache_dir)
    check_op(MatMul, [rand(2, 5, 7), rand(2, 33, 7, seed=1)], [], cache_dir, transpose_b=True)
    check_op(MatMul, [rand(7, 5), rand(33, 7, seed=1)], [], cache_dir, transpose_a=True, transpose_b=True)


RESAMPLE_CASES = [
    dict(scales=[1.0, 1.0, 2.0, 2.0]),
    dict(sizes=[1, 2, 7, 3], coordinate_transformation_mode="align_corners"),
    dict(scales=[1.0, 1.0, 1.7, 0.6], coordinate_transformation_mode="asymmetric"),
    dict(sizes=[1, 2, 9, 4], coordinate_transformation_mode="pytorch_half_pixel"),
    dict(scales=[1.0, 1.0, 1.0, 40.0]),
]


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("props", RESAMPLE_CASES)
def test_resample_interpolated(mode, props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Resample, [rand(1, 2, 5, 6)], [], cache_dir, mode=mode, **props)


WINDOWED_CASES = [
    # input, props: rows wide enough (>= 8) for the windowed horizontal pass
    ((1, 2, 9, 65), dict(sizes=[1, 2, 72, 520])),  # LR-ASPP's 8x head upsampling
    ((1, 2, 14, 14), dict(sizes=[1, 2, 224, 224])),  # DeepLab's 16x, a one-vector window at 8 lanes
    ((1, 3, 33, 33), dict(sizes=[1, 3, 65, 65], coordinate_transformation_mode="align_corners")),
    ((2, 1, 4, 20), dict(scales=[1.0, 1.0, 1.0, 1.3], coordinate_transformation_mode="asymmetric")),
    ((1, 2, 3, 37), dict(scales=[1.0, 1.0, 1.0, 0.5])),  # downsampling: the gather path
    ((1, 2, 3, 5), dict(scales=[1.0, 1.0, 1.0, 7.0])),  # a row shorter than a vector
]


@pytest.mark.parametrize("lanes", [8, 16])
@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("shape,props", WINDOWED_CASES)
def test_resample_windowed_at_both_widths(shape, props, mode, lanes, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The windowed taps path at AVX2's 8 lanes and AVX-512's 16 (LLVM splits 16 on AVX2)."""
    from irforge.backends.cpu.ops import interpolate

    monkeypatch.setattr(interpolate, "host_lanes", lambda: lanes)
    check_op(Resample, [rand(*shape)], [], tmp_path, mode=mode, **props)


@pytest.mark.parametrize("lanes", [8, 16])
def test_window_plan_covers_upsampling_not_downsampling(lanes) -> None:  # type: ignore[no-untyped-def]
    from irforge.backends.cpu.codegen.taps import TapSpec, window_plan
    from irforge.backends.reference.kernels.resample import linear_taps, source_coordinates

    def spec(n_in: int, n_out: int) -> TapSpec:
        index, weight = linear_taps(source_coordinates("half_pixel", n_out / n_in, n_in, n_out), n_in)
        return TapSpec(4, n_in, n_out, 1, tuple(map(tuple, index.T.tolist())), tuple(map(tuple, weight.T.tolist())), lanes)

    window, blocks = window_plan(spec(65, 520))  # type: ignore[misc]
    assert window == lanes and len(blocks) == -(-520 // lanes)
    assert all(b.weights[0][lane] + b.weights[1][lane] == pytest.approx(1.0) for b in blocks[:-1] for lane in range(lanes))
    assert blocks[-1].weights[0][lanes - -520 % lanes:] == (0.0,) * (-520 % lanes)
    assert window_plan(spec(14, 224)) is not None
    assert window_plan(spec(64, 16)) is None  # 16 outputs span 64 sources
    assert window_plan(spec(lanes - 1, 4 * lanes))[0] == lanes  # type: ignore[index]  # a masked load of the whole row
    with_edges = TapSpec(4, 32, 32, 1, ((-1,) + tuple(range(31)),), ((1.0,) * 32,), lanes)
    assert window_plan(with_edges) is None  # an LRN window past the edge keeps its -1 test


@pytest.mark.parametrize("props", [dict(size=5), dict(size=3, region="same", beta=0.5, bias=2.0), dict(size=4, alpha=0.1)])
def test_lrn(props, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Norm, [rand(2, 7, 5, 19, low=-3, high=3)], [], cache_dir, **props)


@pytest.mark.parametrize("across,shared", [(False, False), (True, False), (False, True), (True, None), (False, None)])
def test_normalize(across, shared, cache_dir) -> None:  # type: ignore[no-untyped-def]
    scale = [] if shared is None else [rand(1 if shared else 6, seed=1)]
    check_op(Normalize, [rand(2, 6, 5, 7)], scale, cache_dir, across_spatial=across, channel_shared=bool(shared), eps=1e-6)


def test_grn(cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(GRN, [rand(2, 6, 5, 7)], [], cache_dir, bias=0.5)


@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize("last", [False, True])
@pytest.mark.parametrize("shape,axis", [((3, 1000), 1), ((2, 7, 37), 1), ((4, 5, 3), 0), ((6, 9), -1)])
def test_argmax(shape, axis, mode, last, cache_dir) -> None:  # type: ignore[no-untyped-def]
    x = np.round(rand(*shape, low=-3, high=3))  # ties
    x.flat[5::37] = np.nan
    check_op(ArgMax, [x.astype(np.float32)], [], cache_dir, axis=axis, mode=mode, select_last_index=last, keep_dims=axis != 0)


@pytest.mark.parametrize("axes", [(0, 2), (1, 3), (0, 3)])
@pytest.mark.parametrize("keep", [True, False])
def test_reduce_non_adjacent_axes(axes, keep, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Reduce, [rand(2, 3, 5, 7)], [], cache_dir, operation="sum", axes=list(axes), keep_dims=keep)


def test_mvn_non_adjacent_axes(cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(MVN, [rand(2, 3, 5, 7)], [], cache_dir, axes=[0, 2, 3])
