"""replace-subgraph on attention with the heads folded into the batch around a 4-D masked
softmax (HF BLOOM: alibi added to [B*H, L, S] scores, viewed as [B, H, L, S] for the mask
and the softmax, viewed back for the product with v; DeBERTa-v2's disentangled terms and
Where mask): one nn.scaled_dot_product_attention
that computes what the graph did (onnxruntime), on ref and cpu."""

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
N, H, L, E = 2, 3, 5, 8


def bloom_graph(mask: bool = True, split: tuple[int, ...] = (N, H, L, L), deberta: bool = False, joined: bool = True) -> onnx.ModelProto:
    """BLOOM: (q @ k^T) * c + alibi, split, + mask. DeBERTa-v2: q @ (k^T / c) + c2p + p2c
    (here given tensors: they are computed from q, k and the relative embeddings), split,
    Where(drop, float32 min, s)."""
    g = GraphBuilder()
    rng = np.random.default_rng(5)
    kt = g.node("Transpose", ["k"], perm=[0, 2, 1])
    if deberta:
        kt = g.node("Div", [kt, g.tensor(np.array([[[6.9]]], np.float32), "scale")])
    scores = g.node("MatMul", ["q", kt])
    if deberta:
        scores = g.node("Add", [scores, "c2p"])
        scores = g.node("Add", [scores, "p2c"])
    else:
        scores = g.node("Mul", [scores, g.tensor(np.array(0.35, np.float32), "inv_norm")])
        scores = g.node("Add", [scores, g.tensor(rng.standard_normal((N * H, 1, L)).astype(np.float32), "alibi")])
    scores = g.node("Reshape", [scores, g.tensor(np.array(split, np.int64), "split")])
    if deberta:
        scores = g.node("Where", ["drop", g.tensor(np.array(np.finfo(np.float32).min, np.float32), "fmin"), scores])
    elif mask:
        scores = g.node("Add", [scores, "mask"])
    probs = g.node("Softmax", [scores], axis=-1)
    if joined:
        probs = g.node("Reshape", [probs, g.tensor(np.array([N * H, L, L], np.int64), "join")])
    g.node("MatMul", [probs, "v"], "attention")
    vis = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [N * H, L, E]) for n in "qk"]
    # the dynamo export multiplies the [B, H, L, S] probabilities with v [B, H, S, E] directly
    vis.append(helper.make_tensor_value_info("v", onnx.TensorProto.FLOAT, [N * H, L, E] if joined else [N, H, L, E]))
    if deberta:
        vis += [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [N * H, L, L]) for n in ("c2p", "p2c")]
        vis.append(helper.make_tensor_value_info("drop", onnx.TensorProto.BOOL, [N, 1, L, L]))
    elif mask:
        vis.append(helper.make_tensor_value_info("mask", onnx.TensorProto.FLOAT, [N, 1, L, L]))
    graph = helper.make_graph(g.nodes, "bloom", vis, [helper.make_empty_tensor_value_info(g.nodes[-1].output[0])], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def feeds(proto: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(2)
    out = {vi.name: rng.standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim]).astype(np.float32) for vi in proto.graph.input}
    if "drop" in out:  # padding of the last key, and of the last query row entirely (DeBERTa masks both)
        drop = np.zeros((N, 1, L, L), bool)
        drop[1, ..., -1] = True
        drop[1, :, -1, :] = True
        out["drop"] = drop
    if "mask" in out:  # causal and padding as HF writes them: float32's min
        causal = np.triu(np.ones((L, L), bool), 1)
        out["mask"] = np.where(causal, np.finfo(np.float32).min, 0.0).astype(np.float32)[None, None].repeat(N, 0)
        out["mask"][1, ..., -1] = np.finfo(np.float32).min
    return out


@pytest.mark.parametrize("form", ["bloom", "bloom-no-mask", "deberta", "bloom-4d-v"])
def test_heads_in_batch_attention_becomes_one_op_and_matches_onnxruntime(form):
    from irforge.backends.cpu import compile_model

    proto = bloom_graph(mask=form != "bloom-no-mask", deberta=form == "deberta", joined=form != "bloom-4d-v")
    x = feeds(proto)
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    names = [op.name for op in model.func.body.block.ops]
    assert names.count("nn.scaled_dot_product_attention") == 1, names
    assert "nn.softmax" not in names and "nn.matmul" not in names
    (want,) = ort_session_run(proto, x)
    np.testing.assert_allclose(next(iter(run(model, x).values())), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(next(iter(compile_model(model)(x).values())), want, rtol=1e-4, atol=1e-5)


def test_a_reshape_that_mixes_heads_and_rows_is_left_alone():
    proto = bloom_graph(mask=False, split=(N, H * L, 1, L))  # not [B, H, L, S]: softmax over the same rows, other grouping
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    assert "nn.scaled_dot_product_attention" not in [op.name for op in model.func.body.block.ops]


def test_scores_viewed_to_2d_against_a_4d_v_are_left_alone_and_match():
    """GroupViT's grouping (dynamo): softmax over scores viewed to 2-D, times a 4-D v. The
    pattern once indexed the view as if 4-D (IndexError, the whole conversion failed)."""
    from irforge.backends.cpu import compile_model

    proto = bloom_graph(mask=False, split=(N * H * L, L), joined=False)
    x = feeds(proto)
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    assert "nn.scaled_dot_product_attention" not in [op.name for op in model.func.body.block.ops]
    (want,) = ort_session_run(proto, x)
    np.testing.assert_allclose(next(iter(run(model, x).values())), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(next(iter(compile_model(model)(x).values())), want, rtol=1e-4, atol=1e-5)
