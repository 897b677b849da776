"""A channel's slack in the Winograd V matrices (`codegen.winograd.EXACT_SLACK`, through
`winograd_transforms.store_end`): the input transform's whole-vector stores write past a
channel's tiles only as far as `store_end` says, so channels `v_channel` apart never overlap.
Against the reference with the arena NaN-filled (a lane of V left unwritten, or overwritten by
the previous channel's spill, shows), 1 and 2 threads (threads take whole channels: a spill
past `v_channel` lands in the other thread's first channel), every slack mode: the grouped
form with no slack left (16 tiles in one vector: 14x14 F(4x4), 7x7 F(2x2), 14 -> 7 stride 2),
last groups of fewer tile rows, the row form (7, 14 and 18 tiles a row), the rolled stride-2
F(4x4) form, batch 2 (masked stores, no slack), few channels (one or two per thread)."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import winograd
from irforge.backends.cpu.codegen.winograd import WinogradSpec, v_channel
from irforge.backends.cpu.codegen.winograd_transforms import rows_per_vector, store_end
from irforge.backends.cpu.ops.linear import geometry
from irforge.backends.cpu.ops.winograd import tile_size, winograd_pays
from irforge.dialects.nn import Convolution
from tests.backends.cpu.conftest import run_cpu
from tests.backends.cpu.test_winograd_stride2 import matches_reference
from tests.helpers import one_op_model, rand, winograd_phase_tags

PAD = dict(pads_begin=[1, 1], pads_end=[1, 1])
CASES = [
    # (N, C, H, W), O, props
    ((1, 128, 14, 14), 128, PAD),  # F(4x4), 4 rows of 4 tiles: one vector, no slack
    ((1, 128, 13, 13), 128, PAD),  # the same with partial tiles
    ((1, 2, 7, 7), 3, PAD),  # F(2x2), 16 tiles, one channel a thread
    ((1, 32, 14, 14), 33, dict(strides=[2, 2], **PAD)),  # stride 2, F(2x2), 7x7 outputs: 16 tiles
    ((1, 3, 16, 6), 4, PAD),  # F(2x2), 3 tiles a row, 8 tile rows: groups of 5 + 3 (slack 7)
    ((1, 4, 18, 8), 5, PAD),  # F(2x2), 4 tiles a row, 9 tile rows: a last group of one row (slack 12)
    ((1, 5, 28, 28), 6, PAD),  # F(4x4), 7 tiles a row (slack 9)
    ((1, 6, 30, 70), 9, PAD),  # F(4x4), 18 tiles a row: two vectors of tiles a row (slack 14)
    ((1, 32, 56, 60), 33, dict(strides=[2, 2], **PAD)),  # stride 2, F(4x4): the rolled form
    ((2, 8, 7, 7), 9, PAD),  # batch 2: masked stores, no slack in any mode
]


def _spec(model, o: int) -> WinogradSpec:  # type: ignore[no-untyped-def]
    g = geometry(next(op for op in model.module.walk() if isinstance(op, Convolution)))
    assert winograd_pays(g, o)
    return WinogradSpec(g.n, g.c, o, g.h, g.w, g.oh, g.ow, g.pad, m=tile_size(g, o), stride=g.stride[0])


def _model(x_shape, o, props):  # type: ignore[no-untyped-def]
    return one_op_model(Convolution, [rand(*x_shape)], [rand(o, x_shape[1], 3, 3, seed=1), rand(o, seed=2)], **props)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", [0, 1, 2, "default"])
@pytest.mark.parametrize("x_shape,o,props", CASES)
def test_slack_modes(x_shape, o, props, mode, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    if mode != "default":
        monkeypatch.setattr(winograd, "EXACT_SLACK", mode)
    model = _model(x_shape, o, props)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert [p.tag for p in compiled._executable.program.phases] == winograd_phase_tags()
    matches_reference(compiled, model, {"x0": rand(*x_shape, seed=3)})


def _store_starts(spec: WinogradSpec) -> list[int]:
    """The first tile of each whole-vector store of one channel, enumerated as the input
    transform's loops walk (groups of tile rows, or tile rows and their vectors of tiles)."""
    group, vw = rows_per_vector(spec), winograd.VW
    if group > 1:
        return [ty0 * spec.tw for ty0 in range(0, spec.th, group)]
    return [ty * spec.tw + tx0 for ty in range(spec.th) for tx0 in range(0, spec.tw, vw)]


@pytest.mark.parametrize("x_shape,o,props", CASES)
def test_store_end_covers_every_store(x_shape, o, props, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(_model(x_shape, o, props), o)
    end = max(_store_starts(spec)) + winograd.VW
    assert store_end(spec) == end
    monkeypatch.setattr(winograd, "EXACT_SLACK", 2)
    assert v_channel(spec) == (max(spec.tiles, end) if spec.n == 1 else spec.tiles)
    monkeypatch.setattr(winograd, "EXACT_SLACK", 1)
    want = spec.tiles if spec.n > 1 or end <= spec.tiles else spec.tiles + winograd.VW
    assert v_channel(spec) == want


def test_no_slack_where_one_vector_holds_the_channel(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """ResNet-50's 14x14 F(4x4) layers: V was twice its tiles (16 + 16 of slack)."""
    spec = _spec(_model((1, 128, 14, 14), 128, PAD), 128)
    assert (spec.m, spec.tiles) == (4, 16)
    monkeypatch.setattr(winograd, "EXACT_SLACK", 0)
    assert v_channel(spec) == 32
    monkeypatch.setattr(winograd, "EXACT_SLACK", 1)
    assert v_channel(spec) == 16


@pytest.mark.parametrize("x_shape,o,props", [CASES[0], CASES[2], CASES[3], CASES[5]])
def test_slack_modes_bit_equal(x_shape, o, props, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Only V's channel stride moves: the GEMM sums the same products in the same order."""
    model, feeds, outputs = _model(x_shape, o, props), {"x0": rand(*x_shape, seed=3)}, []
    for mode in (0, 1, 2):
        monkeypatch.setattr(winograd, "EXACT_SLACK", mode)
        outputs.append(run_cpu(model, feeds, False, threads=2)["y0"])  # (no object cache: the knob is not in its key)
    for got in outputs[1:]:
        np.testing.assert_array_equal(got, outputs[0])
