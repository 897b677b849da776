"""Max pooling's indices and max unpooling alone in a model, written as IR XML and run by
OpenVINO (MaxPool-8/14's indices output; ScatterElementsUpdate into a Tile of zeros): outputs
match the reference interpreter, written ports the shapes OpenVINO infers."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.dialects import nn
from tests.backends.ir_xml_support import assert_op_runs_in_openvino_like_the_reference
from tests.backends.test_ir_xml_ops import case
from tests.helpers import one_op_model, rand

X = rand(2, 3, 7, 9, seed=70)


def unpool_indices(n: int, c: int, count: int, plane: int, seed: int) -> np.ndarray:
    """Distinct positions of a plane per (sample, channel), as a pooling would give."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(plane)[:count] for _ in range(n * c)]).astype(np.int64).reshape(n, c, count)


def unpool_cases():  # type: ignore[no-untyped-def]
    yield case(nn.MaxPoolIndices, [X], kernel=[2, 2], strides=[2, 2], rounding_type="ceil", id="max_pool_indices")
    yield case(nn.MaxPoolIndices, [X], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], axis=0, id="max_pool_indices-padded-axis0")
    yield case(nn.MaxPoolIndices, [X], kernel=[3, 2], strides=[2, 2], pads_begin=[1, 0], pads_end=[1, 0], rounding_type="ceil", axis=1, id="max_pool_indices-ceil-torch-axis1")
    values, indices = rand(2, 3, 4, 5, seed=71), unpool_indices(2, 3, 20, 63, seed=72).reshape(2, 3, 4, 5)
    yield case(nn.MaxUnpool, [values, indices], spatial=[7, 9], id="max_unpool")
    yield case(nn.MaxUnpool, [values], [indices.astype(np.int32)], spatial=[8, 10], id="max_unpool-i32-const")


UNPOOL_CASES = list(unpool_cases())


@pytest.mark.parametrize("cls, inputs, constants, num_results, props", UNPOOL_CASES)
def test_unpool_op_runs_in_openvino_like_the_reference(tmp_path, cls, inputs, constants, num_results, props):
    assert_op_runs_in_openvino_like_the_reference(tmp_path, cls, inputs, constants, num_results, props)


def test_max_pool_indices_point_at_the_maxima():
    model = one_op_model(nn.MaxPoolIndices, [X], kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
    pooled = one_op_model(nn.Pooling, [X], method="max", kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1])
    index, want = run(model, {"x0": X})["y0"], run(pooled, {"x0": X})["y0"]
    assert index.dtype == np.int64
    np.testing.assert_array_equal(np.take_along_axis(X.reshape(2, 3, -1), index.reshape(2, 3, -1), axis=2).reshape(want.shape), want)


def test_every_unpool_op_is_run_here():
    from irforge.dialects.nn import unpool

    ops = {op for op in nn.OPS if op.__module__ == unpool.__name__}
    assert ops - {p.values[0] for p in UNPOOL_CASES} == set()
