"""An f32 binary Eltwise whose single user is an epilogue activation (ReLU, leaky ReLU, Clamp,
Swish, ...) of its shape runs as one phase (`elementwise.ELTWISE_ACTIVATION`): DenseNet's
per-channel BatchNorm Mul before its ReLU. Against the reference interpreter (NaN and
infinities included), with the phase count; a Mul read by two ops, an activation that
broadcasts (none here: same shape only) and the knob off keep two phases."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import elementwise
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, Clamp, Eltwise, ReLU
from tests.helpers import rand


def _model(operation: str, act: str, shared: bool = False):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", (1, 6, 5, 7))
    s = b.constant(rand(1, 6, 1, 1, seed=2, low=-2.0, high=2.0))
    y = b.add(Eltwise, [x, s], operation=operation).output
    if act == "relu":
        z = b.add(ReLU, [y]).output
    elif act == "leaky":
        z = b.add(ReLU, [y], negative_slope=0.1).output
    elif act == "clamp":
        z = b.add(Clamp, [y], min=-0.5, max=1.5).output
    else:
        z = b.add(Activation, [y], kind=act).output
    b.output(z, "z")
    if shared:
        b.output(y, "y")
    x_val = rand(1, 6, 5, 7, seed=1, low=-3.0, high=3.0)
    x_val[0, 0, 0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    return b.finish(), {"x": x_val}


def _compare(model, feeds):  # type: ignore[no-untyped-def]
    compiled = compile_model(model, threads=2, cache_dir=False)
    try:
        got, phases = compiled(feeds), compiled.stats.phases
    finally:
        compiled.close()
    want = run(model, feeds)
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-6, atol=1e-6)
    return phases


@pytest.mark.parametrize("operation, act", [("mul", "relu"), ("sum", "leaky"), ("sub", "clamp"), ("mul", "swish"),
                                            ("sum", "sigmoid")])
def test_one_phase(operation: str, act: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    model, feeds = _model(operation, act)
    fused = _compare(model, feeds)
    monkeypatch.setattr(elementwise, "ELTWISE_ACTIVATION", False)
    model, feeds = _model(operation, act)
    assert _compare(model, feeds) == fused + 1


def test_shared_result_keeps_two_phases(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    model, feeds = _model("mul", "relu", shared=True)
    kept = _compare(model, feeds)
    monkeypatch.setattr(elementwise, "ELTWISE_ACTIVATION", False)
    model, feeds = _model("mul", "relu", shared=True)
    assert _compare(model, feeds) == kept
