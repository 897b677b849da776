"""A depthwise layer on the cut kernel whose output only feeds a 1x1 layer that would copy its
unaligned B rows into panels writes its planes on whole cache lines (`depthwise.PITCHED_OUTPUT`)
and the 1x1's GEMM reads them in place, `output_pitch` floats apart: the pack phase goes.
Against the reference, the arena NaN-filled (the floats between planes stay NaN: a GEMM reading
planes `p` apart fails), 8- and 16-lane kernels, 1 and 2 threads: 33x33 (1089 -> 1104), 37x37
with Swish after the stores (per plane), 74 -> 37 at stride 2, 20x51 (1020 floats: a pitch of
1024 would alias, 1040), 5x5 at 37x37; and the layers that keep packing: a second user of the
depthwise output, a residual, the knob off."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import depthwise
from irforge.backends.cpu.ops import linear
from irforge.dialects.nn import Activation, Convolution, Eltwise, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ModelBuilder, rand


def _model(c: int, hw: tuple[int, int], o: int, k: int, stride: int, act: str, shape: str = ""):  # type: ignore[no-untyped-def]
    """depthwise k x k (+ bias, act) -> 1x1 c -> o (+ bias); `shape`: "second user" (the
    depthwise output is a model output too), "residual" (an Add before the 1x1)."""
    b = ModelBuilder()
    x = b.input("x", (1, c, *hw))
    pad = [k // 2] * 2
    d = b.add(Convolution, [x, b.constant(rand(c, 1, k, k, seed=1)), b.constant(rand(c, seed=2))], group=c,
              pads_begin=pad, pads_end=pad, strides=[stride] * 2).output
    feeds = {"x": rand(1, c, *hw, seed=5) * 2}
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
@pytest.mark.parametrize("c,hw,o,k,stride,act,shape,pitched", [
    (64, (33, 33), 40, 3, 1, "relu", "", True),
    (66, (37, 37), 48, 3, 1, "swish", "", True),  # Swish after the stores, per plane
    (64, (74, 74), 40, 3, 2, "relu", "", True),  # 37x37 outputs
    (64, (20, 51), 40, 3, 1, "relu", "", True),  # 1020 floats: pitch 1040, not 1024
    (64, (37, 37), 33, 5, 1, "relu", "", True),
    (64, (33, 33), 40, 3, 1, "relu", "second user", False),
    (64, (33, 33), 40, 3, 1, "relu", "residual", False),
    (64, (33, 33), 40, 3, 1, "relu", "off", False),
])
def test_depthwise_writes_pitched_planes(c, hw, o, k, stride, act, shape, pitched, lanes, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "host_lanes", lambda: lanes)
    monkeypatch.setattr(linear, "PACK_UNALIGNED_LEAST", (32, 64))
    monkeypatch.setattr(depthwise, "PITCHED_OUTPUT", shape != "off")
    model, feeds = _model(c, hw, o, k, stride, act, shape)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    tags = [p.tag for p in compiled._executable.program.phases]
    assert ("im2col" not in tags) == pitched, tags  # the 1x1's pack_rows phase
    matches_reference(compiled, model, feeds)


def test_output_pitch() -> None:
    """Whole 64-byte lines, never a multiple of 4 KiB."""
    assert depthwise.output_pitch(1089) == 1104
    assert depthwise.output_pitch(1020) == 1040
    assert depthwise.output_pitch(21609) == 21616
