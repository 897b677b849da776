"""3x3 stride-2 convolutions by Winograd (`codegen.winograd.STRIDE2_MATRICES`), and grouped ones (`GROUPED`): the 1-D
algorithm against the direct window, and whole layers against the reference with the arena
NaN-filled: F(4x4) and F(2x2), one and two vectors of tiles per tile row, masked-load rows,
partial tiles, asymmetric and no pads, batch 2, 2 K blocks, fused residual and ReLU, 1 and 2
threads."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import winograd_transforms
from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.winograd import STRIDE2_MATRICES, transform_weights
from irforge.backends.cpu.ops.linear import geometry
from irforge.backends.cpu.ops.winograd import tile_size, winograd_pays
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Convolution, Eltwise, ReLU
from irforge.backends.reference import run
from tests.helpers import one_op_model, rand, winograd_phase_tags


def matches_reference(compiled, model, feeds) -> None:  # type: ignore[no-untyped-def]
    """conftest's, with the absolute tolerance a fraction of the output's range: Winograd sums
    in another order, and an output near zero out of terms of size ~|y|max keeps an error of a
    few ulps of |y|max (see test_linear's `test_winograd_convolution`)."""
    compiled._executable.arena[:] = np.nan  # a lane left unwritten shows
    try:
        got = compiled(feeds)
    finally:
        compiled.close()
    for name, want in run(model, feeds).items():
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("m", [2, 4])
def test_stride2_matrices(m) -> None:  # type: ignore[no-untyped-def]
    """A^T [(G g G^T) . (B^T d B)] A of a (2m+1)^2 input tile is its m x m stride-2 outputs."""
    a = 2 * m + 1
    g, d = rand(1, 1, 3, 3, seed=4).astype(np.float64), rand(a, a, seed=5).astype(np.float64)
    u = transform_weights(g, m, 2).reshape(a, a).astype(np.float64)
    bt, _, at = (np.array(x, np.float64) for x in STRIDE2_MATRICES[m])
    tile = at @ (u * (bt @ d @ bt.T)) @ at.T
    direct = np.array([[np.sum(d[2 * i:2 * i + 3, 2 * j:2 * j + 3] * g[0, 0]) for j in range(m)] for i in range(m)])
    np.testing.assert_allclose(tile, direct, rtol=1e-5)


def test_stride2_pays() -> None:
    """F(4x4) from 28x28 outputs, F(2x2) from 7x7; smaller outputs and other strides keep the direct kernels."""
    layer = lambda c, h, oh, stride=(2, 2): ConvGeometry(1, c, h, h, 3, 3, oh, oh, stride, (1, 1), (1, 1))  # noqa: E731
    assert winograd_pays(layer(128, 56, 28)) and tile_size(layer(128, 56, 28), 128) == 4
    assert winograd_pays(layer(256, 28, 14)) and tile_size(layer(256, 28, 14), 256) == 2
    assert winograd_pays(layer(512, 14, 7)) and tile_size(layer(512, 14, 7), 512) == 2
    assert not winograd_pays(layer(512, 12, 6))
    assert not winograd_pays(layer(3, 224, 112), 32) and not winograd_pays(layer(128, 56, 28), 16)
    assert not winograd_pays(layer(24, 112, 56), 96) and winograd_pays(layer(32, 112, 56), 32)
    assert not winograd_pays(layer(64, 56, 28, (2, 1))) and not winograd_pays(layer(64, 56, 19, (3, 3)))


CASES = [
    # (N, C, H, W), O, props, m
    ((1, 32, 56, 56), 33, dict(pads_begin=[1, 1], pads_end=[1, 1]), 4),  # 7 tiles a row: one vector
    ((1, 32, 57, 140), 32, dict(pads_begin=[1, 1], pads_end=[1, 1]), 4),  # 18 tiles a row, partial tiles
    ((1, 40, 28, 28), 32, dict(pads_begin=[1, 1], pads_end=[1, 1]), 2),
    ((1, 33, 30, 30), 35, dict(pads_begin=[0, 0], pads_end=[1, 1]), 2),  # TF SAME: pad at the end only
    ((2, 32, 29, 31), 34, dict(pads_begin=[1, 1], pads_end=[1, 1]), 2),  # batch 2 (masked stores)
    ((1, 32, 28, 80), 32, {}, 2),  # no padding, 20 tiles a row
    ((1, 300, 28, 28), 32, dict(pads_begin=[1, 1], pads_end=[1, 1]), 2),  # 2 K blocks
    ((1, 40, 14, 14), 48, dict(pads_begin=[1, 1], pads_end=[1, 1]), 2),  # 7x7 outputs: 16 tiles, 49 of 64 outputs kept
    ((1, 32, 31, 30), 32, dict(pads_begin=[2, 0], pads_end=[0, 2]), 2),  # pads of 2 and 0
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,o,props,m", CASES)
def test_stride2_winograd(x_shape, o, props, m, threads, cache_dir) -> None:  # type: ignore[no-untyped-def]
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(o, x_shape[1], 3, 3, seed=1), rand(o, seed=2)], strides=[2, 2], **props)
    g = geometry(next(op for op in model.module.walk() if isinstance(op, Convolution)))
    assert winograd_pays(g, o) and tile_size(g, o) == m
    compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
    assert [p.tag for p in compiled._executable.program.phases] == winograd_phase_tags()
    matches_reference(compiled, model, {"x0": rand(*x_shape, seed=3)})


@pytest.mark.parametrize("padded,row_floats_max,deinterleave", [(True, 16, False), (False, 2048, False), (True, 2048, True)])
def test_stride2_masked_rows(padded, row_floats_max, deinterleave, monkeypatch, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Rows past `ROW_FLOATS_MAX`, and without `PADDED_ROWS`, read the input with masked loads;
    `DEINTERLEAVE` picks the tiles' columns from even and odd halves."""
    monkeypatch.setattr(winograd_transforms, "PADDED_ROWS", padded)
    monkeypatch.setattr(winograd_transforms, "ROW_FLOATS_MAX", row_floats_max)
    monkeypatch.setattr(winograd_transforms, "DEINTERLEAVE", deinterleave)
    for x_shape, o, props, _ in (CASES[1], CASES[5]):
        model = one_op_model(Convolution, [rand(*x_shape)], [rand(o, x_shape[1], 3, 3, seed=1), rand(o, seed=2)], strides=[2, 2], **props)
        matches_reference(compile_model(model, threads=2, cache_dir=False), model, {"x0": rand(*x_shape, seed=3)})


@pytest.mark.parametrize("height", [28, 56])  # F(2x2), F(4x4)
def test_stride2_fuses_residual_and_relu(height, cache_dir) -> None:  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", (1, 32, height, height))
    r = b.input("r", (1, 32, height // 2, height // 2))
    y = b.add(Convolution, [x, b.constant(rand(32, 32, 3, 3, seed=1)), b.constant(rand(32, seed=2))],
              strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]).output
    y = b.add(ReLU, [b.add(Eltwise, [r, y], operation="sum").output]).output
    b.output(y, "y")
    model = b.finish()
    feeds = {"x": rand(1, 32, height, height), "r": rand(1, 32, height // 2, height // 2, seed=3)}
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
        assert [p.tag for p in compiled._executable.program.phases] == winograd_phase_tags()
        matches_reference(compiled, model, feeds)


GROUPED_CASES = [
    # (N, C, H, W), O, props
    ((1, 64, 28, 28), 64, dict(group=4, pads_begin=[1, 1], pads_end=[1, 1])),  # F(4x4), stride 1
    ((1, 96, 14, 14), 48, dict(group=3, pads_begin=[1, 1], pads_end=[1, 1])),  # F(2x2), 32 -> 16 per group
    ((1, 64, 56, 56), 64, dict(group=2, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # F(4x4), stride 2
    ((2, 48, 28, 28), 48, dict(group=3, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # F(2x2), batch 2
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,o,props", GROUPED_CASES)
def test_grouped_winograd(x_shape, o, props, threads, monkeypatch, cache_dir) -> None:  # type: ignore[no-untyped-def]
    """`GROUPED`: one GEMM per (point, group); each group's outputs from its own inputs only."""
    from irforge.backends.cpu.ops import winograd as ops_winograd

    monkeypatch.setattr(ops_winograd, "GROUPED", True)
    group = props["group"]
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(o, x_shape[1] // group, 3, 3, seed=1), rand(o, seed=2)], **props)
    g = geometry(next(op for op in model.module.walk() if isinstance(op, Convolution)))
    assert winograd_pays(g, o)
    compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
    assert [p.tag for p in compiled._executable.program.phases] == winograd_phase_tags()
    matches_reference(compiled, model, {"x0": rand(*x_shape, seed=3)})
