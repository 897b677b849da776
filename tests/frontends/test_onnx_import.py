"""The ONNX importer on small graphs: mapping, names, folding, external data and errors."""


import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def make_model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def conv_relu_model(with_shape_chain=False):
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    nodes = [
        helper.make_node("Conv", ["data", "w", "b"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu1"),
    ]
    if with_shape_chain:
        nodes += [
            helper.make_node("Shape", ["r"], ["s"], name="shape"),
            helper.make_node("Gather", ["s", "zero"], ["n"], name="gather", axis=0),
            helper.make_node("Unsqueeze", ["n", "zero1"], ["n1"], name="unsq"),
            helper.make_node("Concat", ["n1", "minus1"], ["target"], name="cat", axis=0),
            helper.make_node("Reshape", ["r", "target"], ["prob"], name="flatten"),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["r"], ["prob"], name="out"))
    inits = [w, b,
             numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array([0], np.int64), "zero1"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    return make_model(
        nodes,
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, None)],
        inits,
    )


def test_conv_relu_matches_onnxruntime_and_keeps_names():
    proto = conv_relu_model()
    model = import_onnx(proto)
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    got = run(model, {"data": x})
    assert list(got) == ["prob"]
    (want,) = ort_session_run(proto, {"data": x})
    np.testing.assert_allclose(got["prob"], want, rtol=1e-5, atol=1e-5)
    names = {op.layer_name.data for op in model.func.body.block.ops if getattr(op, "layer_name", None) is not None}
    assert {"conv1", "relu1"} <= names


def test_shape_subgraph_folds_to_a_constant_reshape():
    proto = conv_relu_model(with_shape_chain=True)
    model = import_onnx(proto)
    ops = [op.name for op in model.func.body.block.ops]
    assert "nn.reshape" in ops and "nn.gather" not in ops and "nn.concat" not in ops
    x = np.ones((1, 3, 8, 8), np.float32)
    np.testing.assert_allclose(run(model, {"data": x})["prob"], ort_session_run(proto, {"data": x})[0], rtol=1e-5, atol=1e-5)


def test_unsupported_ops_are_listed_in_one_error():
    proto = make_model(
        [
            helper.make_node("Relu", ["x"], ["a"], name="r"),
            helper.make_node("Foo", ["a"], ["b"], name="foo1", domain="custom"),
            helper.make_node("Bar", ["b"], ["c"], name="bar1"),
            helper.make_node("Bar", ["c"], ["y"], name="bar2"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(IrforgeError) as info:
        import_onnx(proto)
    text = str(info.value)
    assert "Bar x2 (bar1, bar2)" in text and "custom::Foo x1 (foo1)" in text
    assert "--extensions" in text and "\n" not in text


def test_cycle_is_reported():
    proto = make_model(
        [helper.make_node("Relu", ["b"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["b"], name="n2")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(IrforgeError, match="cycle through nodes n1, n2"):
        import_onnx(proto)


def test_unsorted_nodes_are_sorted():
    proto = make_model(
        [helper.make_node("Relu", ["a"], ["y"], name="second"), helper.make_node("Neg", ["x"], ["a"], name="first")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])],
    )
    x = np.array([-1, 0, 2], np.float32)
    np.testing.assert_array_equal(run(import_onnx(proto), {"x": x})["y"], [1, 0, 0])


def test_dynamic_batch_and_input_shape_override():
    proto = make_model(
        [helper.make_node("Relu", ["x"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    dynamic = import_onnx(proto)
    assert str(dynamic.func.function_type.inputs.data[0]) == "tensor<?x3xf32>"
    fixed = import_onnx(proto, {"x": [5, 3]})
    assert str(fixed.func.function_type.outputs.data[0]) == "tensor<5x3xf32>"
    with pytest.raises(IrforgeError, match="no input named z"):
        import_onnx(proto, {"z": [1]})


def test_external_data_is_memory_mapped(tmp_path):
    weights = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    proto = make_model(
        [helper.make_node("Gemm", ["x", "w"], ["y"], transB=1)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(weights, "w")],
    )
    path = tmp_path / "ext.onnx"
    onnx.save_model(proto, str(path), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="ext.data", size_threshold=0)
    model = import_onnx(path)
    stored = [model.store[n] for n in model.store]
    assert any(isinstance(a, np.memmap) or isinstance(a.base, np.memmap) for a in stored)
    x = np.ones((2, 32), np.float32)
    np.testing.assert_allclose(run(model, {"x": x})["y"], x @ weights.T, rtol=1e-5)
    (tmp_path / "ext.data").write_bytes(b"short")
    with pytest.raises(IrforgeError, match="truncated or inconsistent"):
        import_onnx(path)
    (tmp_path / "ext.data").unlink()
    with pytest.raises(IrforgeError, match="external data file 'ext.data'"):
        import_onnx(path)


@pytest.mark.parametrize("content, message", [(b"", "holds no ONNX graph"), (b"\x08\x07\x12\xff\xff", "not a valid ONNX model")])
def test_corrupt_files(tmp_path, content, message):
    path = tmp_path / "bad.onnx"
    path.write_bytes(content)
    with pytest.raises(IrforgeError, match=message):
        import_onnx(path)


def test_truncated_file(tmp_path):
    path = tmp_path / "t.onnx"
    data = conv_relu_model().SerializeToString()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(IrforgeError):
        import_onnx(path)


def test_missing_file():
    with pytest.raises(IrforgeError, match="not found"):
        import_onnx("/nonexistent/model.onnx")
