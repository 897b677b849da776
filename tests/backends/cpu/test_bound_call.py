"""`Executable.__call__` on what its constructor bound once (`runtime.BOUND_CALL`): each
output's view made at compile time, inputs written into their table slots. Checked: outputs
equal the reference interpreter's with the arena NaN-filled, each call's outputs stay what
they were after later calls (copies, not the arena), an output that is a model input, and
two threads."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.cpu import compile_model, runtime
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, TopK
from tests.helpers import one_op_model, rand


@pytest.fixture(params=[True, False], ids=["bound", "unbound"])
def bound(request, monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(runtime, "BOUND_CALL", request.param)
    return request.param


@pytest.mark.parametrize("threads", [1, 2])
def test_outputs_are_the_reference_and_outlive_the_next_run(bound, threads: int, cache_dir) -> None:  # type: ignore[no-untyped-def]
    x = rand(2, 37)
    model = one_op_model(TopK, [x], num_results=2, k=5)  # a float and an integer output
    compiled = compile_model(model, threads=threads, cache_dir=cache_dir)
    try:
        assert compiled._executable.bound is bound
        compiled._executable.arena[:] = np.nan
        runs = [(feeds, compiled(feeds)) for feeds in ({"x0": x}, {"x0": rand(2, 37, seed=5)}, {"x0": -x})]
    finally:
        compiled.close()
    for feeds, got in runs:  # the first runs' outputs, read after the last run
        want = run(model, feeds)
        assert set(got) == set(want)
        for name in want:
            assert got[name].dtype == want[name].dtype
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6)


def test_an_output_that_is_an_input(bound, cache_dir) -> None:  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    x = b.input("x", (3, 4), np.float32)
    b.output(b.add(Activation, [x], kind="sigmoid").results[0], "y")
    b.output(x, "same")
    model = b.finish()
    compiled = compile_model(model, threads=1, cache_dir=cache_dir)
    try:
        compiled._executable.arena[:] = np.nan
        feeds = [rand(3, 4), rand(3, 4, seed=3)]
        got = [compiled({"x": f}) for f in feeds]
    finally:
        compiled.close()
    for f, g in zip(feeds, got):
        np.testing.assert_array_equal(g["same"], f)
        assert not np.shares_memory(g["same"], f)
        np.testing.assert_allclose(g["y"], run(model, {"x": f})["y"], rtol=1e-6)
