"""A declared 0 dim of an ONNX input stays 0 (an empty tensor, as onnxruntime reads it); a
dim_param or a missing dim_value stays dynamic. Ops on empty tensors run on ref and cpu:
reductions over no elements give the operation's identity."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def one_node(op, x_shape, **attrs):  # type: ignore[no-untyped-def]
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def input_dims(model) -> list[int]:  # type: ignore[no-untyped-def]
    return list(model.func.args[0].type.get_shape())


def test_declared_zero_stays_zero_and_dim_param_stays_dynamic():
    assert input_dims(import_onnx(one_node("Relu", [0, 3]))) == [0, 3]
    assert input_dims(import_onnx(one_node("Relu", ["n", 3]))) == [DYN, 3]


EMPTY_CASES = [("Relu", {}), ("ReduceMax", {"axes": [1]}), ("ReduceMin", {"axes": [1]}), ("ReduceProd", {"axes": [1]}),
     ("ReduceL1", {"axes": [1]}), ("ReduceMean", {"axes": [1]}), ("ReduceLogSumExp", {"axes": [1]}), ("ReduceL2", {"axes": [1]}), ("ReduceMax", {"axes": [0]})]  # fmt: skip


@pytest.mark.parametrize(("op", "attrs"), EMPTY_CASES)
def test_ops_on_an_empty_input_match_onnxruntime_on_ref_and_cpu(op, attrs):
    proto = one_node(op, [2, 0, 3], **attrs)
    x = np.zeros((2, 0, 3), np.float32)
    (want,) = ort_session_run(proto, {"x": x})
    model = import_onnx(proto)
    with np.errstate(divide="ignore"):
        got = run(model, {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    got = compile_model(model)({"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("op", "attrs"), EMPTY_CASES)
def test_ops_on_an_empty_input_through_openvino_match_onnxruntime(tmp_path, op, attrs):
    """A reduction over no elements is written as its identity (OpenVINO's ReduceMax would give
    the lowest finite float, not -inf)."""
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto = one_node(op, [2, 0, 3], **attrs)
    x = np.zeros((2, 0, 3), np.float32)
    (want,) = ort_session_run(proto, {"x": x})
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
