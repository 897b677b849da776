"""Findings of the fuzz campaign over session 5's ONNX extractors (`irforge/testing/fuzz_session5_ops.py`,
`bench/fuzz_campaign.py --focus session5`): each input that raised a Python exception inside an
extractor, re-checked to end in a one-line coded error (exit 2, nothing written)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

from irforge.testing import fuzz_session5_ops
from tests.trust.test_new_op_findings import convert_error, load, set_initializer


def nbits(**inits: np.ndarray) -> onnx.ModelProto:
    model = load(fuzz_session5_ops.matmul_nbits())
    for name, value in inits.items():
        set_initializer(model, name, value)
    return model


@pytest.mark.parametrize("edit, message", [
    ({"zp": np.zeros(5, np.uint8)}, "zero points [5] (uint8) do not fit K=40, N=6, bits=4, block_size=16 (12 packed uint8 values)"),
    ({"zp": np.zeros(0, np.uint8)}, "zero points [0] (uint8)"),
    ({"zp": np.zeros(17, np.float32)}, "zero points [17] (float32) do not fit"),
    ({"zp": np.zeros(18, np.int32)}, "zero points [18] (int32) do not fit"),
    ({"scales": np.zeros(18, np.int64)}, "scales [18] (int64) do not fit"),
])  # fmt: skip
def test_matmul_nbits_zero_points_and_scales_of_another_size_or_dtype(tmp_path, capsys, edit, message):
    err = convert_error(tmp_path, capsys, nbits(**edit))
    assert "E041" in err and message in err


def test_matmul_nbits_of_non_positive_k(tmp_path, capsys):
    model = nbits()
    for attr in model.graph.node[0].attribute:
        if attr.name == "K":
            attr.i = 0
    assert "K=0 / N=6 must be positive" in convert_error(tmp_path, capsys, model)


@pytest.mark.parametrize("name, shape, message", [
    ("x", [2, 5], "input #0 of rank 3, got [2, 5]"),
    ("w", [48], "input #1 of rank 2, got [48]"),
    ("w", [8, 48], "weights [8, 48] does not fit the input's hidden size 16"),
])  # fmt: skip
def test_ms_attention_inputs_of_another_rank(tmp_path, capsys, name, shape, message):
    """com.microsoft Attention whose input or weights have another rank (was: a Python unpacking error)."""
    feeds = {"x": [2, 5, 16], "w": [16, 48]}
    feeds[name] = shape
    rng = np.random.default_rng(0)
    node = helper.make_node("Attention", ["x", "w"], ["y"], domain=fuzz_session5_ops.MS, num_heads=2)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, feeds["x"])],
                              [helper.make_tensor_value_info("y", T.FLOAT, None)],
                              [onnx.numpy_helper.from_array(rng.standard_normal(feeds["w"]).astype(np.float32), "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(fuzz_session5_ops.MS, 1)])
    assert message in convert_error(tmp_path, capsys, model)


@pytest.mark.parametrize("input_index, shape, message", [
    (0, [2, 5, 1], "EmbedLayerNormalization needs input #0 of rank 2, got [2, 5, 1]"),
    (0, [10], "needs input #0 of rank 2, got [10]"),
])  # fmt: skip
def test_embed_layer_norm_ids_of_another_rank(tmp_path, capsys, input_index, shape, message):
    model = load(fuzz_session5_ops.ort_attention())
    vi = model.graph.input[input_index]
    vi.CopyFrom(helper.make_tensor_value_info(vi.name, T.INT32, shape))
    assert message in convert_error(tmp_path, capsys, model)


def test_embed_layer_norm_embedding_tables_of_another_rank(tmp_path, capsys):
    model = load(fuzz_session5_ops.ort_attention())
    set_initializer(model, "words", np.zeros(16, np.float32))
    assert "word_embedding needs input #2 of rank 2, got [16]" in convert_error(tmp_path, capsys, model)


def test_relu_of_minus_infinity_is_zero_on_ref():
    """FusedGemm (Relu) with a bias of -inf: the reference ReLU gave -inf * 0 = NaN (onnxruntime and cpu: 0)."""
    from irforge.backends.reference import run
    from irforge.frontends.onnx import import_onnx

    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", T.FLOAT, [4])], [helper.make_tensor_value_info("y", T.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    got = run(import_onnx(model), {"x": np.array([-np.inf, -1, np.nan, np.inf], np.float32)})["y"]
    np.testing.assert_array_equal(got, np.array([0, 0, np.nan, np.inf], np.float32))


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_attention_with_nonpad_keeps_the_nan_of_a_plus_infinity_mask(device):
    """ONNX Attention with nonpad_kv_seqlen (rows may be all masked) and a mask of +inf: onnxruntime
    gives NaN; irforge zeroed every NaN of the output, not only the all-masked rows'."""
    from irforge.backends.cpu import compile_model
    from irforge.backends.reference import run
    from irforge.frontends.onnx import import_onnx

    model = load(fuzz_session5_ops.attention_nonpad())
    set_initializer(model, "mask", np.full((2, 1, 3, 5), np.inf, np.float32))
    rng = np.random.default_rng(0)
    feeds = {"q": rng.standard_normal((2, 2, 3, 4)).astype(np.float32), "k": rng.standard_normal((2, 2, 5, 4)).astype(np.float32),
             "v": rng.standard_normal((2, 2, 5, 4)).astype(np.float32)}
    imported = import_onnx(model)
    got = run(imported, feeds) if device == "ref" else compile_model(imported, cache_dir=False)(feeds)
    assert np.isnan(got["y"]).all()
    feeds["q"][0, 0, 0, 0] = np.nan  # a NaN query with a finite mask: its row is NaN, the others are numbers
    set_initializer(model, "mask", np.zeros((2, 1, 3, 5), np.float32))
    imported = import_onnx(model)
    got = run(imported, feeds) if device == "ref" else compile_model(imported, cache_dir=False)(feeds)
    assert np.isnan(got["y"][0, 0, 0]).all() and not np.isnan(got["y"][1]).any()


@pytest.mark.parametrize("value, message", [
    (np.ones((3, 5), np.bool_), "nonpad_kv_seqlen must be a 1-D integer tensor (one length per batch), got [3, 5] of bool"),
    (np.array([5.0, 3.0], np.float32), "got [2] of float32"),
])  # fmt: skip
def test_attention_nonpad_of_another_type_or_rank(tmp_path, capsys, value, message):
    """ONNX Attention's nonpad_kv_seqlen as a bool matrix: was numpy's arange-of-bool TypeError."""
    model = load(fuzz_session5_ops.attention_nonpad())
    set_initializer(model, "nonpad", value)
    assert message in convert_error(tmp_path, capsys, model)


@pytest.mark.parametrize("make, name, message", [
    (fuzz_session5_ops.ort_attention, "num_heads", "Attention (com.microsoft) needs the attribute num_heads"),
    (fuzz_session5_ops.matmul_nbits, "K", "MatMulNBits needs the attribute(s) K"),
    (fuzz_session5_ops.matmul_nbits, "block_size", "MatMulNBits needs the attribute(s) block_size"),
])  # fmt: skip
def test_ms_ops_without_a_required_attribute(tmp_path, capsys, make, name, message):
    """com.microsoft ops have no onnx schema: a missing num_heads / K was int(None)'s TypeError."""
    model = load(make())
    for node in model.graph.node:
        for attr in list(node.attribute):
            if attr.name == name:
                node.attribute.remove(attr)
    assert message in convert_error(tmp_path, capsys, model)
