"""Eltwise pow by a constant 2 runs as the Power kernel's x * x (not powf per lane): equal to
the reference bit for bit (NaN, infinities, -0, huge and tiny values); other exponents, a
run-time exponent and an exponent that broadcasts the output keep the binary kernel."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import elementwise
from irforge.backends.reference import run
from irforge.dialects.nn import Eltwise
from tests.helpers import one_op_model, rand


def _x() -> np.ndarray:
    x = rand(3, 50, seed=3, low=-4.0, high=4.0)
    x[0, :6] = [np.nan, np.inf, -np.inf, -0.0, 3e19, 1e-23]
    return x


def _run(inputs, constants, monkeypatch):  # type: ignore[no-untyped-def]
    taken = []
    original = elementwise.unary
    monkeypatch.setattr(elementwise, "unary", lambda ctx, op, expr, params=(): (taken.append(expr), original(ctx, op, expr, params)))
    model = one_op_model(Eltwise, inputs, constants, operation="pow")
    feeds = {f"x{i}": x for i, x in enumerate(inputs)}
    compiled = compile_model(model, threads=2, cache_dir=False)
    try:
        return compiled(feeds)["y0"], run(model, feeds)["y0"], taken
    finally:
        compiled.close()


@pytest.mark.parametrize("exponent", [np.array(2.0, np.float32), np.full((1, 50), 2.0, np.float32)], ids=["scalar", "row"])
def test_square_is_the_power_kernel(exponent, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    got, want, taken = _run([_x()], [exponent], monkeypatch)
    assert taken == ["power"]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("inputs, constants", [
    ([rand(3, 50, seed=3, low=0.5, high=4.0)], [np.array(3.0, np.float32)]),
    ([rand(3, 50, seed=3, low=0.5, high=4.0), np.array(2.0, np.float32)], []),
    ([rand(1, 50, seed=3, low=0.5, high=4.0)], [np.full((3, 1), 2.0, np.float32)]),
], ids=["cube", "run-time", "broadcasts-output"])
def test_other_exponents_keep_the_binary_kernel(inputs, constants, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    got, want, taken = _run(inputs, constants, monkeypatch)
    assert taken == []
    np.testing.assert_allclose(got, want, rtol=1e-6)
