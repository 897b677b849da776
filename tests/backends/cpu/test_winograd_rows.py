"""The Winograd input transform's zero-padded stack rows (`codegen.winograd_transforms.PADDED_ROWS`)
against the reference, beside the masked-load path it replaced: F(4x4) and F(2x2), one and
two vectors of tiles per tile row, pads on either side or none, rows above and below the
input, 1 and 2 threads; rows longer than `ROW_FLOATS_MAX` keep the masked loads."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import winograd_transforms
from irforge.backends.reference import run
from irforge.dialects.nn import Convolution
from tests.helpers import one_op_model, rand, winograd_phase_tags

CASES = [
    # (N, C, H, W), O, props: m follows from the tiles (F(4x4) from 49 of them)
    ((1, 6, 30, 70), 9, dict(pads_begin=[1, 1], pads_end=[1, 1])),  # F(4x4), 18 tiles a row: two vectors
    ((1, 5, 29, 31), 7, dict(pads_begin=[2, 0], pads_end=[0, 2])),  # F(4x4), partial tiles
    ((1, 4, 14, 40), 5, {}),  # F(2x2), 19 tiles a row
    ((1, 8, 7, 7), 8, dict(pads_begin=[1, 1], pads_end=[1, 1])),  # F(2x2), 16 tiles
]


@pytest.mark.parametrize("row_floats_max", [2048, 16])
@pytest.mark.parametrize("padded", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,o,props", CASES)
def test_input_rows(x_shape, o, props, threads, padded, row_floats_max, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(winograd_transforms, "PADDED_ROWS", padded)
    monkeypatch.setattr(winograd_transforms, "ROW_FLOATS_MAX", row_floats_max)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(o, x_shape[1], 3, 3, seed=1), rand(o, seed=2)], **props)
    feeds = {"x0": rand(*x_shape, seed=3)}
    compiled = compile_model(model, threads=threads, cache_dir=False)
    compiled._executable.arena[:] = np.nan  # a lane of V left unwritten would show
    try:
        assert [p.tag for p in compiled._executable.program.phases] == winograd_phase_tags()
        got = compiled(feeds)["y0"]
    finally:
        compiled.close()
    want = run(model, feeds)["y0"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


PAD = dict(pads_begin=[1, 1], pads_end=[1, 1])


@pytest.mark.parametrize("knob", ["VERTICAL_FIRST", "STREAM_ROWS", "TRANSPOSE_PICKS", "OCTET_PICKS"])
@pytest.mark.parametrize("x_shape,o,props", [
    ((1, 6, 40, 40), 9, PAD),  # F(4x4), 10 tiles a row: one vector
    ((1, 6, 56, 56), 5, PAD),  # F(4x4), 14 tiles a row
    ((1, 7, 28, 28), 6, PAD),  # F(4x4), 7 tiles a row: one host register
    CASES[0],  # F(4x4), 18 tiles a row: the padded stack rows
    ((1, 128, 13, 13), 128, PAD),  # F(4x4), 4 tile rows of 4 a vector, partial tiles
    ((1, 5, 12, 38), 7, dict(pads_begin=[2, 0], pads_end=[0, 2])),  # F(2x2), 19 tiles a row, partial
    CASES[3],  # F(2x2), 7x7: four tile rows a vector
    ((1, 32, 28, 30), 32, dict(strides=[2, 2], **PAD)),  # stride 2, F(2x2), 7 and 8 tiles a row
    ((1, 32, 14, 14), 33, dict(strides=[2, 2], **PAD)),  # stride 2, F(2x2), 7x7: four tile rows a vector
    ((1, 32, 56, 60), 33, dict(strides=[2, 2], **PAD)),  # stride 2, F(4x4): 7 and 8 tiles a row
    ((1, 32, 57, 140), 32, dict(strides=[2, 2], **PAD)),  # stride 2, F(4x4): 18 tiles a row (stack rows), partial
])
def test_input_forms_bit_equal(x_shape, o, props, knob, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The input transform's forms (rows combined before the columns are picked, one row of B^T d
    at a time, columns by 4x4 and 8x8 transposes) give the output of the form without, bit for
    bit, and the reference's."""
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(o, x_shape[1], 3, 3, seed=1), rand(o, seed=2)], **props)
    feeds = {"x0": rand(*x_shape, seed=3)}
    outputs = []
    for on in (True, False):
        monkeypatch.setattr(winograd_transforms, knob, on)
        compiled = compile_model(model, threads=2, cache_dir=False)
        compiled._executable.arena[:] = np.nan
        try:
            outputs.append(compiled(feeds)["y0"])
        finally:
            compiled.close()
    want = run(model, feeds)["y0"]
    np.testing.assert_allclose(outputs[0], want, rtol=1e-4, atol=1e-5 * np.abs(want).max())
    np.testing.assert_array_equal(outputs[0], outputs[1])
