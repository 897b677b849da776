"""im2col of output rows at most a vector wide (14x14, 7x7, 5x5; rows split at a panel
boundary), and at x-stride 3 (gathers): lanes of rows outside the input are zeros, the tail
panel's columns past the output too; narrow rows through the stack row of the plane
(`conv.NARROW_BUFFERED`) and through two masked stores per row. Against the reference interpreter, with AVX2's
16-wide and AVX-512's 32-wide panels, on one and two threads."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import conv as conv_codegen
from irforge.backends.reference import run
from irforge.dialects.nn import Convolution
from tests.backends.cpu.conftest import one_op_model
from tests.helpers import rand

CASES = [
    # x shape, w shape, props: im2col (not Winograd / phase planes) with rows <= 16 outputs
    ((1, 24, 28, 28), (20, 24, 2, 2), dict(strides=[2, 2])),  # 14x14 s2 (1 tap per phase: not on phase planes)
    ((1, 16, 14, 14), (12, 16, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # 7x7 s2
    ((1, 32, 28, 28), (40, 32, 1, 1), dict(strides=[2, 2])),  # 1x1 s2 downsample: 14x14
    ((2, 6, 9, 9), (10, 6, 3, 3), dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])),  # batch 2, 5x5
    ((1, 8, 11, 13), (7, 8, 3, 5), dict(pads_begin=[2, 0], pads_end=[0, 3])),  # stride 1, asymmetric pads, 11x12
    ((1, 5, 17, 12), (9, 5, 2, 3), dict(strides=[3, 2], pads_begin=[1, 1], pads_end=[1, 2])),  # stride 3 along y
    ((1, 12, 1, 40), (6, 12, 1, 5), dict(strides=[1, 3])),  # x-stride 3: the gather path
]


@pytest.mark.parametrize("buffered", [True, False])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("x_shape,w_shape,props", CASES)
def test_narrow_im2col(x_shape, w_shape, props, threads, panels, buffered, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(conv_codegen, "NARROW_BUFFERED", buffered)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    feeds = {"x0": rand(*x_shape)}
    compiled = compile_model(model, threads=threads, cache_dir=False)
    compiled._executable.arena[:] = np.nan  # stale panel lanes would show
    try:
        assert "im2col" in [p.tag for p in compiled._executable.program.phases]
        got = compiled(feeds)["y0"]
    finally:
        compiled.close()
    np.testing.assert_allclose(got, run(model, feeds)["y0"], rtol=1e-4, atol=1e-5)
