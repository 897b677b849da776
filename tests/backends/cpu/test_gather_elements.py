"""GatherElements' native kernel (session 11; a numpy host step before): DeBERTa's
relative-position scores gather along the last axis every layer. Checked against onnxruntime
on ref and cpu (arena NaN-filled), every axis position, run-time i32 / i64 indices with
negative ones, fewer indices than data along the axis, f32 and i64 data, 1 and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ort_session_run

ONNX_TYPE = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def _model(data: np.ndarray, indices: np.ndarray, axis: int):  # type: ignore[no-untyped-def]
    """y = GatherElements(x, index, axis) + nothing else: both run-time inputs."""
    node = helper.make_node("GatherElements", ["x", "index"], ["y"], axis=axis)
    graph = helper.make_graph([node], "gather_elements", [
        helper.make_tensor_value_info("x", ONNX_TYPE[data.dtype.type], list(data.shape)),
        helper.make_tensor_value_info("index", ONNX_TYPE[indices.dtype.type], list(indices.shape)),
    ], [helper.make_tensor_value_info("y", ONNX_TYPE[data.dtype.type], list(indices.shape))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


CASES = [  # data shape, index shape, axis
    ((1, 3, 8, 20), (1, 3, 8, 8), -1),  # DeBERTa's c2p: keys gathered from 2 x span positions
    ((2, 5, 7), (2, 5, 7), 1),  # a middle axis: inner rows of 7
    ((6, 4, 3), (2, 4, 3), 0),  # the first axis, fewer indices than data
    ((3, 33), (3, 40), 1),  # more indices than data along the axis (repeats)
]


@pytest.mark.parametrize("data_shape,index_shape,axis", CASES)
@pytest.mark.parametrize("index_type", [np.int64, np.int32])
def test_gather_elements_matches_onnxruntime(data_shape, index_shape, axis, index_type, tmp_path) -> None:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    size = data_shape[axis]
    data = rng.standard_normal(data_shape).astype(np.float32)
    indices = rng.integers(-size, size, index_shape).astype(index_type)  # negative ones count from the end
    proto, feeds = _model(data, indices, axis), {"x": data, "index": indices}
    want = ort_session_run(proto, feeds)[0]
    model = import_onnx(proto)
    np.testing.assert_array_equal(run(model, feeds)["y"], want)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=tmp_path)
        assert not compiled._executable.program.host_steps  # the native kernel, not numpy
        assert any(p.function.endswith("_gather_elements") for p in compiled._executable.program.phases)
        got = compiled(feeds)["y"]
        np.testing.assert_array_equal(got, want)
        matches_reference(compiled, model, feeds, rtol=0, atol=0)


def test_gather_elements_of_integers_matches_onnxruntime(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """i64 data (RoBERTa-style position tables): copied as 8-byte integers."""
    rng = np.random.default_rng(1)
    data = rng.integers(-(1 << 40), 1 << 40, (4, 9)).astype(np.int64)
    indices = rng.integers(0, 9, (4, 5)).astype(np.int64)
    proto, feeds = _model(data, indices, 1), {"x": data, "index": indices}
    want = ort_session_run(proto, feeds)[0]
    model = import_onnx(proto)
    compiled = compile_model(model, threads=2, cache_dir=tmp_path)
    try:
        assert not compiled._executable.program.host_steps
        np.testing.assert_array_equal(compiled(feeds)["y"], want)
    finally:
        compiled.close()
