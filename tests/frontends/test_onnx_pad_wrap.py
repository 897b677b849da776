"""ONNX Pad mode 'wrap' (opset 19), imported as Tile + Slice per padded axis: against
onnxruntime on ref, cpu and OpenVINO through our IR."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def wrap_pad(x_shape, pads):  # type: ignore[no-untyped-def]
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "p"], ["y"], mode="wrap")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(pads, np.int64), "p")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@pytest.mark.parametrize(
    "pads",
    [[0, 1, 2, 0, 2, 1], [1, 0, 0, 0, 0, 3], [0, 7, 0, 0, 5, 0]],  # the last wider than the axis (4): wraps twice
    ids=["two-axes", "first-and-last", "wider-than-axis"],
)
def test_wrap_pad_matches_onnxruntime_on_ref_cpu_and_openvino(tmp_path, pads):
    from tests.backends.ir_xml_support import run_openvino

    x = np.arange(2 * 4 * 3, dtype=np.float32).reshape(2, 4, 3)
    proto = wrap_pad([2, 4, 3], pads)
    (want,) = ort_session_run(proto, {"x": x})
    model = import_onnx(proto)
    np.testing.assert_array_equal(run(model, {"x": x})["y"], want)
    np.testing.assert_array_equal(compile_model(model)({"x": x})["y"], want)
    write_ir_xml(model, tmp_path / "m.xml")
    np.testing.assert_array_equal(run_openvino(tmp_path / "m.xml", {"x": x})["y"], want)


def test_wrap_pad_of_a_dynamic_axis_is_refused():
    with pytest.raises(IrforgeError, match="Pad mode 'wrap' needs axis 0 known"):
        import_onnx(wrap_pad(["n", 4, 3], [1, 0, 0, 0, 0, 0]))
