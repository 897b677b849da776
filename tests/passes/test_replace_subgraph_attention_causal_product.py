"""replace-subgraph on GPT-1's attention (transformers' OpenAIGPTAttention): the causal mask
as a product, w * b + -1e4 * (1 - b) with b the 0/1 lower-triangular buffer, 1/sqrt(E) folded
into b by the exporter, then the padding mask added. Scores times a constant of 0s and one
value c whose zeros the later constant masks put at or below -1e4 are c * scores plus those
masks (`attention_chains.causal_product`): one nn.scaled_dot_product_attention that computes
what the graph did (onnxruntime) on ref, cpu and OpenVINO (the written IR, f32 hint: the
mask sum padding + causal is one the IR writer keeps from OpenVINO's shift folding). A
product whose zeros are not masked, or with more than one nonzero value, stays as it was."""

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

N, H, L, E = 1, 2, 6, 8
FMIN = np.finfo(np.float32).min


def gpt1(product: np.ndarray, fill: np.ndarray) -> onnx.ModelProto:
    """softmax(q @ k^T * product + fill + pad) @ v."""
    g = GraphBuilder()
    scores = g.node("MatMul", ["q", g.node("Transpose", ["k"], perm=[0, 1, 3, 2])])
    scores = g.node("Mul", [scores, g.tensor(product.astype(np.float32), "scale")])
    # HF's padding mask: (1 - attention_mask) * finfo.min, [N, 1, 1, L]
    keep = g.node("Reshape", [g.node("Cast", ["attention_mask"], to=onnx.TensorProto.FLOAT), g.tensor(np.array([N, 1, 1, L], np.int64), "heads")])
    pad = g.node("Mul", [g.node("Sub", [g.tensor(np.array(1.0, np.float32), "one"), keep]), g.tensor(np.array(FMIN, np.float32), "fmin")])
    scores = g.node("Add", [g.node("Add", [scores, g.tensor(fill.astype(np.float32), "causal")]), pad])
    y = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), "v"])
    vis = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [N, H, L, E]) for n in ("q", "k", "v")]
    vis.append(helper.make_tensor_value_info("attention_mask", onnx.TensorProto.INT64, [N, L]))
    graph = helper.make_graph(g.nodes, "gpt1", vis, [helper.make_empty_tensor_value_info(y)], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


B = np.tril(np.ones((1, 1, L, L), np.float32))


def feeds() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    x = {n: rng.standard_normal((N, H, L, E)).astype(np.float32) for n in ("q", "k", "v")}
    mask = np.ones((N, L), np.int64)
    mask[:, -2:] = 0  # padding of the last two keys
    return {**x, "attention_mask": mask}


def fused(proto: onnx.ModelProto):  # type: ignore[no-untyped-def]
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    return model, [op.name for op in model.func.body.block.ops].count("nn.scaled_dot_product_attention")


def test_causal_product_becomes_one_attention_and_matches(tmp_path):
    proto = gpt1(B / np.sqrt(E), -1e4 * (1 - B))
    x = feeds()
    (want,) = ort_session_run(proto, x)
    model, count = fused(proto)
    assert count == 1
    y = proto.graph.output[0].name
    assert_close(run(model, x)[y], want, what="ref vs onnxruntime")
    assert_close(compile_model(model)(x)[y], want, what="cpu vs onnxruntime")
    write_ir_xml(model, tmp_path / "m.xml")
    assert_close(run_openvino(tmp_path / "m.xml", x)[y], want, what="OpenVINO vs onnxruntime")


@pytest.mark.parametrize("case", ["unmasked zero", "two values"])
def test_other_products_are_left_alone(case):
    fill = -1e4 * (1 - B)
    product = B / np.sqrt(E)
    if case == "unmasked zero":
        fill[..., 0, L - 1] = -1.0  # a zero of the product whose logit is a real 0, not a mask
    else:
        product[..., 0, 0] = 2.0
    assert fused(gpt1(product, fill))[1] == 0
