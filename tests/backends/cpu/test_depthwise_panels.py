"""A depthwise layer whose output only feeds a 1x1 layer that packs its B writes those panels
itself (`depthwise.PANEL_OUTPUT`): the 1x1's pack phase goes. Against the reference, the arena
NaN-filled, 8- and 16-lane kernels, 1 and 2 threads: a 19x19 plane (an unaligned plane packed
by `packs_unaligned`, a 9-column tail panel), 14x14 5x5 with Swish per plane on the stack plane,
15 -> 8 at stride 2 (64 positions: whole panels), 7x7 with HardSwish; and the layers that keep
planes: a second user of the depthwise output, a residual, a 1x1 that reads B in place, a
plane over the stack-plane kernel's width."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import depthwise
from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.ops import linear
from irforge.dialects.nn import Activation, Convolution, Eltwise, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ModelBuilder, rand


def _model(c: int, size: int, o: int, k: int, stride: int, act: str, shape: str = ""):  # type: ignore[no-untyped-def]
    """depthwise k x k (+ bias, act) -> 1x1 c -> o (+ bias); `shape`: "second user" (the
    depthwise output is a model output too), "residual" (an Add before the 1x1)."""
    b = ModelBuilder()
    x = b.input("x", (1, c, size, size))
    pad = [k // 2] * 2
    d = b.add(Convolution, [x, b.constant(rand(c, 1, k, k, seed=1)), b.constant(rand(c, seed=2))], group=c,
              pads_begin=pad, pads_end=pad, strides=[stride] * 2).output
    feeds = {"x": rand(1, c, size, size, seed=5) * 2}
    if shape == "residual":
        r = b.input("r", tuple(d.type.get_shape()))
        d = b.add(Eltwise, [r, d], operation="sum").output
        feeds["r"] = rand(*d.type.get_shape(), seed=6)
    d = b.add(ReLU, [d]).output if act == "relu" else b.add(Activation, [d], kind=act, alpha=1.0).output
    y = b.add(Convolution, [d, b.constant(rand(o, c, 1, 1, seed=3)), b.constant(rand(o, seed=4))], group=1).output
    b.output(y, "y")
    if shape == "second user":
        b.output(d, "d")
    return b.finish(), feeds


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("lanes", [8, 16])
@pytest.mark.parametrize("c,size,o,k,stride,act,shape,panels", [
    (72, 19, 40, 3, 1, "relu", "", True),  # 361 positions: a tail panel
    (48, 14, 33, 5, 1, "swish", "", True),  # 196: Swish after the stores, per plane
    (70, 15, 64, 3, 2, "relu", "", True),  # 8x8 outputs: whole panels
    (64, 7, 32, 3, 1, "hswish", "", True),
    (72, 19, 40, 3, 1, "relu", "second user", False),
    (72, 19, 40, 3, 1, "relu", "residual", False),
    (16, 19, 40, 3, 1, "relu", "", False),  # K under 64: B read in place
    (64, 33, 40, 3, 1, "relu", "", False),  # rows of 33: the cut kernel
])
def test_depthwise_writes_panels(c, size, o, k, stride, act, shape, panels, lanes, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "host_lanes", lambda: lanes)
    monkeypatch.setattr(linear, "PACK_UNALIGNED_LEAST", (32, 64))
    model, feeds = _model(c, size, o, k, stride, act, shape)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    tags = [p.tag for p in compiled._executable.program.phases]
    assert ("im2col" not in tags) == (panels or c < 64), tags  # the 1x1's pack_rows phase
    matches_reference(compiled, model, feeds)


def test_panel_planes_fit_the_stack() -> None:
    """A tall plane on the stack-plane kernel whose two output stack planes would pass
    `PANEL_STACK_MAX` keeps writing planes."""
    def g(h: int):  # type: ignore[no-untyped-def]
        return ConvGeometry(1, 8, h, 24, 3, 3, h, 24, (1, 1), (1, 1), (1, 1), 8)

    assert depthwise.panel_output_fits(g(300), 16)  # 2 x 7232 floats
    assert depthwise.padded_layout(g(400), 16) is not None and not depthwise.panel_output_fits(g(400), 16)  # 2 x 9632
