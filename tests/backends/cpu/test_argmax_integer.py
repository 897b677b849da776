"""ArgMax/ArgMin of integer tensors on the CPU backend (a host step of the reference kernel)
against onnxruntime: open_clip's text tower takes the argmax of the int64 token ids (the
end-of-text token has the largest id); the f32-only native kernel refused it (E847)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

TYPES = {np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def argmax_model(op: str, element: int, axis: int, keepdims: int, last: int):  # type: ignore[no-untyped-def]
    node = helper.make_node(op, ["x"], ["y"], axis=axis, keepdims=keepdims, select_last_index=last)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", element, [2, 5, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("dtype", [np.int64, np.int32], ids=lambda t: np.dtype(t).name)
@pytest.mark.parametrize(("op", "axis", "keepdims", "last"), [("ArgMax", -2, 0, 0), ("ArgMax", 1, 1, 1), ("ArgMin", 2, 1, 0), ("ArgMin", 0, 0, 1)])
def test_integer_argmax_matches_onnxruntime_on_ref_and_cpu(dtype, op, axis, keepdims, last):
    # ties (values 0..3 over 5 entries), both ends of int64, negative ids
    x = np.random.default_rng(0).integers(-2, 2, (2, 5, 3)).astype(dtype)
    x[0, 1, 0], x[1, 3, 2] = np.iinfo(dtype).max, np.iinfo(dtype).min
    proto = argmax_model(op, TYPES[dtype], axis, keepdims, last)
    want = ort_session_run(proto, {"x": x})[0]
    model = import_onnx(proto)
    np.testing.assert_array_equal(next(iter(run(model, {"x": x}).values())), want)
    np.testing.assert_array_equal(next(iter(compile_model(model)({"x": x}).values())), want)


CAST_TYPES = {"int32": (TensorProto.INT32, np.int32), "float64": (TensorProto.DOUBLE, np.float64)}


def cast_argmax_model(dtype: str, axis: int, keepdims: int, last: int):  # type: ignore[no-untyped-def]
    """ids -> Cast to `dtype` -> ArgMax (the export of `input_ids.to(torch.int).argmax(-1)`)."""
    cast = helper.make_node("Cast", ["ids"], ["cast"], to=CAST_TYPES[dtype][0])
    node = helper.make_node("ArgMax", ["cast"], ["index"], axis=axis, keepdims=keepdims, select_last_index=last)
    graph = helper.make_graph([cast, node], "argmax", [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3, 7])],
                              [helper.make_empty_tensor_value_info("index")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("dtype", "axis", "keepdims", "last"), [("int32", -1, 0, 0), ("int32", 1, 1, 1), ("float64", 0, 1, 0), ("int32", 0, 0, 1)])
def test_cast_then_argmax_of_int32_and_f64_matches_onnxruntime(dtype, axis, keepdims, last):
    proto = cast_argmax_model(dtype, axis, keepdims, last)
    ids = np.random.default_rng(4).integers(0, 5, (2, 3, 7)).astype(np.int64)  # many ties
    ids[0, 0, 3] = 2**40 + 1  # beyond f32's integers (int32 wraps it in the Cast, as onnxruntime does)
    feeds = {"ids": ids}
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    np.testing.assert_array_equal(next(iter(run(model, feeds).values())), want)
    np.testing.assert_array_equal(next(iter(compile_model(model)(feeds).values())), want)
