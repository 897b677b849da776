"""Stride-2 grouped convolutions on maps so small that a plane row is shorter than half a
vector (timm's RegNetZ-B16 at 64 px: a 576-channel 3x3 stride-2 layer of 36 groups on a 4x4
map, plane rows of 4). The phase kernel (`codegen/phases.py`) stored each row's last vector
whole, spilling 12 lanes over three rows: past the plane's end it zeroed the next plane's
first rows, already written, and the cpu backend came out 0.29 relative off. Checked against
onnxruntime on ref, cpu and OpenVINO (the IR written by irforge, f32 hint)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import phases as phases_codegen
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import ort_session_run


def model(c: int, hw: int, group: int, pads: list[int]) -> object:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(7)
    w = rng.standard_normal((c, c // group, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(c).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["y"], group=group, strides=[2, 2], pads=pads)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, c, hw, hw])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(bias, "b")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("c", "hw", "group", "pads"), [
    (576, 4, 36, [1, 1, 1, 1]),  # RegNetZ-B16's layer: rows of 4, spills of three rows
    (64, 6, 4, [1, 1, 1, 1]),    # rows of 4 over three plane rows
    (32, 3, 2, [1, 1, 1, 1]),    # a 3x3 map, 2 groups
    (32, 5, 4, [0, 0, 1, 1]),    # odd map, pads at the end only
    (64, 8, 4, [1, 1, 1, 1]),    # rows of 8: spills onto the next row only (as before)
])  # fmt: skip
@pytest.mark.parametrize("input_order", [True, False])
def test_small_grouped_stride2_conv_matches_onnxruntime(tmp_path, c, hw, group, pads, input_order, monkeypatch):
    monkeypatch.setattr(phases_codegen, "INPUT_ORDER", input_order)  # plane rows' spills in either order
    proto = model(c, hw, group, pads)
    feeds = {"x": np.random.default_rng(3).standard_normal((2, c, hw, hw)).astype(np.float32)}
    (want,) = ort_session_run(proto, feeds)
    ir = import_onnx(proto)
    assert_close(np.asarray(run(ir, feeds)["y"]), want, what="ref vs onnxruntime")
    compiled = compile_model(ir, cache_dir=False)
    assert "conv3x3" in [p.tag for p in compiled._executable.program.phases]  # the planes' GEMM
    assert_close(np.asarray(compiled(feeds)["y"]), want, what="cpu vs onnxruntime")
    write_ir_xml(ir, tmp_path / "m.xml")
    assert_close(run_openvino(tmp_path / "m.xml", feeds)["y"], want, what="OpenVINO vs onnxruntime")
