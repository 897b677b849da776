"""Wide windows on the shifted GEMM (`shifted.WIDE_WINDOW_TAPS`, `shifted_kc`): AlexNet's 11x11
stride-4 stem takes K blocks of two channels (2 + 1 of its three), so its tiles load and add
C between blocks. Against the reference: the stem's geometry at a smaller and odd input, a
9x9 stride-1 window over 5 channels (blocks of 2 + 2 + 1), several output-channel counts
(row tails of the 6-row blocks), two samples, 1 and 2 threads, the arena NaN-filled; and a
window of more taps than SHIFTED_KC (one channel a block, not a K block of none)."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import shifted
from irforge.backends.reference import run
from irforge.dialects.nn import Convolution
from tests.helpers import one_op_model, rand

CASES = [
    # (N, C, H, W), (O, C, kh, kw), props
    ((1, 3, 67, 75), (64, 3, 11, 11), dict(strides=[4, 4], pads_begin=[2, 2], pads_end=[2, 2])),  # the stem, 17x18 out
    ((2, 3, 51, 79), (13, 3, 11, 11), dict(strides=[4, 4], pads_begin=[2, 2], pads_end=[1, 3])),
    ((1, 5, 30, 37), (7, 5, 9, 9), dict(strides=[1, 1], pads_begin=[4, 4], pads_end=[4, 4])),
    ((1, 2, 20, 300), (5, 2, 25, 25), dict(strides=[1, 1], pads_begin=[12, 12], pads_end=[12, 12])),  # 625 taps > SHIFTED_KC
]


def test_kc() -> None:
    assert shifted.shifted_kc(9) == 576 and shifted.shifted_kc(25) == 575 and shifted.shifted_kc(49) == 539
    assert shifted.shifted_kc(121) == 242 and shifted.shifted_kc(625) == 625


@pytest.mark.parametrize("channels", [2, 3])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape,props", CASES)
def test_wide_window(x_shape, w_shape, props, threads, channels, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(shifted, "WIDE_WINDOW_CHANNELS", channels)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1, low=-0.2, high=0.2), rand(w_shape[0], seed=2)], **props)
    feeds = {"x0": rand(*x_shape, seed=3)}
    compiled = compile_model(model, threads=threads, cache_dir=False)
    compiled._executable.arena[:] = np.nan  # a plane lane or C element left unwritten would show
    try:
        tags = [p.tag for p in compiled._executable.program.phases]
        assert f"conv{w_shape[2]}x{w_shape[3]}" in tags and "im2col" not in tags  # on the shifted GEMM
        got = compiled(feeds)["y0"]
    finally:
        compiled.close()
    want = run(model, feeds)["y0"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * max(1.0, float(np.abs(want).max())))
