"""replace-subgraph on attention in the layouts timm's NCHW and relative-position models write
(`attention_chains.py`'s any-k^T keys, `attention_transposed.py`): CoAtNet's `Attention2d`
through torch's SDPA export (q and k^T slices of one [B, H, 3E, S] qkv, each scaled by
sqrt(scale), a learned relative bias), BoTNet's keys reshaped from a 1x1 convolution with
relative logits computed from q, EfficientViT-M's `v @ attn^T` on channel-first values, a
bare softmax(q @ k^T) @ v, MobileNetV4's multi-query attention (one key and value for all
heads, broadcast), MViT v2's decomposed relative positions written into the scores
(or the block of them without the class token) by ScatterND (`attention_relative.py`). One nn.scaled_dot_product_attention computing what the graph did
(onnxruntime), on ref and cpu; softmax over the keys' token axis (CoaT's factorised
attention) stays as it is."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.numpy_helper
import pytest
from onnx import helper

from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.testing.onnx_models import GraphBuilder
from tests.helpers import ort_session_run

PIPELINE = "infer-shapes,canonicalize,replace-subgraph,canonicalize"
N, H, L, E = 1, 2, 6, 8


def info(name: str, shape: list[int]) -> onnx.ValueInfoProto:
    return helper.make_value_info(name, helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, shape))


def i64(values: list[int]) -> np.ndarray:
    return np.array(values, np.int64)


def layout_graph(form: str) -> onnx.ModelProto:
    g = GraphBuilder(seed=5)
    root = np.float32(E ** -0.25)  # torch's SDPA export scales q and k^T by sqrt(scale) each
    if form == "coatnet":  # q, k^T, v sliced from one [B, H, 3E, S] qkv; a relative bias
        part = [g.node("Slice", ["qkv", g.tensor(i64([i * E]), "start"), g.tensor(i64([(i + 1) * E]), "end"), g.tensor(i64([2]), "axis")]) for i in range(3)]
        q = g.node("Mul", [g.node("Transpose", [part[0]], perm=[0, 1, 3, 2]), g.tensor(np.array([root]), "root")])
        kt = g.node("Mul", [part[1], g.tensor(np.array([root]), "root")])
        scores = g.node("Add", [g.node("MatMul", [q, kt]), g.tensor(g.rng.standard_normal((1, H, L, L)).astype(np.float32), "rel_bias")])
        y = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), g.node("Transpose", [part[2]], perm=[0, 1, 3, 2])])
        g.node("Reshape", [g.node("Transpose", [y], perm=[0, 1, 3, 2]), g.tensor(i64([N, H * E, 2, 3]), "nchw")], "attention")
        inputs = [info("qkv", [N, H, 3 * E, L])]
    elif form == "botnet":  # keys [B, H*E, S] reshaped to [B*H, E, S]; relative logits from q
        kt = g.node("Reshape", ["keys", g.tensor(i64([N * H, E, L]), "heads")])
        scores = g.node("Mul", [g.node("MatMul", ["q", kt]), g.tensor(np.array(E ** -0.5, np.float32), "scale")])
        rel = g.node("MatMul", ["q", g.tensor(g.rng.standard_normal((E, L)).astype(np.float32), "rel_w")])
        g.node("MatMul", [g.node("Softmax", [g.node("Add", [scores, rel])], axis=-1), "v"], "attention")
        inputs = [info("q", [N * H, L, E]), info("keys", [N, H * E, L]), info("v", [N * H, L, E])]
    elif form == "efficientvit":  # channel-first q, k, v [B, E, S]: v @ softmax(q^T k * c + bias)^T
        scores = g.node("MatMul", [g.node("Transpose", ["q"], perm=[0, 2, 1]), "k"])
        scores = g.node("Add", [g.node("Mul", [scores, g.tensor(np.array(0.3, np.float32), "scale")]), g.tensor(g.rng.standard_normal((L, L)).astype(np.float32), "bias")])
        g.node("MatMul", ["v", g.node("Transpose", [g.node("Softmax", [scores], axis=-1)], perm=[0, 2, 1])], "attention")
        inputs = [info("q", [N * H, E, L]), info("k", [N * H, E, L]), info("v", [N * H, E, L])]
    elif form == "mqa":  # one key and value for all heads, [B, 1, E, S] keys from a 1x1 convolution (MobileNetV4)
        q = g.node("Mul", ["q", g.tensor(np.array([root]), "root")])
        kt = g.node("Mul", [g.node("Reshape", ["keys", g.tensor(i64([N, 1, E, L]), "heads")]), g.tensor(np.array([root]), "root")])
        g.node("MatMul", [g.node("Softmax", [g.node("MatMul", [q, kt])], axis=-1), "v"], "attention")
        inputs = [info("q", [N, H, L, E]), info("keys", [N, E, 2, 3]), info("v", [N, 1, L, E])]
    elif form == "bare":  # softmax(q @ k^T) @ v, no scale, k^T given
        g.node("MatMul", [g.node("Softmax", [g.node("MatMul", ["q", "kt"])], axis=-1), "v"], "attention")
        inputs = [info("q", [N, H, L, E]), info("kt", [N, H, E, L]), info("v", [N, H, L, E])]
    elif form == "slice-scatter":  # dynamo's slice_scatter on the key axis: Permute(ScatterND(Permute(s), rows, Permute(u)))
        scores = g.node("MatMul", ["q", g.node("Transpose", ["k"], perm=[0, 1, 3, 2])])
        block = g.node("Slice", [scores, g.tensor(i64([1]), "start"), g.tensor(i64([L]), "end"), g.tensor(i64([3]), "axes")])
        update = g.node("Add", [block, "rel"])
        rows = g.tensor(np.arange(1, L, dtype=np.int64).reshape(-1, 1), "rows")
        moved = g.node("ScatterND", [g.node("Transpose", [scores], perm=[3, 1, 2, 0]), rows, g.node("Transpose", [update], perm=[3, 1, 2, 0])])
        scores = g.node("Transpose", [moved], perm=[3, 1, 2, 0])
        g.node("MatMul", [g.node("Softmax", [scores], axis=-1), "v"], "attention")
        inputs = [info("q", [N, H, L, E]), info("k", [N, H, L, E]), info("v", [N, H, L, E]), info("rel", [N, H, L, L - 1])]
    elif form in ("mvit-cls-dynamo", "mvit-two-writes"):  # attn[:, :, 1:, 1:] = ... as dynamo writes it
        scores = g.node("MatMul", ["q", g.node("Transpose", ["k"], perm=[0, 1, 3, 2])])

        def terms(block: str) -> str:
            grid = g.node("Reshape", [block, g.tensor(i64([N, H, 2, 3, 2, 3]), "grid")])
            return g.node("Reshape", [g.node("Add", [g.node("Add", [grid, "rel_h"]), "rel_w"]), g.tensor(i64([N, H, 6, 6]), "back")])

        scores = dynamo_block_write(g, scores, 7, terms)
        if form == "mvit-two-writes":  # torchvision's second write: the block through views only
            scores = dynamo_block_write(g, scores, 7, lambda block: g.node("Reshape", [block, g.tensor(i64([N, H, 6, 6]), "same")]))
        g.node("MatMul", [g.node("Softmax", [scores], axis=-1), "v"], "attention")
        inputs = [info("q", [N, H, 7, E]), info("k", [N, H, 7, E]), info("v", [N, H, 7, E]), info("rel_h", [N, H, 2, 3, 2, 1]), info("rel_w", [N, H, 2, 3, 1, 3])]
    elif form.startswith("mvit"):  # relative terms written into (a block of) the scores by ScatterND
        cls = form != "mvit"
        n = 2 * 3 + cls  # a 2 x 3 grid of tokens, and the class token first
        scores = g.node("MatMul", [g.node("Mul", ["q", g.tensor(np.array(E ** -0.5, np.float32), "scale")]), g.node("Transpose", ["k"], perm=[0, 1, 3, 2])])
        block = g.node("Slice", [scores, g.tensor(i64([1, 1]), "start"), g.tensor(i64([n, n]), "end"), g.tensor(i64([2, 3]), "axes")]) if cls else scores
        if form == "mvit-cls-rows":  # TorchScript's attn[:, :, 1:, 1:]: a slice per axis
            rows = g.node("Slice", [scores, g.tensor(i64([1]), "start"), g.tensor(i64([n]), "end"), g.tensor(i64([2]), "axes")])
            block = g.node("Slice", [rows, g.tensor(i64([1]), "start"), g.tensor(i64([n]), "end"), g.tensor(i64([3]), "axes")])
        grid = g.node("Reshape", [block, g.tensor(i64([N, H, 2, 3, 2, 3]), "grid")])
        grid = g.node("Add", [g.node("Add", [grid, "rel_h"]), "rel_w"])
        update = g.node("Reshape", [grid, g.tensor(i64([N, H, 6, 6]), "back")])
        coordinates = np.stack(np.meshgrid(np.arange(N), np.arange(H), np.arange(cls, n), np.arange(cls, n), indexing="ij"), axis=-1)
        scores = g.node("ScatterND", [scores, g.tensor(coordinates.astype(np.int64), "indices"), update])
        g.node("MatMul", [g.node("Softmax", [scores], axis=-1), "v"], "attention")
        inputs = [info("q", [N, H, n, E]), info("k", [N, H, n, E]), info("v", [N, H, n, E]), info("rel_h", [N, H, 2, 3, 2, 1]), info("rel_w", [N, H, 2, 3, 1, 3])]
    else:  # coat: softmax over the keys' token axis, then q @ (k^T @ v): not attention over q k^T
        kt = g.node("Transpose", [g.node("Softmax", ["k"], axis=-2)], perm=[0, 1, 3, 2])
        g.node("MatMul", ["q", g.node("MatMul", [kt, "v"])], "attention")
        inputs = [info("q", [N, H, L, E]), info("k", [N, H, L, E]), info("v", [N, H, L, E])]
    graph = helper.make_graph(g.nodes, form, inputs, [helper.make_empty_tensor_value_info(g.nodes[-1].output[0])], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def dynamo_block_write(g: GraphBuilder, scores: str, n: int, update) -> str:  # type: ignore[no-untyped-def]
    """scores[:, :, 1:, 1:] = update(scores[:, :, 1:, 1:]) as dynamo writes it: two nested
    slice_scatters, each a ScatterND of rows along axis 0 between transposes."""
    rows = g.node("Slice", [scores, g.tensor(i64([1]), "start"), g.tensor(i64([n]), "end"), g.tensor(i64([2]), "axes")])
    block = g.node("Slice", [rows, g.tensor(i64([1]), "start"), g.tensor(i64([n]), "end"), g.tensor(i64([3]), "axes")])
    ranged = g.tensor(np.arange(1, n, dtype=np.int64).reshape(-1, 1), "range")
    inner = g.node("ScatterND", [g.node("Transpose", [rows], perm=[3, 1, 2, 0]), ranged, g.node("Transpose", [update(block)], perm=[3, 1, 2, 0])])
    inner = g.node("Transpose", [inner], perm=[3, 1, 2, 0])
    outer = g.node("ScatterND", [g.node("Transpose", [scores], perm=[2, 1, 0, 3]), ranged, g.node("Transpose", [inner], perm=[2, 1, 0, 3])])
    return g.node("Transpose", [outer], perm=[2, 1, 0, 3])


def feeds(proto: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return {vi.name: rng.standard_normal([d.dim_value for d in vi.type.tensor_type.shape.dim]).astype(np.float32) for vi in proto.graph.input}


def converted(proto: onnx.ModelProto):  # type: ignore[no-untyped-def]
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    return model, [op.name for op in model.func.body.block.ops]


@pytest.mark.parametrize("form", ["coatnet", "botnet", "efficientvit", "mqa", "bare", "mvit", "mvit-cls", "mvit-cls-rows", "slice-scatter", "mvit-cls-dynamo", "mvit-two-writes"])
def test_layout_becomes_one_attention_and_matches_onnxruntime(form):
    from irforge.backends.cpu import compile_model

    proto = layout_graph(form)
    x = feeds(proto)
    model, names = converted(proto)
    assert names.count("nn.scaled_dot_product_attention") == 1, names
    assert "nn.softmax" not in names, names
    assert "nn.scatter_nd" not in names, names
    # the mask is zero at the class token: one pad per scatter
    assert names.count("nn.pad") == {"mvit-cls": 1, "mvit-cls-rows": 1, "slice-scatter": 1, "mvit-cls-dynamo": 2, "mvit-two-writes": 2}.get(form, 0), names
    # the relative logits' own product stays; the scores' and the values' products go
    assert names.count("nn.matmul") == (1 if form == "botnet" else 0), names
    (want,) = ort_session_run(proto, x)
    np.testing.assert_allclose(next(iter(run(model, x).values())), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(next(iter(compile_model(model)(x).values())), want, rtol=1e-4, atol=1e-5)


def test_softmax_over_the_token_axis_is_left_alone():
    proto = layout_graph("coat")
    x = feeds(proto)
    model, names = converted(proto)
    assert "nn.scaled_dot_product_attention" not in names and "nn.softmax" in names
    (want,) = ort_session_run(proto, x)
    np.testing.assert_allclose(next(iter(run(model, x).values())), want, rtol=1e-5, atol=1e-5)


def test_transposed_probabilities_read_elsewhere_are_left_alone():
    proto = layout_graph("efficientvit")
    softmax = next(n for n in proto.graph.node if n.op_type == "Softmax")
    proto.graph.output.append(helper.make_empty_tensor_value_info(softmax.output[0]))
    _, names = converted(proto)
    assert "nn.scaled_dot_product_attention" not in names
    assert names.count("nn.permute") == 2  # nothing added: the values' transpose is taken back


def test_a_scatter_elsewhere_than_the_block_is_left_alone():
    proto = layout_graph("mvit-cls")
    indices = next(t for t in proto.graph.initializer if t.name.startswith("indices"))
    shifted = onnx.numpy_helper.to_array(indices).copy()
    shifted[..., 2] -= 1  # rows 0..5 where the block read rows 1..6
    indices.CopyFrom(onnx.numpy_helper.from_array(shifted, indices.name))
    x = feeds(proto)
    model, names = converted(proto)
    assert "nn.scaled_dot_product_attention" not in names and "nn.scatter_nd" in names
    (want,) = ort_session_run(proto, x)
    np.testing.assert_allclose(next(iter(run(model, x).values())), want, rtol=1e-5, atol=1e-5)
