"""A Slice feeding GatherElements' data (YOLO26's pose/seg/obb heads: the class, box and
keypoint channels sliced from one tensor, each gathered by the top-k anchors) against
onnxruntime on ref, cpu and OpenVINO: OpenVINO 2026.4 drops a Slice-8 from 0 on a
non-gather axis there and then refuses the GatherElements, so the IR writer emits a
StridedSlice for it."""

from __future__ import annotations

import defusedxml.ElementTree as ET
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import ort_session_run


def sliced_gather(start: int, stop: int):  # type: ignore[no-untyped-def]
    """x [1, 6, 5] -> Slice channels [start, stop) of axis 2 -> GatherElements along axis 1."""
    consts = [numpy_helper.from_array(np.array([v], np.int64), n) for v, n in ((start, "s"), (stop, "e"), (2, "a"))]
    nodes = [helper.make_node("Slice", ["x", "s", "e", "a"], ["d"]), helper.make_node("GatherElements", ["d", "i"], ["y"], axis=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 5]),
                                           helper.make_tensor_value_info("i", TensorProto.INT64, [1, 3, stop - start])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], consts)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("start", "stop"), [(0, 2), (2, 5), (1, 4)])
def test_slice_into_gather_elements_matches_onnxruntime(start, stop, tmp_path):
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal((1, 6, 5)).astype(np.float32), "i": rng.integers(0, 6, (1, 3, stop - start)).astype(np.int64)}
    proto = sliced_gather(start, stop)
    want = ort_session_run(proto, feeds)[0]
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    np.testing.assert_array_equal(next(iter(run(model, feeds).values())), want)
    np.testing.assert_array_equal(next(iter(compile_model(model)(feeds).values())), want)
    xml = tmp_path / "m.xml"
    write_ir_xml(model, xml)
    assert [layer.get("type") for layer in ET.parse(xml).getroot().iter("layer") if "Slice" in layer.get("type")] == ["StridedSlice"]
    assert_close(next(iter(run_openvino(xml, feeds).values())), want)
