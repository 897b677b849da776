"""An int64 Einsum (BigBird's block-sparse band mask, `blq,blk->blqk` of the int64 attention
mask) imports as an int64 MatMul; the CPU backend runs it as an exact host step and matches
onnxruntime."""

import numpy as np
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.helpers import ort_session_run


def test_int64_einsum_on_cpu_matches_onnxruntime():
    nodes = [helper.make_node("Einsum", ["a", "b"], ["y"], equation="blq,blk->blqk")]
    graph = helper.make_graph(nodes, "band", [helper.make_tensor_value_info("a", TensorProto.INT64, [1, 4, 3]),
                                              helper.make_tensor_value_info("b", TensorProto.INT64, [1, 4, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [1, 4, 3, 5])])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    rng = np.random.default_rng(0)
    # products beyond 2**24: float32 arithmetic would round them
    feeds = {"a": rng.integers(-2**14, 2**14, (1, 4, 3)).astype(np.int64), "b": rng.integers(2**12, 2**14, (1, 4, 5)).astype(np.int64)}
    (want,) = ort_session_run(proto, feeds)
    got = next(iter(compile_model(model)(feeds).values()))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
