"""Stride-2 phase planes written by `codegen.phases` (`shifted.PHASE_KERNEL`) against the
reference, beside the element copy they replace: the 7x7 stem's pads of 3, 3x3 windows with
plane rows longer and shorter than a vector (a grouped layer's rows of 8), odd input sizes,
two samples, 1 and 2 threads, the arena NaN-filled, plane rows made in input order or phase by
phase (`phases.INPUT_ORDER`); a stack row over `PHASE_STACK_MAX` keeps
the element copy."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import phases as phases_codegen
from irforge.backends.cpu.ops import shifted
from irforge.backends.reference import run
from irforge.dialects.nn import Convolution
from tests.helpers import one_op_model, rand

CASES = [
    # (N, C, H, W), (O, C/g, kh, kw), props
    ((1, 3, 30, 61), (8, 3, 7, 7), dict(strides=[2, 2], pads_begin=[3, 3], pads_end=[3, 3])),  # rows of 34
    ((2, 5, 33, 34), (6, 5, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # rows of 18
    ((1, 4, 31, 31), (4, 4, 3, 3), dict(strides=[2, 2], pads_begin=[0, 0], pads_end=[1, 1])),  # rows of 16 (15 columns)
    ((1, 64, 14, 14), (64, 2, 3, 3), dict(group=32, strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # rows of 8
    ((1, 3, 37, 53), (5, 3, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # a stem, odd rows: 19 x 27 planes
]


@pytest.mark.parametrize("input_order", [True, False])
@pytest.mark.parametrize("stack_max", [8192, 16])
@pytest.mark.parametrize("kernel", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape,props", CASES)
def test_phase_planes(x_shape, w_shape, props, threads, kernel, stack_max, input_order, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(phases_codegen, "INPUT_ORDER", input_order)
    monkeypatch.setattr(shifted, "PHASE_KERNEL", kernel)
    monkeypatch.setattr(shifted, "PHASE_STACK_MAX", stack_max)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    feeds = {"x0": rand(*x_shape, seed=3)}
    compiled = compile_model(model, threads=threads, cache_dir=False)
    compiled._executable.arena[:] = np.nan  # a plane lane left unwritten would show
    try:
        phases = compiled._executable.program.phases
        assert [p.tag for p in phases] == ["", f"conv{w_shape[2]}x{w_shape[3]}"]
        assert phases[0].function.endswith("_phases") == (kernel and stack_max > 16)
        got = compiled(feeds)["y0"]
    finally:
        compiled.close()
    np.testing.assert_allclose(got, run(model, feeds)["y0"], rtol=1e-4, atol=1e-5)
