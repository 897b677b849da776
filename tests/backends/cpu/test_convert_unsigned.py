"""An INT8 model's u8 weights dequantised for a Gather (onnxruntime's QDQ quantizer on an
embedding table): the CPU backend converts u8 to f32 as a host step (its generated code has
no u8 lanes) and matches onnxruntime."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.helpers import ort_session_run


def quantized_embedding() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    table = numpy_helper.from_array(rng.integers(0, 256, (20, 8)).astype(np.uint8), "table")
    scale = numpy_helper.from_array(np.array(0.05, np.float32), "scale")
    zero = numpy_helper.from_array(np.array(128, np.uint8), "zero")
    nodes = [helper.make_node("DequantizeLinear", ["table", "scale", "zero"], ["weights"]),
             helper.make_node("Gather", ["weights", "ids"], ["embedded"])]
    graph = helper.make_graph(nodes, "embedding", [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 6])],
                              [helper.make_tensor_value_info("embedded", TensorProto.FLOAT, [1, 6, 8])], [table, scale, zero])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_u8_weights_dequantised_on_cpu_match_onnxruntime():
    proto = quantized_embedding()
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert any(op.name == "nn.convert" for op in model.func.body.block.ops)  # the u8 weights stay u8 in the IR
    ids = np.array([[0, 3, 19, 7, 7, 12]], np.int64)
    (want,) = ort_session_run(proto, {"ids": ids})
    got = next(iter(compile_model(model)({"ids": ids}).values()))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)
