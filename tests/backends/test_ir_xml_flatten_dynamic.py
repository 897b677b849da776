"""nn.flatten whose dims on both sides of the axis are dynamic (Mask R-CNN flattens its
[boxes, classes, h, w] masks at axis 2): the IR computes the two products from ShapeOf at
run time (ShapeOf -> Gather -> ReduceProd -> Concat -> Reshape); OpenVINO runs it as
onnxruntime does."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from irforge.backends.ir_xml import write_ir_xml
from irforge.frontends.onnx import import_onnx
from tests.backends.ir_xml_support import run_openvino
from tests.helpers import ort_session_run


@pytest.mark.parametrize("axis", [2, 3])
def test_flatten_with_both_sides_dynamic_runs_in_openvino(tmp_path, axis):
    x = helper.make_tensor_value_info("x", helper.TensorProto.FLOAT, ["n", 3, "h", "w"])
    y = helper.make_tensor_value_info("y", helper.TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Flatten", ["x"], ["y"], axis=axis)], "g", [x], [y])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model = import_onnx(proto)
    write_ir_xml(model, tmp_path / "m.xml")
    for shape in ((2, 3, 4, 5), (0, 3, 2, 1)):
        feeds = {"x": np.random.default_rng(0).standard_normal(shape).astype(np.float32)}
        got = run_openvino(tmp_path / "m.xml", feeds)["y"]
        want = ort_session_run(proto, feeds)[0]
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
