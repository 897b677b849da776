"""A ReLU / Clamp between a value with a second reader and the depthwise layer reading it is
applied by that layer as it copies its input into its stack plane
(`ops.input_activation.DEPTHWISE_INPUT_ACTIVATION`, `DepthwiseSpec.input_activation`): the
pointwise pass goes. Xception's residual blocks: `s = conv(...) + r; d = dw(relu(s)); ...
+ s`. Against the reference interpreter, the arena NaN-filled, 8- and 16-lane kernels, 1
and 2 threads: stride 1 at 19x19 writing B panels (a tail panel) and 28x28 writing planes,
a 5x5 window, stride 2 on the split rows (29 -> 15, pads 1 / 1) and on the ring (112 -> 56,
keras' pads 0 / 1), leaky ReLU and ReLU6, two samples; and the activations that stay a pass: a Clamp
whose range leaves out 0, a plane on the cut kernel (rows of 37), the knob off."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import depthwise
from irforge.backends.cpu.ops import input_activation, linear
from irforge.dialects.nn import Clamp, Convolution, Eltwise, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ModelBuilder, rand


def _model(c: int, size: int, k: int, stride: int, pads: tuple[int, int], act: str, then_1x1: bool, n: int = 1):  # type: ignore[no-untyped-def]
    """s = 1x1(x) + r; d = depthwise k x k (act(s)) (+ bias); outputs: d (or 1x1(d) with
    `then_1x1`) and s (the raw sum's second reader)."""
    b = ModelBuilder()
    x = b.input("x", (n, c, size, size))
    r = b.input("r", (n, c, size, size))
    a = b.add(Convolution, [x, b.constant(rand(c, c, 1, 1, seed=1)), b.constant(rand(c, seed=2))], group=1).output
    s = b.add(Eltwise, [a, r], operation="sum").output
    if act == "relu":
        y = b.add(ReLU, [s]).output
    elif act == "leaky":
        y = b.add(ReLU, [s], negative_slope=0.1).output
    else:
        low = {"relu6": 0.0, "clamp_pos": 0.5}[act]
        y = b.add(Clamp, [s], min=low, max=6.0).output
    d = b.add(Convolution, [y, b.constant(rand(c, 1, k, k, seed=3)), b.constant(rand(c, seed=4))], group=c,
              pads_begin=[pads[0]] * 2, pads_end=[pads[1]] * 2, strides=[stride] * 2).output
    if then_1x1:
        d = b.add(Convolution, [d, b.constant(rand(40, c, 1, 1, seed=5))], group=1).output
    b.output(d, "d")
    b.output(s, "s")
    feeds = {"x": rand(n, c, size, size, seed=6) * 2, "r": rand(n, c, size, size, seed=7) * 2}
    return b.finish(), feeds


CASES = [  # c, size, k, stride, pads, act, then_1x1, deferred
    (72, 19, 3, 1, (1, 1), "relu", True, True),  # 361 positions: B panels with a tail panel
    (32, 28, 3, 1, (1, 1), "relu", False, True),  # planes
    (24, 14, 5, 1, (2, 2), "relu6", False, True),
    (24, 29, 3, 2, (1, 1), "leaky", False, True),  # 15x15 outputs on split rows
    (16, 112, 3, 2, (0, 1), "relu", False, True),  # 56x56 on the split-row ring, keras' pads
    (24, 19, 3, 1, (1, 1), "clamp_pos", False, False),  # clamp(0) != 0: stays a pass
    (64, 37, 3, 1, (1, 1), "relu", False, False),  # rows of 37: the cut kernel
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("lanes", [8, 16])
@pytest.mark.parametrize("c,size,k,stride,pads,act,then_1x1,deferred", CASES)
def test_depthwise_input_activation(c, size, k, stride, pads, act, then_1x1, deferred, lanes, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(input_activation, "DEPTHWISE_INPUT_ACTIVATION", True)
    monkeypatch.setattr(linear, "host_lanes", lambda: lanes)
    monkeypatch.setattr(depthwise, "host_lanes", lambda: lanes)
    model, feeds = _model(c, size, k, stride, pads, act, then_1x1)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    names = [p.function for p in compiled._executable.program.phases]
    assert any(n.endswith("_pointwise") for n in names) != deferred, names
    matches_reference(compiled, model, feeds)


@pytest.mark.parametrize("case", [1, 4])
def test_two_samples(case: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two samples: each plane's copy activated (planes, not panels: one sample only)."""
    monkeypatch.setattr(input_activation, "DEPTHWISE_INPUT_ACTIVATION", True)
    c, size, k, stride, pads, act, then_1x1, _ = CASES[case]
    model, feeds = _model(c, size, k, stride, pads, act, then_1x1, n=2)
    compiled = compile_model(model, threads=2, cache_dir=False)
    assert not any(p.function.endswith("_pointwise") for p in compiled._executable.program.phases)
    matches_reference(compiled, model, feeds)


@pytest.mark.parametrize("c,size,k,stride,pads,act,then_1x1,deferred", [CASES[0], CASES[4]])
def test_knob_off_keeps_the_pass(c, size, k, stride, pads, act, then_1x1, deferred, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(input_activation, "DEPTHWISE_INPUT_ACTIVATION", False)
    model, feeds = _model(c, size, k, stride, pads, act, then_1x1)
    compiled = compile_model(model, threads=1, cache_dir=False)
    assert any(p.function.endswith("_pointwise") for p in compiled._executable.program.phases)
    matches_reference(compiled, model, feeds)


@pytest.mark.parametrize("c,size,k,stride,pads,act,then_1x1,deferred", [CASES[0], CASES[4], CASES[6]])
def test_defaults(c, size, k, stride, pads, act, then_1x1, deferred) -> None:  # type: ignore[no-untyped-def]
    """Every knob at its default."""
    model, feeds = _model(c, size, k, stride, pads, act, then_1x1)
    matches_reference(compile_model(model, threads=1, cache_dir=False), model, feeds)
