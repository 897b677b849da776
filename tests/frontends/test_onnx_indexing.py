"""ONNX indexing ops the importer rewrites: GatherND with constant indices as a Gather of rows
(what torch.export writes for mask expansion), GatherElements on a larger data, Trilu."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def one_node(op, x_shape, const, **attrs):  # type: ignore[no-untyped-def]
    node = helper.make_node(op, ["x", "c"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(const, "c")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def check(proto, x):  # type: ignore[no-untyped-def]
    model = import_onnx(proto)
    (want,) = ort_session_run(proto, {"x": x})
    np.testing.assert_array_equal(run(model, {"x": x})["y"], want)
    return model


def test_gather_nd_with_constant_indices_is_a_gather_of_rows_and_runs_on_cpu():
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    proto = one_node("GatherND", [2, 3, 4], np.array([[[0, 1], [1, -1]], [[1, 0], [0, 2]]], np.int64))
    model = check(proto, x)
    assert "nn.gather_nd" not in {op.name for op in model.func.body.block.ops}
    (want,) = ort_session_run(proto, {"x": x})
    np.testing.assert_array_equal(compile_model(model)({"x": x})["y"], want)


def test_gather_nd_constant_indices_out_of_range_is_a_one_line_error():
    proto = one_node("GatherND", [2, 3, 4], np.array([[2, 0]], np.int64))
    with pytest.raises(IrforgeError, match="GatherND indices out of range for data dims"):
        import_onnx(proto)


def test_gather_elements_on_larger_data_slices_it_first():
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    check(one_node("GatherElements", [4, 5], np.array([[3, 0], [1, 2]], np.int64), axis=0), x)


@pytest.mark.parametrize("upper", [0, 1])
def test_trilu_with_constant_k(upper):
    x = np.random.default_rng(2).standard_normal((2, 4, 5)).astype(np.float32)
    check(one_node("Trilu", [2, 4, 5], np.array(-1, np.int64), upper=upper), x)
