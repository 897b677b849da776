"""replace-subgraph on attention probabilities shared by several value products (DiffLlama's
differential attention through dynamo: one guarded softmax, two MatMuls with the two halves of
v): one nn.scaled_dot_product_attention per product, matching onnxruntime on ref and cpu."""

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
N, H, L, E = 1, 2, 6, 8


def shared_probs_graph(products: int, guard: bool, extra_user: bool = False) -> onnx.ModelProto:
    """q, k, v1.. vN: Softmax(q k^T * c, masked) shared by `products` value MatMuls, their
    results combined as y1 - 0.4 y2 (+ 0.2 y3); `extra_user` also returns the probabilities."""
    g = GraphBuilder()
    root = g.tensor(np.array(math.sqrt(1 / math.sqrt(E)), np.float32), "sqrt_scale")
    q, kt = g.node("Mul", ["q", root]), g.node("Mul", [g.node("Transpose", ["k"], perm=[0, 1, 3, 2]), root])
    scores = g.node("Where", ["keep", g.node("MatMul", [q, kt]), g.tensor(np.array(-np.inf, np.float32), "ninf")])
    probs = g.node("Softmax", [scores], axis=-1)
    if guard:  # the dynamo exporter's NaN guard for fully masked rows
        probs = g.node("Where", [g.node("IsNaN", [probs]), g.tensor(np.array(0.0, np.float32), "z"), probs])
    ys = [g.node("MatMul", [probs, f"v{i}"]) for i in range(products)]
    out = ys[0]
    for i, y in enumerate(ys[1:]):
        out = g.node("Sub", [out, g.node("Mul", [y, g.tensor(np.array(0.4 / (i + 1), np.float32), f"lambda{i}")])])
    result = g.node("Identity", [out], "attention")
    inputs = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [N, H, L, E]) for n in ("q", "k", *(f"v{i}" for i in range(products)))]
    inputs.append(helper.make_tensor_value_info("keep", onnx.TensorProto.BOOL, [N, 1, L, L]))
    outputs = [helper.make_empty_tensor_value_info(result)]
    if extra_user:
        outputs.append(helper.make_empty_tensor_value_info(probs))
    graph = helper.make_graph(g.nodes, "shared", inputs, outputs, g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def feeds(proto: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(5)
    out = {vi.name: rng.standard_normal([N, H, L, E]).astype(np.float32) for vi in proto.graph.input if vi.name != "keep"}
    keep = np.tril(np.ones((L, L), bool))[None, None] & (rng.uniform(size=(N, 1, L, L)) > 0.2)
    keep[..., 0, :] = False  # a fully masked row: the guard's zeros
    out["keep"] = keep
    return out


@pytest.mark.parametrize(("products", "guard", "extra_user"), [(2, True, False), (2, False, False), (3, True, False), (2, True, True)])
def test_each_value_product_of_shared_probs_becomes_one_attention(products, guard, extra_user):
    proto = shared_probs_graph(products, guard, extra_user)
    x = feeds(proto)
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    names = [op.name for op in model.func.body.block.ops]
    # probabilities the graph also returns are not copied (their softmax stays either way)
    assert names.count("nn.scaled_dot_product_attention") == (0 if extra_user else products), names
    assert ("nn.matmul" in names) == extra_user and ("nn.softmax" in names) == extra_user
    want = ort_session_run(proto, x)
    got = list(run(model, x).values())
    for g, w in zip(got, want):
        if not guard:  # the unguarded masked row is NaN in both
            g, w = np.nan_to_num(g), np.nan_to_num(w)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_shared_probs_attention_runs_on_cpu():
    from irforge.backends.cpu import compile_model

    proto = shared_probs_graph(2, True)
    x = feeds(proto)
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    (want,) = ort_session_run(proto, x)
    got = next(iter(compile_model(model)(x).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
