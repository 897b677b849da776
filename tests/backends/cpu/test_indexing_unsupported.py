"""The indexing family has no CPU kernels yet: compiling names the op (static shapes) or the
dynamic dim (NonZero, Range), never a wrong result."""

import pytest

from irforge.backends.cpu import compile_model
from irforge.dialects import nn
from irforge.errors import IrforgeError
from tests.helpers import one_op_model, rand


def test_top_k_is_refused_by_name():
    with pytest.raises(IrforgeError, match="no CPU kernel for nn.top_k"):
        compile_model(one_op_model(nn.TopK, [rand(3, 4)], num_results=2, k=2))


def test_non_zero_is_refused_for_its_dynamic_size():
    with pytest.raises(IrforgeError, match="needs static shapes, 'nn.non_zero'"):
        compile_model(one_op_model(nn.NonZero, [rand(3, 4)]))


def test_is_nan_runs_on_cpu_like_the_reference():
    import numpy as np

    from irforge.backends.reference import run

    x = np.array([[1.0, np.nan, -np.inf], [np.inf, 0.0, np.nan]], np.float32)
    model = one_op_model(nn.IsNaN, [x])
    np.testing.assert_array_equal(compile_model(model)({"x0": x})["y0"], run(model, {"x0": x})["y0"])
