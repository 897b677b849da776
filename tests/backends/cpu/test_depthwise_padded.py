"""Depthwise planes run from a zero-padded stack copy (`depthwise._padded_plane_kernel`:
output rows up to `PADDED_OW_MAX` floats at stride 1, `PADDED_STRIDED_OW_MAX` at stride 2)
against the reference: rows shorter than half a vector (stores that would cross the plane's
end over several rows), stride 2 (each row's even / odd columns split into two stack rows),
dilation, asymmetric pads, wider stride-2 rows split into a ring of rows (`SPLIT_RING_OW_MAX`), 5x5 windows over split
rows two vectors (`PAIR_TAPS`) or 8 rows (`PAIR_ROWS`) at a time, rows of 41 at dilation 2 (`PADDED_DILATED_OW_MAX`), a residual with ReLU, Swish after the stores per plane and per
block of rows; 8 and 16 lanes, 1 and 2 threads, the arena NaN-filled and checked NaN past
the output (a lane left unwritten, or a store past the plane's end, would show)."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import depthwise
from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.ops import linear
from irforge.backends.reference import run
from irforge.dialects.nn import Activation, Convolution, Eltwise, ReLU
from tests.helpers import ModelBuilder, rand

CASES = [
    # (N, C, H, W), k, props, epilogue
    ((2, 5, 7, 7), 5, dict(pads_begin=[2, 2], pads_end=[2, 2]), "relu"),  # 7x7 5x5: one vector a row
    ((1, 4, 14, 14), 3, dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]), "none"),  # 14 -> 7
    ((1, 2, 15, 15), 5, dict(strides=[2, 2], pads_begin=[2, 2], pads_end=[2, 2]), "relu"),  # 15 -> 8
    ((1, 3, 56, 56), 5, dict(strides=[2, 2], pads_begin=[2, 2], pads_end=[2, 2]), "swish"),  # 56 -> 28
    ((1, 2, 16, 17), 3, dict(strides=[2, 2], dilations=[2, 2], pads_begin=[2, 1], pads_end=[1, 2]), "none"),  # odd phase shifts
    ((1, 3, 6, 6), 5, dict(pads_begin=[2, 2], pads_end=[2, 2]), "none"),  # 16 lanes: stores span 3 rows
    ((1, 3, 3, 5), 3, dict(pads_begin=[1, 1], pads_end=[1, 1]), "relu"),  # rows of 5: all stores cross
    ((1, 2, 9, 3), 3, dict(pads_begin=[1, 1], pads_end=[1, 1]), "none"),  # crossing rows span two blocks
    ((1, 3, 13, 15), 3, dict(dilations=[2, 2], pads_begin=[1, 0], pads_end=[3, 4]), "none"),  # asymmetric
    ((1, 2, 28, 28), 3, dict(pads_begin=[1, 1], pads_end=[1, 1]), "swish"),  # whole vectors; per plane
    ((1, 3, 33, 41), 5, dict(dilations=[2, 2], pads_begin=[4, 4], pads_end=[4, 4]), "relu"),  # PADDED_DILATED_OW_MAX
    ((1, 2, 210, 20), 3, dict(pads_begin=[1, 1], pads_end=[1, 1]), "swish"),  # per block (> PLANE_PASS)
    # one vector a row at 5x5: blocks of 2 x ROWS rows (PAIR_ROWS)
    ((1, 3, 14, 14), 5, dict(strides=[2, 2], pads_begin=[2, 2], pads_end=[2, 2]), "relu"),  # 14 -> 7
    ((2, 3, 27, 13), 5, dict(strides=[2, 2], pads_begin=[2, 2], pads_end=[2, 2]), "swish"),  # 14 x 7: 8 + 6 rows
    ((1, 2, 41, 29), 5, dict(strides=[2, 2], pads_begin=[2, 1], pads_end=[1, 2]), "none"),  # 20 x 14 (one vector at 16 lanes)
    # stride 2 over PADDED_STRIDED_OW_MAX: split rows in a ring (SPLIT_RING_OW_MAX)
    ((1, 3, 112, 112), 3, dict(strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]), "relu"),  # 112 -> 56
    ((2, 2, 75, 77), 5, dict(strides=[2, 2], pads_begin=[2, 2], pads_end=[2, 2]), "swish"),  # odd planes, 39 wide
    ((1, 2, 70, 67), 3, dict(strides=[2, 2], pads_begin=[0, 1], pads_end=[1, 0]), "none"),  # asymmetric pads
    ((1, 2, 81, 90), 3, dict(strides=[2, 2], dilations=[2, 2], pads_begin=[2, 2], pads_end=[2, 2]), "none"),  # dilated
    ((1, 2, 66, 128), 5, dict(strides=[2, 2], pads_begin=[1, 2], pads_end=[2, 1]), "relu"),  # 64 wide, 5x5
]


def _model(x_shape, k, props, epilogue):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    n, c = x_shape[:2]
    x = b.input("x", x_shape)
    y = b.add(Convolution, [x, b.constant(rand(c, 1, k, k, seed=1)), b.constant(rand(c, seed=2))], group=c, **props).output
    feeds = {"x": rand(*x_shape) * 2}
    if epilogue == "relu":  # with a residual
        out_shape = tuple(y.type.get_shape())
        r = b.input("r", out_shape)
        y = b.add(ReLU, [b.add(Eltwise, [r, y], operation="sum").output]).output
        feeds["r"] = rand(*out_shape, seed=3)
    elif epilogue == "swish":
        y = b.add(Activation, [y], kind="swish", alpha=1.0).output
    b.output(y, "y")
    return b.finish(), feeds


@pytest.mark.parametrize("lanes", [8, 16])
@pytest.mark.parametrize("x_shape,k,props,epilogue", CASES)
def test_padded_plane(x_shape, k, props, epilogue, lanes, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "host_lanes", lambda: lanes)
    model, feeds = _model(x_shape, k, props, epilogue)
    want = run(model, feeds)["y"]
    n, c, h, w = x_shape
    stride = tuple(props.get("strides", [1, 1]))
    dilation = tuple(props.get("dilations", [1, 1]))
    pad = tuple(props["pads_begin"])
    oh, ow = want.shape[2:]
    g = ConvGeometry(n, c, h, w, k, k, oh, ow, stride, dilation, pad, c)
    assert depthwise.padded_layout(g, lanes) is not None  # the path under test
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=False)
        compiled._executable.arena[:] = np.nan
        try:
            assert any("dwconv" in p.function for p in compiled._executable.program.phases)
            np.testing.assert_allclose(compiled(feeds)["y"], want, rtol=1e-4, atol=1e-5)
            # nothing written past the output (the one buffer of the arena): the last plane's
            # stores are masked at its end
            out = compiled._executable.program.outputs[0][1]
            assert out.offset >= 0
            assert np.isnan(compiled._executable.arena[(out.offset + out.nbytes) // 4:]).all()
        finally:
            compiled.close()


def test_layout_limits() -> None:
    """56x56 stride 1 and 112 -> 56 stride 2 keep the cut kernel (slower there); so do strides
    over 2 and a plane over the stack limit."""
    def g(size, stride, k=3, out=None):  # type: ignore[no-untyped-def]
        o = out or (size + 2 * (k // 2) - k) // stride + 1
        return ConvGeometry(1, 8, size, size, k, k, o, o, (stride, stride), (1, 1), (k // 2, k // 2), 8)

    assert depthwise.padded_layout(g(28, 1), 8) is not None
    assert depthwise.padded_layout(g(56, 1), 8) is None
    assert depthwise.padded_layout(g(28, 2), 8) is not None
    assert depthwise.padded_layout(g(56, 2), 8) is not None
    assert depthwise.padded_layout(g(56, 2), 8).ring == 0  # the whole split plane
    assert depthwise.padded_layout(g(112, 2), 8).ring == 16  # 9 rows a block of 4
    assert depthwise.padded_layout(g(112, 2, k=5), 8).ring == 16  # 11 rows
    assert depthwise.padded_layout(g(224, 2), 8) is None  # past SPLIT_RING_OW_MAX
    assert depthwise.padded_layout(g(21, 3), 8) is None
    assert depthwise.padded_layout(g(33, 1), 8) is None  # undilated: PADDED_OW_MAX
    dilated = ConvGeometry(1, 8, 33, 33, 5, 5, 33, 33, (1, 1), (2, 2), (4, 4), 8)
    assert depthwise.padded_layout(dilated, 8) is not None  # PADDED_DILATED_OW_MAX
    tall = ConvGeometry(1, 8, 1000, 20, 3, 3, 1000, 20, (1, 1), (1, 1), (1, 1), 8)
    assert depthwise.padded_layout(tall, 8) is None  # 1002 x 22 floats > PADDED_STACK_MAX
