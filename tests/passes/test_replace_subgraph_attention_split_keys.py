"""replace-subgraph on attention over keys in parts (`attention_split_keys.py`): PEGASUS-X's
block-local attention scores the global keys and each block's own keys with two products,
joins them for the mask and softmax, then splits the probabilities for two value products
and adds them. One nn.scaled_dot_product_attention (keys and values joined, the global ones
tiled over the blocks) that computes what the graph did (onnxruntime) on ref, cpu and
OpenVINO (the written IR, f32 hint); probabilities read elsewhere too stay as they were."""

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

B, H, K, G, E = 1, 2, 4, 3, 8


def global_local(blocks: int, probs_out: bool = False) -> onnx.ModelProto:
    """PEGASUS-X's compute_local_attention_representations as TorchScript exports it."""
    g = GraphBuilder()
    shape = lambda *d: g.tensor(np.array(d, np.int64), "shape")  # noqa: E731
    s1 = g.node("MatMul", ["q", g.node("Transpose", ["kg"], perm=[0, 1, 3, 2])])  # [B, H, N*K, G]
    s1 = g.node("Reshape", [s1, shape(B, H, blocks, K, G)])
    kb = g.node("Reshape", ["kb", shape(B, H, blocks, K, E)])
    s2 = g.node("MatMul", [g.node("Reshape", ["q", shape(B, H, blocks, K, E)]), g.node("Transpose", [kb], perm=[0, 1, 2, 4, 3])])
    x = g.node("Concat", [s1, s2], axis=-1)
    x = g.node("Add", [g.node("Mul", [x, g.tensor(np.array(E ** -0.5, np.float32), "scale")]), "mask"])
    p = g.node("Softmax", [x], axis=-1)
    axis = g.tensor(np.array([4], np.int64), "axis")
    p1 = g.node("Slice", [p, g.tensor(np.array([0], np.int64), "b"), g.tensor(np.array([G], np.int64), "e"), axis])
    p2 = g.node("Slice", [p, g.tensor(np.array([G], np.int64), "b"), g.tensor(np.array([2**62], np.int64), "e"), axis])
    a1 = g.node("MatMul", [g.node("Reshape", [p1, shape(B, H, blocks * K, G)]), "vg"])
    a1 = g.node("Reshape", [a1, shape(B, H, blocks, K, E)])
    a2 = g.node("MatMul", [p2, g.node("Reshape", ["vb", shape(B, H, blocks, K, E)])])
    y = g.node("Add", [a1, a2])
    vis = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [B, H, blocks * K, E]) for n in ("q", "kb", "vb")]
    vis += [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [B, H, G, E]) for n in ("kg", "vg")]
    vis.append(helper.make_tensor_value_info("mask", onnx.TensorProto.FLOAT, [B, 1, blocks, 1, G + K]))
    outputs = [helper.make_empty_tensor_value_info(y)] + ([helper.make_empty_tensor_value_info(p)] if probs_out else [])
    graph = helper.make_graph(g.nodes, "global_local", vis, outputs, g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def feeds(blocks: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    x = {n: rng.standard_normal((B, H, blocks * K, E)).astype(np.float32) for n in ("q", "kb", "vb")}
    x |= {n: rng.standard_normal((B, H, G, E)).astype(np.float32) for n in ("kg", "vg")}
    mask = np.zeros((B, 1, blocks, 1, G + K), np.float32)
    mask[..., -1] = -1e9  # a padded local token in every block
    return {**x, "mask": mask}


def check(proto: onnx.ModelProto, x: dict[str, np.ndarray], tmp_path) -> int:  # type: ignore[no-untyped-def]
    """The fused count, after checking every output on ref, cpu and OpenVINO."""
    want = ort_session_run(proto, x)
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    names = [o.name for o in proto.graph.output]
    ref, cpu = run(model, x), compile_model(model)(x)
    write_ir_xml(model, tmp_path / "m.xml")
    ov = run_openvino(tmp_path / "m.xml", x)
    for name, w in zip(names, want):
        assert_close(ref[name], w, what=f"ref vs onnxruntime ({name})")
        assert_close(cpu[name], w, what=f"cpu vs onnxruntime ({name})")
        assert_close(ov[name], w, what=f"OpenVINO vs onnxruntime ({name})")
    ops = [op.name for op in model.func.body.block.ops]
    return ops.count("nn.scaled_dot_product_attention") if "nn.softmax" not in ops else -ops.count("nn.softmax")


@pytest.mark.parametrize("blocks", [1, 3])
def test_keys_in_parts_become_one_attention_and_match(tmp_path, blocks):
    assert check(global_local(blocks), feeds(blocks), tmp_path) == 1


def test_probabilities_read_elsewhere_stay(tmp_path):
    assert check(global_local(2, probs_out=True), feeds(2), tmp_path) == -1  # the softmax kept
