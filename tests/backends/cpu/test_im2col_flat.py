"""im2col of stride-1 windows whose output rows are as long as the input's
(`im2col_flat`: one offset per tap over the flattened plane, lanes in the padding masked
off, the tail panel's columns past the plane zeros): Inception's 1x7 (17x17, rows wider than
a vector), 7x1 / 1x3 / 3x1 on narrow planes, dilated and asymmetric windows, valid rows along
y, batch 2. Against the reference interpreter with the arena NaN-filled (a lane left unwritten
shows), 1 to 3 threads, AVX2's 16-wide and AVX-512's 32-wide panels, the flat path on and off
(off: the row-wise kernels of `conv.py`)."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import im2col_flat
from irforge.backends.cpu.ops.linear import geometry
from irforge.dialects.nn import Convolution
from tests.backends.cpu.conftest import matches_reference, one_op_model
from tests.helpers import rand

CASES = [
    # x shape, w shape, props: stride 1, output rows as long as the input's, not Winograd / planes
    ((1, 6, 17, 17), (10, 6, 1, 7), dict(pads_begin=[0, 3], pads_end=[0, 3])),  # Inception's 1x7 at 17x17
    ((2, 5, 9, 11), (7, 5, 7, 1), dict(pads_begin=[3, 0], pads_end=[3, 0])),  # 7x1, batch 2, rows of 11
    ((1, 4, 8, 8), (9, 4, 1, 3), dict(pads_begin=[0, 1], pads_end=[0, 1])),  # Inception's 1x3 at 8x8
    ((1, 4, 8, 8), (9, 4, 3, 1), dict(pads_begin=[1, 0], pads_end=[1, 0])),  # ... and 3x1
    ((1, 3, 13, 5), (5, 3, 3, 3), dict(dilations=[2, 2], pads_begin=[2, 2], pads_end=[2, 2])),  # dilated
    ((1, 3, 7, 7), (6, 3, 5, 5), dict(pads_begin=[2, 2], pads_end=[2, 2])),  # 5x5 on 7x7: K = 75
    ((1, 4, 12, 10), (6, 4, 3, 1), dict()),  # valid along y: 10 output rows of 10
    ((1, 2, 6, 19), (3, 2, 4, 7), dict(pads_begin=[1, 3], pads_end=[2, 3])),  # asymmetric along y, rows of 19
    ((1, 4, 50), (6, 4, 3), dict(pads_begin=[1], pads_end=[1])),  # a 1-D convolution: flat before the planes
    ((1, 3, 2, 14), (4, 3, 1, 7), dict(pads_begin=[0, 3], pads_end=[0, 3])),  # 2 rows of 14: taps past both rows
]


@pytest.mark.parametrize("flat", [True, False])
@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("x_shape,w_shape,props", CASES)
def test_flat_im2col(x_shape, w_shape, props, threads, flat, panels, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(im2col_flat, "FLAT", flat)
    model = one_op_model(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], **props)
    conv = next(op for op in model.module.walk() if isinstance(op, Convolution))
    assert im2col_flat.flat_pays(geometry(conv)) == flat
    compiled = compile_model(model, threads=threads, cache_dir=False)
    # off, the 1-D convolution runs on the shifted planes (`shifted.FLAT_IM2COL_MAX` needs the flat im2col)
    assert "im2col" in [p.tag for p in compiled._executable.program.phases] or (not flat and len(x_shape) == 3)
    matches_reference(compiled, model, {"x0": rand(*x_shape, seed=3)})
