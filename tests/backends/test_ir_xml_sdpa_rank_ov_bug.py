"""OpenVINO 2026.4.1's CPU plugin cannot compile a ScaledDotProductAttention whose q and k
share a rank below v's ("ReduceDecomposition supports only Reduce by last dimension", from
its snippets): GroupViT's dynamo export multiplies [H, L, S] probabilities of rank-3 q and k
with a rank-4 v [1, H, S, E], and the attention pattern fuses that as is. OpenVINO's own
ONNX frontend fails the same model the same way (the Softmax + MatMul it writes). The IR
writer gives q and k leading 1s up to v's rank first (same numbers, same output shape);
other rank mixes are written as before."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.testing.onnx_models import GraphBuilder
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import ort_session_run

H, L, S, E = 4, 6, 5, 8


def attention(v_shape: list[int], q_shape: list[int] = [H, L, E]) -> onnx.ModelProto:  # noqa: B006
    """softmax(q @ k^T * c) @ v, k of q's rank (GroupViT's dynamo export: v_shape [1, H, S, E])."""
    g = GraphBuilder()
    kt = g.node("Transpose", ["k"], perm=[*range(len(q_shape) - 2), len(q_shape) - 1, len(q_shape) - 2])
    scores = g.node("Mul", [g.node("MatMul", ["q", kt]), g.tensor(np.array(0.35, np.float32), "scale")])
    y = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), "v"])
    vis = [
        helper.make_tensor_value_info("q", onnx.TensorProto.FLOAT, q_shape),
        helper.make_tensor_value_info("k", onnx.TensorProto.FLOAT, [*q_shape[:-2], S, E]),
        helper.make_tensor_value_info("v", onnx.TensorProto.FLOAT, v_shape),
    ]
    graph = helper.make_graph(g.nodes, "attention", vis, [helper.make_empty_tensor_value_info(y)], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def check(tmp_path, proto: onnx.ModelProto) -> str:  # type: ignore[no-untyped-def]
    """OpenVINO on the written IR, ref and cpu against onnxruntime; returns the IR XML."""
    rng = np.random.default_rng(4)
    feeds = {vi.name: rng.standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim]).astype(np.float32) for vi in proto.graph.input}
    (want,) = ort_session_run(proto, feeds)
    y = proto.graph.output[0].name
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert [op.name for op in model.func.body.block.ops].count("nn.scaled_dot_product_attention") == 1
    assert_close(run(model, feeds)[y], want, what="ref vs onnxruntime")
    assert_close(compile_model(model)(feeds)[y], want, what="cpu vs onnxruntime")
    write_ir_xml(model, tmp_path / "m.xml")
    assert_close(run_openvino(tmp_path / "m.xml", feeds)[y], want, what="OpenVINO vs onnxruntime")
    return (tmp_path / "m.xml").read_text()


def test_rank3_q_and_k_with_rank4_v_compiles_and_matches_in_openvino(tmp_path):
    xml = check(tmp_path, attention([1, H, S, E]))
    assert xml.count('type="Unsqueeze"') == 2  # the workaround's form: q and k to rank 4


@pytest.mark.parametrize(("q_shape", "v_shape"), [([H, L, E], [H, S, E]), ([1, H, L, E], [1, H, S, E])])
def test_equal_ranks_are_written_as_before(tmp_path, q_shape, v_shape):
    assert 'type="Unsqueeze"' not in check(tmp_path, attention(v_shape, q_shape))
