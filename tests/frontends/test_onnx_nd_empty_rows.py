"""GatherND / ScatterND on data whose rows are empty (a 0 dim after the indexed ones), as
Swin3D's dynamo export folds while building its shifted-window mask: the row count is
spelled out (numpy cannot infer -1 next to a 0). Against onnxruntime, ref and cpu."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


@pytest.mark.parametrize("op", ["ScatterND", "GatherND"])
def test_nd_ops_on_empty_rows_match_onnxruntime(op):
    data = np.zeros((3, 0, 2), np.float32)
    inits = [numpy_helper.from_array(np.array([[1], [0]], np.int64), "i")]
    if op == "ScatterND":
        inits.append(numpy_helper.from_array(np.zeros((2, 0, 2), np.float32), "u"))
    node = helper.make_node(op, ["d", "i", "u"] if op == "ScatterND" else ["d", "i"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("d", TensorProto.FLOAT, [3, 0, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    (want,) = ort_session_run(proto, {"d": data})
    model = import_onnx(proto)
    assert run(model, {"d": data})["y"].shape == want.shape
    compiled = compile_model(model)
    try:
        assert compiled({"d": data})["y"].shape == want.shape
    finally:
        compiled.close()
