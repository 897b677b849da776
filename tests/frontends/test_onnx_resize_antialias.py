"""ONNX Resize with antialias / exclude_outside (torch's `F.interpolate(..., antialias=True)`
through the dynamo exporter: cubic, antialias=1, exclude_outside=1), written as one constant
matrix product per resized axis: checked against onnxruntime on ref, cpu and OpenVINO."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import ort_session_run


def model(shape: list[int], attrs: dict[str, object], sizes: list[int] | None = None, scales: list[float] | None = None) -> object:  # type: ignore[no-untyped-def]
    inits, inputs = [], ["x", ""]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
        inputs.append("scales")
    else:
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
        inputs += ["", "sizes"]
    graph = helper.make_graph(
        [helper.make_node("Resize", inputs, ["y"], **attrs)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


CUBIC_AA = {"mode": "cubic", "antialias": 1, "exclude_outside": 1, "cubic_coeff_a": -0.75}


@pytest.mark.parametrize(("shape", "attrs", "sizes", "scales"), [
    ([1, 8, 24, 24], CUBIC_AA, [1, 8, 4, 4], None),                                  # naflexvit's position grid, dynamo
    ([1, 3, 20, 14], CUBIC_AA, [1, 3, 7, 9], None),                                   # two ratios, one of them non-integer
    ([1, 2, 16, 16], {"mode": "linear", "antialias": 1}, None, [1.0, 1.0, 0.5, 0.375]),  # scales: the transformation reads them
    ([1, 2, 6, 5], {"mode": "cubic", "exclude_outside": 1}, [1, 2, 11, 9], None),      # upsampling, exclude_outside alone
    ([2, 3, 9, 12], {"mode": "linear", "antialias": 1, "coordinate_transformation_mode": "align_corners"}, [2, 3, 9, 5], None),  # one axis
])  # fmt: skip
def test_antialiased_resize_matches_onnxruntime(tmp_path, shape, attrs, sizes, scales):
    proto = model(shape, attrs, sizes, scales)
    feeds = {"x": np.random.default_rng(1).standard_normal(shape).astype(np.float32)}
    (want,) = ort_session_run(proto, feeds)
    ir = import_onnx(proto)
    assert_close(np.asarray(run(ir, feeds)["y"]), want, what="ref vs onnxruntime")
    assert_close(np.asarray(compile_model(ir)(feeds)["y"]), want, what="cpu vs onnxruntime")
    write_ir_xml(ir, tmp_path / "m.xml")
    assert_close(run_openvino(tmp_path / "m.xml", feeds)["y"], want, what="OpenVINO vs onnxruntime")


def test_resizing_a_leading_axis_is_refused():
    with pytest.raises(IrforgeError, match="only the last two"):
        import_onnx(model([1, 4, 6, 6], CUBIC_AA, [1, 2, 6, 6]))
