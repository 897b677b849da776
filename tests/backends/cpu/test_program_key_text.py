"""The program key's view of the module (`program_cache._key_text`): equal for equal models,
different wherever the printed module differs in what a program depends on: an operand's
order, a property, an inline constant's values, a result type, a nested region's body."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu.program_cache import _key_text
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Eltwise, ReLU


def _model(swap: bool = False, slope: float = 0.0, value: float = 2.0, width: int = 6, op: str = "sub"):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x, y = b.input("x", (2, width)), b.input("y", (2, width))
    d = b.add(Eltwise, [y, x] if swap else [x, y], operation=op).output
    r = b.add(ReLU, [d], negative_slope=slope).output
    b.output(b.add(Eltwise, [r, b.constant(np.full((width,), value, np.float32))], operation="mul").output, "z")
    return b.finish()


def test_equal_models_equal_text() -> None:
    assert _key_text(_model().module) == _key_text(_model().module)


@pytest.mark.parametrize("other", [
    dict(swap=True), dict(slope=0.25), dict(value=3.0), dict(width=7), dict(op="sum"),
])
def test_a_difference_changes_the_text(other) -> None:  # type: ignore[no-untyped-def]
    base, changed = _model(), _model(**other)
    assert str(base.module) != str(changed.module)  # the printed module differs: so must the key
    assert _key_text(base.module) != _key_text(changed.module)


def test_nested_regions_are_read() -> None:
    """func.func's body is a region inside the module's: an op in it changes the text."""
    text = _key_text(_model().module)
    assert "nn.relu" in text and "p negative_slope" not in text  # properties by name, no gap
    assert text.count("{") == text.count("}") >= 2
