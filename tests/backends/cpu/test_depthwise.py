"""Depthwise convolution on the CPU vs the reference at both vector widths (8 lanes: AVX2,
16: AVX-512; LLVM splits 16-lane vectors on an AVX2 host, so both run here), with planes
wide and tall enough for the unmasked interior, the border and the leftover rows."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.depthwise import ROWS, column_ranges, row_ranges
from irforge.backends.cpu.ops import linear
from irforge.backends.reference import run
from irforge.dialects.nn import Convolution
from tests.backends.cpu.conftest import check_op, run_cpu
from tests.backends.cpu.test_linear import _residual_model
from tests.helpers import rand

CASES = [
    # (N, C, H, W), kernel, props
    ((1, 5, 41, 45), 3, dict(pads_begin=[1, 1], pads_end=[1, 1])),  # interior blocks + 1 leftover row
    ((2, 3, 58, 61), 3, dict(strides=[2, 2], pads_begin=[0, 1], pads_end=[1, 1])),  # stride 2, odd sizes
    ((1, 4, 30, 70), 5, dict(strides=[2, 2], pads_begin=[2, 2], pads_end=[2, 2])),  # EfficientNet's 5x5 s2
    ((1, 3, 22, 50), 7, dict(pads_begin=[3, 3], pads_end=[3, 3])),  # ConvNeXt's 7x7
    ((1, 2, 20, 40), 3, dict(dilations=[2, 3], pads_begin=[2, 3], pads_end=[2, 3])),
    ((1, 3, 9, 35), 3, dict(strides=[3, 3])),  # gathers
    ((1, 2, 6, 6), 5, dict(pads_begin=[2, 2], pads_end=[2, 2])),  # all border
]


@pytest.mark.parametrize("lanes", [8, 16])
@pytest.mark.parametrize("x_shape,k,props", CASES)
def test_depthwise(x_shape, k, props, lanes, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # a fresh cache directory per case: the whole-program cache is not keyed by the lanes
    monkeypatch.setattr(linear, "host_lanes", lambda: lanes)
    c = x_shape[1]
    check_op(Convolution, [rand(*x_shape)], [rand(c, 1, k, k, seed=1), rand(c, seed=2)], tmp_path, group=c, **props)


@pytest.mark.parametrize("lanes", [8, 16])
@pytest.mark.parametrize("act", ["relu", "clamp"])
def test_depthwise_fuses_residual_and_activation(lanes, act, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "host_lanes", lambda: lanes)
    model, feeds = _residual_model((1, 6, 33, 37), (6, 1, 3, 3), (1, 6, 33, 37), act, group=6, pads_begin=[1, 1], pads_end=[1, 1])
    for threads in (1, 2):
        np.testing.assert_allclose(run_cpu(model, feeds, tmp_path, threads)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)


def test_plane_cut() -> None:
    """112x112 3x3 pad 1: one border row each side, interior rows in blocks; at 8 lanes the
    first and last vectors of a row are border, the 12 between interior; at 16 lanes 5."""
    g = ConvGeometry(1, 32, 112, 112, 3, 3, 112, 112, (1, 1), (1, 1), (1, 1), 32)
    rows = row_ranges(g)
    assert [(r.first, r.last, r.count, r.checked) for r in rows] == [
        (0, 1, 1, True), (1, 1 + 110 // ROWS * ROWS, ROWS, False), (1 + 110 // ROWS * ROWS, 111, 1, False), (111, 112, 1, True)]
    assert column_ranges(g, 8) == [(0, 8, False), (8, 104, True), (104, 112, False)]
    assert column_ranges(g, 16) == [(0, 16, False), (16, 96, True), (96, 112, False)]
    tiny = ConvGeometry(1, 8, 7, 7, 3, 3, 7, 7, (1, 1), (1, 1), (1, 1), 8)
    assert column_ranges(tiny, 8) == [(0, 7, False)]


@pytest.mark.parametrize("lanes", [8, 16])
@pytest.mark.parametrize("kind", ["swish", "sigmoid", "hswish"])
@pytest.mark.parametrize("size,k", [(7, 5), (14, 3), (9, 3), (70, 3)])
def test_exp_activation_after_the_stores(size, k, kind, lanes, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Swish / Sigmoid / HardSwish (+ residual) applied after the stores: once per plane on small planes
    (7x7, 9x9: the masked tail of one plane must not touch the next), per block of rows on
    large ones; 2 threads split the planes."""
    from irforge.backends.cpu.codegen import depthwise
    from irforge.dialects.nn import Activation, Convolution as Conv, Eltwise
    from tests.helpers import ModelBuilder

    monkeypatch.setattr(linear, "host_lanes", lambda: lanes)
    assert (size * size <= depthwise.PLANE_PASS) == (size < 70)
    b = ModelBuilder()
    c, pad = 5, k // 2
    x, r = b.input("x", (2, c, size, size)), b.input("r", (2, c, size, size))
    y = b.add(Conv, [x, b.constant(rand(c, 1, k, k, seed=1)), b.constant(rand(c, seed=2))],
              group=c, pads_begin=[pad, pad], pads_end=[pad, pad]).output
    y = b.add(Eltwise, [r, y], operation="sum").output
    b.output(b.add(Activation, [y], kind=kind, alpha=1.0).output, "y")
    model, feeds = b.finish(), {"x": rand(2, c, size, size) * 4, "r": rand(2, c, size, size, seed=3)}
    for threads in (1, 2):
        np.testing.assert_allclose(run_cpu(model, feeds, tmp_path / str(threads), threads)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)
