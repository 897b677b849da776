"""nn.if / nn.loop written as OpenVINO If / Loop: the real OpenVINO runtime runs the IR like
onnxruntime runs the ONNX model, and irforge's reader reads it back to the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn.control_flow import If, Loop
from irforge.frontends.ir_xml.importer import read_ir_xml
from irforge.frontends.onnx.importer import import_onnx
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.frontends.test_onnx_control_flow import loop_model
from tests.frontends.test_onnx_control_flow_regions import counted_loop_model, data_if_model
from tests.helpers import ort_session_run, rand

CASES = {
    "if-then": (data_if_model, {"x": np.abs(rand(2, 3, seed=1))}, If),
    "if-else": (data_if_model, {"x": -np.abs(rand(2, 3, seed=1))}, If),
    "counted-loop": (counted_loop_model, {"x": rand(2, 3, seed=2), "n": np.array(4, np.int64)}, Loop),
    "while-loop": (lambda: loop_model(30, condition="data"), {"x": np.abs(rand(2, 3, seed=1)) + 1}, Loop),
    "long-loop": (lambda: loop_model(300), {"x": rand(2, 3, seed=1)}, Loop),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_openvino_runs_the_written_if_and_loop_like_onnxruntime(case, tmp_path):
    make, feeds, op = CASES[case]
    model = make()
    imported = import_onnx(model)
    xml, _ = write_ir_xml(imported, tmp_path / "m.xml")
    names = [o.name for o in model.graph.output]
    want = dict(zip(names, ort_session_run(model, feeds)))
    got = run_openvino(xml, feeds)
    for name in names:
        assert_close(got[name], want[name], rtol=1e-5, what=name)
    back = read_ir_xml(xml)
    assert any(isinstance(o, op) for o in back.func.body.block.ops)
    if case == "long-loop":  # a constant trip count and a condition that stays true: static, as OpenVINO has it
        assert [str(t) for t in back.func.function_type.outputs.data] == ["tensor<2x3xf32>", "tensor<300x2x3xf32>"]
    again = run(back, feeds)
    for name in names:
        assert_close(again[name], want[name], rtol=1e-6, what=f"read back: {name}")
    write_ir_xml(back, tmp_path / "b.xml")  # from the first read on, a fixed point
    write_ir_xml(read_ir_xml(tmp_path / "b.xml"), tmp_path / "c.xml")
    assert (tmp_path / "b.xml").read_text() == (tmp_path / "c.xml").read_text()


def test_zero_iteration_loop_reads_back(tmp_path):
    """(OpenVINO's CPU plugin refuses this one at run time: a carried value that grows has a
    body shape it cannot give to the initial value; irforge's reader and ref run it.)"""
    model = counted_loop_model()
    feeds = {"x": rand(2, 3, seed=2), "n": np.array(0, np.int64)}
    xml, _ = write_ir_xml(import_onnx(model), tmp_path / "m.xml")
    want = ort_session_run(model, feeds)
    got = list(run(read_ir_xml(xml), feeds).values())
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w)
