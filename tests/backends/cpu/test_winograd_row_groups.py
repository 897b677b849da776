"""Winograd transforms over groups of tile rows (`codegen.winograd_transforms.ROW_GROUPS`): one vector holds
the tiles of several tile rows where a tile row fills at most half a host register. Against the
reference with the arena NaN-filled: F(4x4) and F(2x2), stride 1 and 2, 4, 3, 2 and 1 tiles a
row, a last group with fewer tile rows, partial tiles, batch 2 (masked stores), a fused residual
and ReLU; 1 and 2 threads."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import winograd_transforms
from irforge.backends.cpu.codegen.winograd import WinogradSpec
from irforge.backends.cpu.codegen.winograd_transforms import rows_per_vector
from irforge.backends.cpu.ops.linear import geometry
from irforge.backends.cpu.ops.winograd import tile_size, winograd_pays
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Convolution, Eltwise, ReLU
from tests.backends.cpu.test_winograd_stride2 import matches_reference
from tests.helpers import one_op_model, rand, winograd_phase_tags

PAD = dict(pads_begin=[1, 1], pads_end=[1, 1])
CASES = [
    # (N, C, H, W), O, props, m
    ((1, 128, 14, 14), 128, PAD, 4),  # 4 tiles a row, 4 rows a vector (ResNet-50's 14x14)
    ((1, 128, 13, 13), 128, PAD, 4),  # partial tiles
    ((1, 8, 7, 7), 8, PAD, 2),  # 4 tiles a row (ResNet-50's 7x7)
    ((1, 5, 16, 6), 7, PAD, 2),  # 3 tiles a row: 5 rows a vector, 8 tile rows (a group of 3 last)
    ((1, 6, 40, 4), 5, dict(pads_begin=[2, 0], pads_end=[0, 2]), 2),  # 2 tiles a row, 20 rows (8, 8, 4)
    ((1, 4, 64, 2), 3, PAD, 2),  # 1 tile a row, 16 rows a vector
    ((2, 8, 7, 7), 9, PAD, 2),  # batch 2: masked stores into V
    ((1, 32, 14, 14), 32, dict(strides=[2, 2], **PAD), 2),  # stride 2, 7x7 outputs
    ((1, 32, 22, 10), 33, dict(strides=[2, 2], **PAD), 2),  # stride 2, 3 tiles a row, 6 rows (5, 1)
]


def _spec(model, o: int) -> WinogradSpec:  # type: ignore[no-untyped-def]
    g = geometry(next(op for op in model.module.walk() if isinstance(op, Convolution)))
    assert winograd_pays(g, o)
    return WinogradSpec(g.n, g.c, o, g.h, g.w, g.oh, g.ow, g.pad, m=tile_size(g, o), stride=g.stride[0])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,o,props,m", CASES)
def test_row_groups(x_shape, o, props, m, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(winograd_transforms, "ROW_GROUPS", True)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(o, x_shape[1], 3, 3, seed=1), rand(o, seed=2)], **props)
    spec = _spec(model, o)
    assert spec.m == m and rows_per_vector(spec) == winograd_transforms.VW // spec.tw > 1
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert [p.tag for p in compiled._executable.program.phases] == winograd_phase_tags()
    matches_reference(compiled, model, {"x0": rand(*x_shape, seed=3)})


@pytest.mark.parametrize("threads", [1, 2])
def test_row_groups_fuse_residual_and_relu(threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(winograd_transforms, "ROW_GROUPS", True)
    b = ModelBuilder()
    x, r = b.input("x", (1, 16, 7, 7)), b.input("r", (1, 24, 7, 7))
    y = b.add(Convolution, [x, b.constant(rand(24, 16, 3, 3, seed=1)), b.constant(rand(24, seed=2))], **PAD).output
    b.output(b.add(ReLU, [b.add(Eltwise, [r, y], operation="sum").output]).output, "y")
    model = b.finish()
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert [p.tag for p in compiled._executable.program.phases] == winograd_phase_tags()
    matches_reference(compiled, model, {"x": rand(1, 16, 7, 7, seed=4), "r": rand(1, 24, 7, 7, seed=3)})
