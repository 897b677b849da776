"""OpenVINO 2026.4.1's CPU plugin computes (1 - m) * finfo.min + C (HF's padding mask plus a
constant mask) as m * -finfo.min + (finfo.min + C): the f32 shift rounds C away, so a causal
-1e4 reads 0 (its own ONNX frontend alike). The IR writer computes such a sum one rank up and
squeezes it back (`hits_ov_affine_shift_bug`): the same numbers, which OpenVINO then gets
right; any other sum is written as one Add."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.testing.onnx_models import GraphBuilder
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import ort_session_run

L = 6
FMIN = np.finfo(np.float32).min


def masks(scale: float) -> onnx.ModelProto:
    """(1 - cast(ids)) * scale + C, C the causal -1e4 mask [1, 1, L, L]."""
    g = GraphBuilder()
    keep = g.node("Reshape", [g.node("Cast", ["ids"], to=onnx.TensorProto.FLOAT), g.tensor(np.array([1, 1, 1, L], np.int64), "heads")])
    pad = g.node("Mul", [g.node("Sub", [g.tensor(np.array(1.0, np.float32), "one"), keep]), g.tensor(np.array(scale, np.float32), "scale")])
    causal = (-1e4 * (1 - np.tril(np.ones((1, 1, L, L))))).astype(np.float32)
    y = g.node("Add", [pad, g.tensor(causal, "causal")])
    vis = [helper.make_tensor_value_info("ids", onnx.TensorProto.INT64, [1, L])]
    graph = helper.make_graph(g.nodes, "masks", vis, [helper.make_empty_tensor_value_info(y)], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("scale", "squeezed"), [(float(FMIN), True), (-1e4, False)])
def test_padding_plus_constant_mask_matches_in_openvino(tmp_path, scale, squeezed):
    proto = masks(scale)
    feeds = {"ids": np.array([[1, 1, 1, 1, 0, 0]], np.int64)}
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    y = proto.graph.output[0].name
    assert_close(run(model, feeds)[y], want, what="ref vs onnxruntime")
    write_ir_xml(model, tmp_path / "m.xml")
    assert ('type="Squeeze"' in (tmp_path / "m.xml").read_text()) == squeezed
    assert_close(run_openvino(tmp_path / "m.xml", feeds)[y], want, what="OpenVINO vs onnxruntime")
