"""The indexing and box families on the CPU backend: host steps running their reference
kernels at static shapes; a data-dependent output size (NonZero) runs in a host segment
(`backends/segments.py`); a dynamic model input is refused by name, never a wrong result."""

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects import nn
from irforge.errors import IrforgeError
from tests.helpers import one_op_model, rand


def _same_as_reference(model, feeds) -> None:  # type: ignore[no-untyped-def]
    compiled = compile_model(model, threads=2, cache_dir=False)
    try:
        got = compiled(feeds)
    finally:
        compiled.close()
    want = run(model, feeds)
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_top_k_runs_as_a_host_step():
    x = rand(3, 7)
    _same_as_reference(one_op_model(nn.TopK, [x], num_results=2, k=3), {"x0": x})


def test_cum_sum_runs_as_a_host_step_and_gather_elements_natively():
    x = rand(4, 5)
    _same_as_reference(one_op_model(nn.CumSum, [x], axis=1, reverse=True), {"x0": x})
    idx = np.array([[0, 2, 1, 4, 3]] * 4, np.int64)
    _same_as_reference(one_op_model(nn.GatherElements, [x], [idx], axis=1), {"x0": x})


def test_non_zero_runs_on_the_host_at_its_data_dependent_size():
    x = rand(3, 4)
    x[x < 0] = 0
    _same_as_reference(one_op_model(nn.NonZero, [x]), {"x0": x})


def test_a_dynamic_model_input_is_refused_by_name():
    b = ModelBuilder()
    b.output(b.add(nn.ReLU, [b.input("x", [-1, 4])]).results[0], "y")
    with pytest.raises(IrforgeError, match="needs static shapes, 'an input'"):
        compile_model(b.finish())


def test_is_nan_runs_on_cpu_like_the_reference():
    x = np.array([[1.0, np.nan, -np.inf], [np.inf, 0.0, np.nan]], np.float32)
    model = one_op_model(nn.IsNaN, [x])
    np.testing.assert_array_equal(compile_model(model)({"x0": x})["y0"], run(model, {"x0": x})["y0"])
