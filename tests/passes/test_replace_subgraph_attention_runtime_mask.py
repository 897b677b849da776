"""replace-subgraph on attention whose mask has a size known only at run time: torchaudio's
Emformer through torch's dynamo exporter masks the padded keys with a [N, 1, 1, ?] condition
from Range(0, max(lengths)) >= lengths (TorchScript's export has the same mask with static
dims). The op that applies the mask has a static result, so the run-time size is 1 or the
scores' (`attention_chains.fits`): one nn.scaled_dot_product_attention with a static result
that computes what the graph did (onnxruntime) on ref, cpu and OpenVINO (the written IR, f32
hint), alone or beside Emformer's constant [1, L, S] mask."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx import import_onnx
from irforge.model import input_names
from irforge.passes import apply_pipeline
from irforge.testing.onnx_models import GraphBuilder
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import ort_session_run

N, H, L, E = 2, 2, 6, 8


def emformer(constant_mask: bool, fill_value: float = float(np.finfo(np.float32).min)) -> onnx.ModelProto:
    """Emformer's attention as dynamo writes it: heads in the batch ([N*H, L, E]), q scaled,
    an optional constant Where mask, the padding mask in [N, H, L, S], the softmax back in
    [N*H, L, S]."""
    g = GraphBuilder()
    q = g.node("Mul", ["q", g.tensor(np.array([[[E ** -0.5]]], np.float32), "scale")])
    scores = g.node("MatMul", [q, g.node("Transpose", ["k"], perm=[0, 2, 1])])
    fill = g.tensor(np.array(fill_value, np.float32), "fill")
    if constant_mask:
        causal = np.triu(np.ones((1, L, L), bool), 2)  # a band, as Emformer's segment mask
        scores = g.node("Where", [g.tensor(causal, "segments"), fill, scores])
    scores = g.node("Reshape", [scores, g.tensor(np.array([N, H, L, -1], np.int64), "split")])
    # padding: Range(0, max(lengths)) >= lengths[:, None], [N, 1, 1, ?]
    longest = g.node("ReduceMax", ["lengths"], keepdims=0)
    keys = g.node("Range", [g.tensor(np.array(0, np.int64), "zero"), longest, g.tensor(np.array(1, np.int64), "one")])
    padded = g.node("GreaterOrEqual", [keys, g.node("Unsqueeze", ["lengths", g.tensor(np.array([1], np.int64), "col")])])
    padded = g.node("Unsqueeze", [padded, g.tensor(np.array([1, 2], np.int64), "heads")])
    scores = g.node("Where", [padded, fill, scores])
    scores = g.node("Reshape", [scores, g.tensor(np.array([N * H, L, -1], np.int64), "join")])
    y = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), "v"])
    vis = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [N * H, L, E]) for n in ("q", "k", "v")]
    vis.append(helper.make_tensor_value_info("lengths", onnx.TensorProto.INT64, [N]))
    graph = helper.make_graph(g.nodes, "emformer", vis, [helper.make_empty_tensor_value_info(y)], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def feeds(lengths: tuple[int, int] = (L, L - 3)) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    x = {n: rng.standard_normal((N * H, L, E)).astype(np.float32) * 3 for n in ("q", "k", "v")}
    return {**x, "lengths": np.array(lengths, np.int64)}  # max(lengths) = L keys


@pytest.mark.parametrize("fill", ["min", "-1e8"])
@pytest.mark.parametrize("lengths", [(L, L - 3), (L, 0)], ids=["padded", "one_all_padded"])
@pytest.mark.parametrize("constant_mask", [False, True], ids=["padding", "padding+segments"])
def test_runtime_shaped_mask_fuses_and_matches(tmp_path, constant_mask, lengths, fill):
    """torchaudio's own fill is -1e8, which does not absorb the scores: a sample of length 0
    masks its rows throughout, uniform in the source (the mean of v), which the fused
    attention takes from the mean of v (`uniform_when_masked`); float32's min absorbs them."""
    proto = emformer(constant_mask, float(np.finfo(np.float32).min) if fill == "min" else -1e8)
    x = feeds(lengths)
    (want,) = ort_session_run(proto, x)
    model = fused(proto, None)
    y = proto.graph.output[0].name
    assert_close(run(model, x)[y], want, what="ref vs onnxruntime")
    assert_close(compile_model(model)(x)[y], want, what="cpu vs onnxruntime")
    write_ir_xml(model, tmp_path / "m.xml")
    assert_close(run_openvino(tmp_path / "m.xml", x)[y], want, what="OpenVINO vs onnxruntime")


def cached(mask: str) -> onnx.ModelProto:
    """softmax(q @ k^T / sqrt(E) + mask) @ v with S keys known only at run time (a KV cache):
    q [N, H, L, E] static, k and v [N, H, S, E]; the mask a padding Where [N, 1, 1, S] or an
    additive bias [N, 1, L, S] (inputs)."""
    g = GraphBuilder()
    q = g.node("Mul", ["q", g.tensor(np.array(E ** -0.5, np.float32), "scale")])
    scores = g.node("MatMul", [q, g.node("Transpose", ["k"], perm=[0, 1, 3, 2])])
    if mask == "where":
        scores = g.node("Where", ["keep", scores, g.tensor(np.array(np.finfo(np.float32).min, np.float32), "fill")])
    else:
        scores = g.node("Add", [scores, "bias"])
    y = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), "v"])
    vis = [helper.make_tensor_value_info("q", onnx.TensorProto.FLOAT, [N, H, L, E])]
    vis += [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [N, H, "S", E]) for n in ("k", "v")]
    if mask == "where":
        vis.append(helper.make_tensor_value_info("keep", onnx.TensorProto.BOOL, [N, 1, 1, "S"]))
    else:
        vis.append(helper.make_tensor_value_info("bias", onnx.TensorProto.FLOAT, [N, 1, L, "S"]))
    graph = helper.make_graph(g.nodes, "cached", vis, [helper.make_empty_tensor_value_info(y)], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.mark.parametrize("mask", ["where", "add"])
def test_runtime_key_length_fuses_and_matches(tmp_path, mask):
    proto = cached(mask)
    rng = np.random.default_rng(4)
    S = 9  # (not L: the keys' count only the run knows)
    x = {"q": rng.standard_normal((N, H, L, E)).astype(np.float32)}
    x |= {n: rng.standard_normal((N, H, S, E)).astype(np.float32) for n in ("k", "v")}
    if mask == "where":
        x["keep"] = (np.arange(S) < np.array([[S], [S - 4]]))[:, None, None, :]
    else:
        x["bias"] = rng.standard_normal((N, 1, L, S)).astype(np.float32)
    (want,) = ort_session_run(proto, x)
    y = proto.graph.output[0].name
    model = fused(proto, None)
    assert dims_of(model, "k") == [N, H, DYN, E]  # (S stays a run-time size)
    assert_close(run(model, x)[y], want, what="ref vs onnxruntime")
    write_ir_xml(model, tmp_path / "m.xml")
    assert_close(run_openvino(tmp_path / "m.xml", x)[y], want, what="OpenVINO vs onnxruntime")
    # the CPU backend compiles static inputs (E841 otherwise): S set at conversion
    model = fused(proto, {n: a.shape for n, a in x.items()})
    assert_close(compile_model(model)(x)[y], want, what="cpu vs onnxruntime")


def fused(proto: onnx.ModelProto, shapes: dict[str, tuple[int, ...]] | None, result: tuple[int, ...] = (N, H, L, E)):  # type: ignore[no-untyped-def]
    """The converted model, checked to hold one attention (no softmax left) with result
    `result`: [N, H, L, E] unless said otherwise, static as the query side is."""
    model = import_onnx(proto, shapes)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    ops = list(model.func.body.block.ops)
    attention = [op for op in ops if op.name == "nn.scaled_dot_product_attention"]
    assert len(attention) == 1 and not any(op.name == "nn.softmax" for op in ops)
    assert list(attention[0].results[0].type.get_shape()) == list(result)
    return model


def dims_of(model, name: str) -> list[int]:  # type: ignore[no-untyped-def]
    return list(model.func.args[input_names(model.func).index(name)].type.get_shape())


def trimmed() -> onnx.ModelProto:
    """(q @ k^T + bias) / sqrt(E) with queries and keys cut to max(lengths) at run time (as
    FastSpeech2-Conformer's decoder after its length regulator): L and S run-time sizes, no
    view anywhere; the bias stands for its relative-position term, computed from the graph."""
    g = GraphBuilder()
    longest = g.node("Unsqueeze", [g.node("ReduceMax", ["lengths"], keepdims=1), g.tensor(np.array([0], np.int64), "at")])
    longest = g.node("Reshape", [longest, g.tensor(np.array([1], np.int64), "one")])
    zero = g.tensor(np.array([0], np.int64), "zero")
    cut = lambda x, axes: g.node("Slice", [x, *(g.node("Concat", [zero] * len(axes), axis=0), g.node("Concat", [longest] * len(axes), axis=0)), g.tensor(np.array(axes, np.int64), "axes")])  # noqa: E731
    q, k, v = cut("q", [2]), cut("k", [2]), cut("v", [2])
    scores = g.node("Add", [g.node("MatMul", [q, g.node("Transpose", [k], perm=[0, 1, 3, 2])]), cut("bias", [2, 3])])
    scores = g.node("Div", [scores, g.tensor(np.array(np.sqrt(E), np.float32), "root")])
    y = g.node("MatMul", [g.node("Softmax", [scores], axis=-1), v])
    vis = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [N, H, L, E]) for n in ("q", "k", "v")]
    vis += [helper.make_tensor_value_info("bias", onnx.TensorProto.FLOAT, [N, H, L, L]),
            helper.make_tensor_value_info("lengths", onnx.TensorProto.INT64, [N])]
    graph = helper.make_graph(g.nodes, "trimmed", vis, [helper.make_empty_tensor_value_info(y)], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_runtime_queries_without_views_fuse_and_match(tmp_path):
    proto = trimmed()
    rng = np.random.default_rng(6)
    x = {n: rng.standard_normal((N, H, L, E)).astype(np.float32) for n in ("q", "k", "v")}
    x |= {"bias": rng.standard_normal((N, H, L, L)).astype(np.float32), "lengths": np.array([L - 2, L - 1], np.int64)}
    (want,) = ort_session_run(proto, x)
    model = fused(proto, None, result=(N, H, DYN, E))  # (the product's type)
    y = proto.graph.output[0].name
    assert_close(run(model, x)[y], want, what="ref vs onnxruntime")
    assert_close(compile_model(model)(x)[y], want, what="cpu vs onnxruntime")  # (segments: run-time shapes)
    write_ir_xml(model, tmp_path / "m.xml")
    assert_close(run_openvino(tmp_path / "m.xml", x)[y], want, what="OpenVINO vs onnxruntime")


def dynamic_axes(folded: bool) -> onnx.ModelProto:
    """torch's SDPA as its exporters write it with dynamic axes (BERT, GPT-2 with
    `dynamic_axes` / `dynamic_shapes` on batch and sequence): q and k^T scaled by
    sqrt(1/sqrt(E)) each, the padding mask Where(keep, 0, -inf) [B, 1, 1, S] added, the
    softmax's NaN rows zeroed; B and L are run-time sizes everywhere. `folded`: dynamo's k^T,
    a reshape to [-1, S, E], a transpose and a reshape back, to shapes read from k at run
    time (`runtime_transpose.py`)."""
    g = GraphBuilder()
    root = g.tensor(np.array(E ** -0.25, np.float32), "root")
    kt = g.node("Transpose", ["k"], perm=[0, 1, 3, 2])
    if folded:
        shape = g.node("Shape", ["k"])
        part = lambda b, e: g.node("Slice", [shape, g.tensor(np.array([b], np.int64), "b"), g.tensor(np.array([e], np.int64), "e")])  # noqa: E731
        rows, width, lead = part(-2, -1), part(-1, 2**62), part(-(2**62), -2)
        flat = g.node("Reshape", ["k", g.node("Concat", [g.tensor(np.array([-1], np.int64), "rest"), rows, width], axis=0)])
        kt = g.node("Reshape", [g.node("Transpose", [flat], perm=[0, 2, 1]), g.node("Concat", [lead, width, rows], axis=0)])
    scores = g.node("MatMul", [g.node("Mul", ["q", root]), g.node("Mul", [kt, root])])
    bias = g.node("Where", ["keep", g.tensor(np.array(0.0, np.float32), "zero"), g.tensor(np.array(-np.inf, np.float32), "inf")])
    p = g.node("Softmax", [g.node("Add", [scores, bias])], axis=-1)
    p = g.node("Where", [g.node("IsNaN", [p]), g.tensor(np.array(0.0, np.float32), "none"), p])
    y = g.node("MatMul", [p, "v"])
    vis = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, ["B", H, "L", E]) for n in ("q", "k", "v")]
    vis.append(helper.make_tensor_value_info("keep", onnx.TensorProto.BOOL, ["B", 1, 1, "L"]))
    graph = helper.make_graph(g.nodes, "dynamic_axes", vis, [helper.make_empty_tensor_value_info(y)], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("folded", [False, True], ids=["transpose", "folded-transpose"])
def test_dynamic_axes_export_fuses_and_matches(tmp_path, folded):
    proto = dynamic_axes(folded)
    rng = np.random.default_rng(8)
    x = {n: rng.standard_normal((N, H, L, E)).astype(np.float32) for n in ("q", "k", "v")}
    x["keep"] = (np.arange(L) < np.array([[L], [L - 2]]))[:, None, None, :]
    (want,) = ort_session_run(proto, x)
    y = proto.graph.output[0].name
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    ops = list(model.func.body.block.ops)
    assert [op.name for op in ops].count("nn.scaled_dot_product_attention") == 1 and not any(op.name == "nn.softmax" for op in ops)
    assert_close(run(model, x)[y], want, what="ref vs onnxruntime")
    write_ir_xml(model, tmp_path / "m.xml")
    assert_close(run_openvino(tmp_path / "m.xml", x)[y], want, what="OpenVINO vs onnxruntime")
    model = import_onnx(proto, {n: a.shape for n, a in x.items()})  # (the CPU backend: static inputs)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert_close(compile_model(model)(x)[y], want, what="cpu vs onnxruntime")
