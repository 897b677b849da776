"""A windowed pool on the padded-row kernel absorbs a following residual Add and activation
(`ops.reduce.POOL_EPILOGUE`): keras Xception's `MaxPool -> Add(residual 1x1 stride 2)`.
Against the reference with the arena NaN-filled, 1 and 2 threads: max at stride 2 (147 -> 74
columns: whole vectors and a masked rest; 17 -> 9: the row in registers), the Add's result
read twice (no activation absorbed), an Add then ReLU, an average at stride 1; and what keeps
the pointwise Add: a pool on the general kernel (column stride 3), the knob off."""

from __future__ import annotations

import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import reduce
from irforge.dialects.nn import Convolution, Eltwise, Pooling, ReLU
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ModelBuilder, rand


def _model(c: int, size: int, method: str, stride: int, tail: str):  # type: ignore[no-untyped-def]
    """x -> 1x1 conv (stride `stride`: the residual) and x -> pool(3x3, `stride`, pad 1);
    pool + residual; `tail`: "relu" (ReLU of the sum), "two uses" (the sum and its ReLU both
    outputs), "" (the sum)."""
    b = ModelBuilder()
    x = b.input("x", (1, c, size, size))
    r = b.add(Convolution, [x, b.constant(rand(c, c, 1, 1, seed=1))], group=1, strides=[stride, stride]).output
    p = b.add(Pooling, [x], method=method, kernel=[3, 3], strides=[stride, stride], pads_begin=[1, 1], pads_end=[1, 1],
              exclude_pad=True).output
    y = b.add(Eltwise, [p, r], operation="sum").output
    if tail == "relu":
        y = b.add(ReLU, [y]).output
    elif tail == "two uses":
        b.output(b.add(ReLU, [y]).output, "z")
    b.output(y, "y")
    return b.finish(), {"x": rand(1, c, size, size, seed=5)}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,size,method,stride,tail,fused", [
    (4, 147, "max", 2, "", True),
    (6, 17, "max", 2, "relu", True),  # the row in registers
    (5, 37, "max", 2, "two uses", True),
    (3, 40, "avg", 1, "relu", True),
    (4, 40, "max", 3, "", False),  # the general kernel
    (4, 147, "max", 2, "off", False),
])
def test_pool_epilogue(c, size, method, stride, tail, fused, threads, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(reduce, "POOL_EPILOGUE", tail != "off")
    model, feeds = _model(c, size, method, stride, tail)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    names = [p.function for p in compiled._executable.program.phases]
    # the Add's pass, and the ReLU of a sum read twice
    assert sum("pointwise" in n for n in names) == (not fused) + (tail == "two uses"), names
    matches_reference(compiled, model, feeds)
