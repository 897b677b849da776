"""Decomposed attention as exporters write it, as an ONNX graph for onnxruntime and the
importer: MatMul(q, Transpose(k)) -> Mul/Div by a scalar -> [Add mask | Where mask] ->
Softmax(-1) -> MatMul(v)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper

from irforge.testing.onnx_models import GraphBuilder


def decomposed_attention(
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]],
    scale: float,
    scale_form: str = "mul",
    mask: np.ndarray | None = None,
    mask_as_input: bool = True,
    causal: bool = False,
    softmax_axis: int = -1,
) -> onnx.ModelProto:
    """Inputs q, k, v (and `mask` as input "mask" when `mask_as_input`, else a constant); a
    boolean mask selects with Where, a float one is added; `causal` adds the -inf triangle."""
    g = GraphBuilder()
    rank = len(shapes[1])
    perm = [*range(rank - 2), rank - 1, rank - 2]
    scores = g.node("MatMul", ["q", g.node("Transpose", ["k"], perm=perm)])  # type: ignore[list-item]
    factor = g.tensor(np.array(scale if scale_form == "mul" else 1 / scale, np.float32), "scale")
    scores = g.node("Mul" if scale_form == "mul" else "Div", [scores, factor])
    inputs = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, s) for n, s in zip("qkv", shapes)]
    if mask is not None:
        if mask_as_input:
            inputs.append(helper.make_tensor_value_info("mask", helper.np_dtype_to_tensor_dtype(mask.dtype), mask.shape))
            mask_name = "mask"
        else:
            mask_name = g.tensor(mask, "mask")
        if mask.dtype == np.bool_:
            scores = g.node("Where", [mask_name, scores, g.tensor(np.array(-np.inf, np.float32), "ninf")])  # type: ignore[list-item]
        else:
            scores = g.node("Add", [scores, mask_name])  # type: ignore[list-item]
    if causal:
        rows, cols = shapes[0][-2], shapes[1][-2]
        triangle = np.triu(np.full((rows, cols), -np.inf, np.float32), k=1)
        scores = g.node("Add", [scores, g.tensor(triangle, "causal")])  # type: ignore[list-item]
    probs = g.node("Softmax", [scores], axis=softmax_axis)  # type: ignore[list-item]
    g.node("MatMul", [probs, "v"], "attention")  # type: ignore[list-item]
    output = helper.make_empty_tensor_value_info(g.nodes[-1].output[0])
    graph = helper.make_graph(g.nodes, "attention", inputs, [output], g.initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def attention_feeds(shapes: tuple[tuple[int, ...], ...], mask: np.ndarray | None = None, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in zip("qkv", shapes)}
    if mask is not None:
        feeds["mask"] = mask
    return feeds
