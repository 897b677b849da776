"""ArgMax of integer and f64 tensors on the CPU backend (a host step of the exact reference
kernel): CLIP-like text towers (GroupViT) find the end token by ArgMax of the int32 ids;
against onnxruntime on ref and cpu, ties included (the first index wins)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

TYPES = {"int32": (onnx.TensorProto.INT32, np.int32), "float64": (onnx.TensorProto.DOUBLE, np.float64)}


def argmax_model(dtype: str, axis: int, keepdims: int, last: int) -> onnx.ModelProto:
    """ids -> Cast to `dtype` -> ArgMax (the export of `input_ids.to(torch.int).argmax(-1)`)."""
    cast = helper.make_node("Cast", ["ids"], ["cast"], to=TYPES[dtype][0])
    node = helper.make_node("ArgMax", ["cast"], ["index"], axis=axis, keepdims=keepdims, select_last_index=last)
    graph = helper.make_graph([cast, node], "argmax", [helper.make_tensor_value_info("ids", onnx.TensorProto.INT64, [2, 3, 7])],
                              [helper.make_empty_tensor_value_info("index")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("dtype", "axis", "keepdims", "last"), [("int32", -1, 0, 0), ("int32", 1, 1, 1), ("float64", 0, 1, 0), ("int32", 0, 0, 1)])
def test_integer_argmax_matches_onnxruntime_on_ref_and_cpu(dtype, axis, keepdims, last):
    proto = argmax_model(dtype, axis, keepdims, last)
    ids = np.random.default_rng(4).integers(0, 5, (2, 3, 7)).astype(np.int64)  # many ties
    ids[0, 0, 3] = 2**40 + 1  # beyond f32's integers (int32 wraps it in the Cast, as onnxruntime does)
    feeds = {"ids": ids}
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    np.testing.assert_array_equal(next(iter(run(model, feeds).values())), want)
    np.testing.assert_array_equal(next(iter(compile_model(model)(feeds).values())), want)
