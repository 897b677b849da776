"""replace-subgraph on attention as torch's exporters and HF transformers write it: scale on
q and k, boolean masks applied with Where, the dynamo IsNaN guard, bias plus mask: one
nn.scaled_dot_product_attention that computes what the graph did (onnxruntime)."""

from __future__ import annotations

import math

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
N, H, L, S, E = 2, 3, 5, 5, 8
NINF = np.array(-np.inf, np.float32)
FMIN = np.array(np.finfo(np.float32).min, np.float32)


def attention_graph(form: str) -> onnx.ModelProto:
    g = GraphBuilder()
    rng = np.random.default_rng(7)
    root = g.tensor(np.array(math.sqrt(1 / math.sqrt(E)), np.float32), "sqrt_scale")
    q, kt = "q", g.node("Transpose", ["k"], perm=[0, 1, 3, 2]) if form != "seq-first" else ""
    inputs = {"q": [N, H, L, E], "k": [N, H, S, E], "v": [N, H, S, E]}
    if form == "dynamo-vit":  # k^T as Reshape -> Transpose -> Reshape, scale on both, a zero mask, the guard
        flat = g.node("Reshape", ["k", g.tensor(np.array([-1, S, E], np.int64), "flat")])
        kt = g.node("Reshape", [g.node("Transpose", [flat], perm=[0, 2, 1]), g.tensor(np.array([N, H, E, S], np.int64), "back")])
    v = "v"
    if form == "dynamo-gqa":  # one key/value head repeated for the 3 query heads (LLaMA's repeat_kv), k^T folded
        inputs.update(k=[N, 1, S, E], v=[N, 1, S, E])
        repeat = g.tensor(np.array([N, 1, H, S, E], np.int64), "repeat")
        k5 = g.node("Expand", [g.node("Unsqueeze", ["k", g.tensor(np.array([2], np.int64), "axis2")]), repeat])
        flat = g.node("Reshape", [k5, g.tensor(np.array([N * H, S, E], np.int64), "flat")])
        kt = g.node("Reshape", [g.node("Transpose", [flat], perm=[0, 2, 1]), g.tensor(np.array([N, H, E, S], np.int64), "back")])
        v5 = g.node("Expand", [g.node("Unsqueeze", ["v", g.tensor(np.array([2], np.int64), "vaxis2")]), repeat])
        v = g.node("Reshape", [v5, g.tensor(np.array([N, H, S, E], np.int64), "vheads")])
    if form == "seq-first":  # nn.MultiheadAttention through dynamo: rows [S, N*H, E], k^T one Transpose
        inputs.update(q=[L, N * H, E], k=[S, N * H, E], v=[S, N * H, E])
        q = g.node("Reshape", [g.node("Transpose", ["q"], perm=[1, 0, 2]), g.tensor(np.array([N, H, L, E], np.int64), "qheads")])
        kt = g.node("Reshape", [g.node("Transpose", ["k"], perm=[1, 2, 0]), g.tensor(np.array([N, H, E, S], np.int64), "kheads")])
        v = g.node("Reshape", [g.node("Transpose", ["v"], perm=[1, 0, 2]), g.tensor(np.array([N, H, S, E], np.int64), "vheads")])
    if form in ("torchscript", "dynamo-guard", "dynamo-vit", "dynamo-gqa", "seq-first"):  # the scale split between q and k^T
        q, kt = g.node("Mul", [q, root]), g.node("Mul", [kt, root])
    scores = g.node("MatMul", [q, kt]) if form != "einsum" else g.node("Einsum", [g.node("Mul", [q, root]), "k"], equation="bhld,bhsd->bhls")
    if form == "torchscript":  # boolean mask as an additive -inf mask
        additive = g.node("Where", ["keep", g.tensor(np.array(0.0, np.float32), "zero"), g.tensor(NINF, "ninf")])
        scores = g.node("Add", [scores, additive])
    elif form in ("dynamo-guard", "dynamo-gqa"):  # a fully masked row: NaN softmax, guarded to 0
        scores = g.node("Where", ["keep", scores, g.tensor(NINF, "ninf")])
    elif form == "gpt2":
        scores = g.node("Div", [scores, g.tensor(np.array(math.sqrt(E), np.float32), "d")])
        scores = g.node("Where", ["keep", scores, g.tensor(FMIN, "fmin")])
    elif form == "where-drop":
        scores = g.node("Mul", [scores, g.tensor(np.array(0.3, np.float32), "c")])
        scores = g.node("Where", ["drop", g.tensor(FMIN, "fmin"), scores])
    elif form == "swin-bias-mask":
        scores = g.node("Mul", [scores, g.tensor(np.array(0.25, np.float32), "c")])
        scores = g.node("Add", [scores, g.tensor(rng.standard_normal((H, L, S)).astype(np.float32), "bias")])
        scores = g.node("Add", [scores, "mask"])
    elif form == "dynamo-vit":
        scores = g.node("Add", [scores, g.tensor(np.zeros((L, S), np.float32), "zeros")])
    elif form == "swinv2":  # per-head logit scale, relative bias, the window mask added twice between reshapes
        scores = g.node("Mul", [scores, g.tensor(rng.uniform(1, 10, (H, 1, 1)).astype(np.float32), "logit_scale")])
        scores = g.node("Add", [scores, g.tensor(rng.standard_normal((H, L, S)).astype(np.float32), "bias")])
        windows = g.node("Reshape", [scores, g.tensor(np.array([1, N, H, L, S], np.int64), "per_window")])
        window_mask = g.tensor(np.where(rng.uniform(size=(1, N, 1, L, S)) > 0.3, 0.0, -100.0).astype(np.float32), "window_mask")
        windows = g.node("Add", [g.node("Add", [windows, window_mask]), window_mask])
        scores = g.node("Reshape", [windows, g.tensor(np.array([-1, H, L, S], np.int64), "back")])
    elif form == "einsum":  # MaxViT: the scale on q, Einsum for both products, a relative bias
        scores = g.node("Add", [scores, g.tensor(rng.standard_normal((H, L, S)).astype(np.float32), "bias")])
    elif form == "gpt-neo":  # unscaled, a causal Where then the padding mask added
        scores = g.node("Add", [g.node("Where", ["keep", scores, g.tensor(FMIN, "fmin")]), "mask"])
    elif form == "where-drop-ninf-mask":
        scores = g.node("Mul", [scores, g.tensor(np.array(0.3, np.float32), "c")])
        scores = g.node("Add", ["mask", g.node("Where", ["drop", g.tensor(NINF, "ninf"), scores])])
    elif form == "funnel":  # relative attention: the content scores plus two position terms, minus INF * (1 - mask)
        scores = g.node("Add", [scores, g.tensor(rng.standard_normal((N, H, L, S)).astype(np.float32), "positional")])
        scores = g.node("Add", [scores, g.tensor(rng.standard_normal((N, H, L, S)).astype(np.float32), "token_type")])
        scores = g.node("Sub", [scores, "mask"])
    elif form == "sub-only":
        scores = g.node("Sub", [scores, "mask"])
    probs = g.node("Softmax", [scores], axis=-1)
    if form in ("dynamo-guard", "dynamo-vit", "dynamo-gqa"):
        probs = g.node("Where", [g.node("IsNaN", [probs]), g.tensor(np.array(0.0, np.float32), "z"), probs])
    if form == "einsum":
        g.node("Einsum", [probs, "v"], "attention", equation="bhls,bhsd->bhld")
    else:
        g.node("MatMul", [probs, v], "attention")
    vis = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, s) for n, s in inputs.items()]
    if form in ("torchscript", "dynamo-guard", "gpt2", "gpt-neo", "dynamo-gqa"):
        vis.append(helper.make_tensor_value_info("keep", onnx.TensorProto.BOOL, [N, 1, L, S]))
    if form in ("where-drop", "where-drop-ninf-mask"):
        vis.append(helper.make_tensor_value_info("drop", onnx.TensorProto.BOOL, [1, 1, L, S]))
    if form in ("swin-bias-mask", "gpt-neo", "where-drop-ninf-mask", "funnel", "sub-only"):
        vis.append(helper.make_tensor_value_info("mask", onnx.TensorProto.FLOAT, [N, 1, L, S]))
    graph = helper.make_graph(g.nodes, "attention", vis, [helper.make_empty_tensor_value_info(g.nodes[-1].output[0])], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def feeds(proto: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    out = {}
    for vi in proto.graph.input:
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        if vi.type.tensor_type.elem_type == onnx.TensorProto.BOOL:
            mask = np.tril(np.ones(dims[-2:], bool)) & (rng.uniform(size=dims) > 0.3)
            mask[..., 0, :] = vi.name == "drop"  # one row masked out entirely
            out[vi.name] = mask
        else:
            out[vi.name] = rng.standard_normal(dims).astype(np.float32)
            if vi.name == "mask":  # padding as HF writes it: float32's min, which overflows to -inf added to a fill
                out[vi.name][..., -1] = FMIN
    return out


@pytest.mark.parametrize("form", ["torchscript", "dynamo-guard", "dynamo-vit", "gpt2", "where-drop", "swin-bias-mask", "unscaled",
                                  "gpt-neo", "where-drop-ninf-mask", "swinv2", "einsum", "dynamo-gqa", "seq-first",
                                  "funnel", "sub-only"])
def test_exported_attention_becomes_one_op_and_matches_onnxruntime(form):
    proto = attention_graph(form)
    x = feeds(proto)
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    names = [op.name for op in model.func.body.block.ops]
    assert names.count("nn.scaled_dot_product_attention") == 1, names
    assert "nn.softmax" not in names and "nn.matmul" not in names
    (want,) = ort_session_run(proto, x)
    got = next(iter(run(model, x).values()))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_where_fill_that_is_not_a_mask_is_left_alone():
    proto = attention_graph("gpt2")
    for t in proto.graph.initializer:
        if t.name.startswith("fmin"):
            t.CopyFrom(onnx.numpy_helper.from_array(np.array(-5.0, np.float32), t.name))
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    assert "nn.scaled_dot_product_attention" not in [op.name for op in model.func.body.block.ops]


@pytest.mark.parametrize("form", ["dynamo-guard", "gpt2"])
def test_fused_exported_attention_runs_on_cpu(form):
    from irforge.backends.cpu import compile_model

    proto = attention_graph(form)
    x = feeds(proto)
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    (want,) = ort_session_run(proto, x)
    got = next(iter(compile_model(model)(x).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
