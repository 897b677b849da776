"""replace-subgraph on attention whose scores reach the softmax through a chain of scalings,
masks, a clamp and head views (`attention_chains.py`): HF CodeGen's (s + mask) / c,
SqueezeBERT's channel-first keys, XGLM's [B*H, L, S] scores viewed as [B, H, L, S] for the
mask and the clamp to float32's min, SEW-D's (DeBERTa's) k^T / c, Where mask and XSoftmax's
zeroing of the masked probabilities again (a row masked out entirely becomes 0), ViTDet's
decomposed relative positions on a [B*H, qh, qw, kh, kw] view of the scores. One nn.scaled_dot_product_attention that computes what
the graph did (onnxruntime), on ref and cpu."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.testing.onnx_models import GraphBuilder
from tests.helpers import ort_session_run

PIPELINE = "infer-shapes,canonicalize,replace-subgraph,canonicalize"
N, H, L, E = 1, 2, 6, 8
FMIN = np.finfo(np.float32).min


def info(name: str, shape: list[int], kind: int = onnx.TensorProto.FLOAT) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, helper.make_tensor_type_proto(kind, shape))


def chain_graph(form: str) -> onnx.ModelProto:
    g = GraphBuilder()
    if form == "codegen":  # (q @ k^T + mask) / sqrt(E), a second mask added after the scale
        scores = g.node("MatMul", ["q", g.node("Transpose", ["k"], perm=[0, 1, 3, 2])])
        scores = g.node("Add", [scores, "mask"])
        scores = g.node("Div", [scores, g.tensor(np.array(2.8284271, np.float32), "scale")])
        scores = g.node("Sub", [scores, "bias"])
        inputs = [info("q", [N, H, L, E]), info("k", [N, H, L, E]), info("mask", [N, 1, L, L]), info("bias", [1, H, 1, L])]
        v = info("v", [N, H, L, E])
    elif form == "squeezebert":  # keys [B, H*E, S] split into heads: already k^T
        kt = g.node("Reshape", ["keys", g.tensor(np.array([N, H, E, L], np.int64), "heads")])
        scores = g.node("Div", [g.node("MatMul", ["q", kt]), g.tensor(np.array(4.0, np.float32), "scale")])
        scores = g.node("Add", [scores, "mask"])
        inputs = [info("q", [N, H, L, E]), info("keys", [N, H * E, L]), info("mask", [N, 1, 1, L])]
        v = info("v", [N, H, L, E])
    elif form == "sew-d":  # k^T / c, a disentangled term, Where mask, XSoftmax's Where after the softmax, heads in the batch
        kt = g.node("Div", [g.node("Transpose", ["k"], perm=[0, 2, 1]), g.tensor(np.array([[[6.9]]], np.float32), "scale")])
        scores = g.node("Add", [g.node("MatMul", ["q", kt]), "c2p"])
        scores = g.node("Reshape", [scores, g.tensor(np.array([N, H, L, L], np.int64), "split")])
        scores = g.node("Where", ["drop", g.tensor(np.array(FMIN, np.float32), "fmin"), scores])
        probs = g.node("Where", ["drop", g.tensor(np.array(0.0, np.float32), "zero"), g.node("Softmax", [scores], axis=-1)])
        probs = g.node("Reshape", [probs, g.tensor(np.array([N * H, L, L], np.int64), "join")])
        g.node("MatMul", [probs, "v"], "attention")
        inputs = [info("q", [N * H, L, E]), info("k", [N * H, L, E]), info("c2p", [N * H, L, L]), info("drop", [N, 1, L, L], onnx.TensorProto.BOOL)]
        graph = helper.make_graph(g.nodes, form, [*inputs, info("v", [N * H, L, E])], [helper.make_empty_tensor_value_info(g.nodes[-1].output[0])], g.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    elif form == "vitdet":  # decomposed relative positions added on a [B*H, qh, qw, kh, kw] view of the scores
        q = g.node("Mul", ["q", g.tensor(np.array(0.35, np.float32), "scale")])
        scores = g.node("MatMul", [q, g.node("Transpose", ["k"], perm=[0, 2, 1])])
        scores = g.node("Reshape", [scores, g.tensor(np.array([N * H, 2, 3, 2, 3], np.int64), "grid")])
        scores = g.node("Add", [g.node("Add", [scores, "rel_h"]), "rel_w"])
        scores = g.node("Reshape", [scores, g.tensor(np.array([N * H, L, L], np.int64), "back")])
        inputs = [info("q", [N * H, L, E]), info("k", [N * H, L, E]), info("rel_h", [N * H, 2, 3, 2, 1]), info("rel_w", [N * H, 2, 3, 1, 3])]
        v = info("v", [N * H, L, E])
    else:  # xglm: [B*H, L, S] scores, the mask and the clamp on the [B, H, L, S] view
        scores = g.node("MatMul", [g.node("Mul", ["q", g.tensor(np.array(0.35, np.float32), "scale")]), g.node("Transpose", ["k"], perm=[0, 2, 1])])
        scores = g.node("Reshape", [scores, g.tensor(np.array([N, H, L, L], np.int64), "split")])
        scores = g.node("Max", [g.node("Add", [scores, "mask"]), g.tensor(np.array(FMIN, np.float32), "fmin")])
        scores = g.node("Reshape", [scores, g.tensor(np.array([N * H, L, L], np.int64), "join")])
        inputs = [info("q", [N * H, L, E]), info("k", [N * H, L, E]), info("mask", [N, 1, L, L])]
        v = info("v", [N * H, L, E])
    g.node("MatMul", [g.node("Softmax", [scores], axis=-1), "v"], "attention")
    graph = helper.make_graph(g.nodes, form, [*inputs, v], [helper.make_empty_tensor_value_info(g.nodes[-1].output[0])], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def feeds(proto: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    out = {vi.name: rng.standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim]).astype(np.float32) for vi in proto.graph.input}
    if "drop" in out:  # padding of the last key, and the first query row masked out entirely
        drop = np.zeros((N, 1, L, L), bool)
        drop[..., -1] = True
        drop[..., 0, :] = True
        out["drop"] = drop
        return out
    if "mask" not in out:
        return out
    mask = out["mask"]
    causal = np.broadcast_to(np.triu(np.ones((L, L), bool), 1), (*mask.shape[:-2], L, L)) if mask.shape[-2] == L else np.zeros(mask.shape, bool)
    masked = np.where(causal, FMIN, 0.0).astype(np.float32)
    masked[..., -1] = FMIN  # padding of the last key
    masked[..., 0, :] = -np.inf if proto.graph.name == "xglm" else masked[..., 0, :]  # a row masked out entirely: the clamp keeps it finite
    out["mask"] = masked
    return out


@pytest.mark.parametrize("form", ["codegen", "squeezebert", "xglm", "sew-d", "vitdet"])
def test_chained_attention_becomes_one_op_and_matches_onnxruntime(form):
    from irforge.backends.cpu import compile_model

    proto = chain_graph(form)
    x = feeds(proto)
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    names = [op.name for op in model.func.body.block.ops]
    assert names.count("nn.scaled_dot_product_attention") == 1, names
    assert "nn.softmax" not in names and "nn.matmul" not in names
    (want,) = ort_session_run(proto, x)
    assert np.isfinite(want).all()
    if form == "sew-d":
        assert not want[:, 0].any() and want[:, 1].any()  # the row masked out entirely is zeroed by the second Where
    np.testing.assert_allclose(next(iter(run(model, x).values())), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(next(iter(compile_model(model)(x).values())), want, rtol=1e-4, atol=1e-5)


def test_a_chain_read_elsewhere_is_left_alone():
    proto = chain_graph("codegen")
    middle = proto.graph.node[2].output[0]  # the masked scores, also a graph output
    proto.graph.output.append(helper.make_empty_tensor_value_info(middle))
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    assert "nn.scaled_dot_product_attention" not in [op.name for op in model.func.body.block.ops]
