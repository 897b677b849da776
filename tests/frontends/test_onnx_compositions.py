"""ONNX ops imported as compositions of existing nn ops (`extractors/compositions.py`):
CastLike, Size, EyeLike, MeanVarianceNormalization, Celu, ThresholdedRelu, Shrink, Sinh,
Cosh, Tan, LpNormalization, RMSNormalization, Swish; each against onnxruntime on ref and cpu."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.helpers import ort_session_run

SHAPE = [2, 3, 4, 5]
CASES = {
    "celu": ("Celu", dict(alpha=0.7), 12),
    "thresholded_relu": ("ThresholdedRelu", dict(alpha=0.3), 10),
    "shrink": ("Shrink", dict(bias=0.2, lambd=0.6), 9),
    "sinh": ("Sinh", {}, 9),
    "cosh": ("Cosh", {}, 9),
    "tan": ("Tan", {}, 7),
    "mvn": ("MeanVarianceNormalization", {}, 13),
    "mvn_axes": ("MeanVarianceNormalization", dict(axes=[1, 3]), 13),
    "lp1": ("LpNormalization", dict(axis=1, p=1), 1),
    "lp2": ("LpNormalization", dict(axis=-1, p=2), 1),
    "swish": ("Swish", dict(alpha=1.5), 24),
}


def unary(op: str, attrs: dict, opset: int, extra: list[onnx.TensorProto] = ()) -> onnx.ModelProto:
    inputs = ["x", *(t.name for t in extra)]
    graph = helper.make_graph([helper.make_node(op, inputs, ["y"], **attrs)], op, [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)], list(extra))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(proto: onnx.ModelProto, x: np.ndarray, atol: float = 1e-5) -> None:
    (want,) = ort_session_run(proto, {"x": x})
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    for got in (run(model, {"x": x}), compile_model(model)({"x": x})):
        value = next(iter(got.values()))
        assert value.dtype == want.dtype and value.shape == want.shape
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("case", sorted(CASES))
def test_composed_op_matches_onnxruntime(case):
    op, attrs, opset = CASES[case]
    x = np.random.default_rng(0).uniform(-1.4, 1.4, SHAPE).astype(np.float32)
    if op == "LpNormalization":
        x[0, :, 0, :] = 0.0  # zero vectors along both axes tried: they stay 0
    try:
        check(unary(op, attrs, opset), x)
    except Exception as e:  # onnxruntime without the newest opsets
        if "onnxruntime" in type(e).__module__ and op == "Swish":
            pytest.skip(f"onnxruntime lacks {op}: {e}")
        raise


def test_rms_normalization_matches_onnxruntime():
    scale = onnx.numpy_helper.from_array(np.random.default_rng(1).uniform(0.5, 1.5, [4, 5]).astype(np.float32), "scale")
    x = np.random.default_rng(0).normal(0, 2, SHAPE).astype(np.float32)
    check(unary("RMSNormalization", dict(axis=2, epsilon=1e-3), 23, [scale]), x)


def test_cast_like_size_and_eye_like_match_onnxruntime():
    like = onnx.numpy_helper.from_array(np.array([1], np.int32), "like")
    nodes = [helper.make_node("CastLike", ["x", "like"], ["ints"]),
             helper.make_node("Size", ["x"], ["count"]),
             helper.make_node("Cast", ["count"], ["count_int"], to=TensorProto.INT32),
             helper.make_node("Add", ["ints", "count_int"], ["shifted"]),
             helper.make_node("Reshape", ["x", "square"], ["matrix"]),
             helper.make_node("EyeLike", ["matrix"], ["eye"], k=1),
             helper.make_node("Mul", ["matrix", "eye"], ["y2"])]
    square = onnx.numpy_helper.from_array(np.array([12, 10], np.int64), "square")
    graph = helper.make_graph(nodes, "like", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("shifted", TensorProto.INT32, SHAPE),
                               helper.make_tensor_value_info("y2", TensorProto.FLOAT, [12, 10])], [like, square])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = np.random.default_rng(0).uniform(-9, 9, SHAPE).astype(np.float32)
    want = ort_session_run(proto, {"x": x})
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    for got in (run(model, {"x": x}), compile_model(model)({"x": x})):
        for value, expected in zip(got.values(), want):
            assert value.dtype == expected.dtype
            np.testing.assert_array_equal(value, expected)


def test_lp_normalization_with_another_p_is_refused():
    with pytest.raises(IrforgeError, match="p=3"):
        import_onnx(unary("LpNormalization", dict(p=3), 1))


@pytest.mark.parametrize("strides, pads, dilations", [([1, 1], [0, 0, 0, 0], [1, 1]), ([2, 2], [1, 0, 1, 0], [1, 1]), ([1, 2], [0, 1, 1, 0], [2, 1])])
def test_col2im_matches_onnxruntime(strides, pads, dilations):
    image, block, channels = [6, 7], [2, 3], 3
    counts = [(image[i] + pads[i] + pads[2 + i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1 for i in range(2)]
    shape = [1, channels * 6, counts[0] * counts[1]]
    inits = [onnx.numpy_helper.from_array(np.array(image, np.int64), "image"), onnx.numpy_helper.from_array(np.array(block, np.int64), "block")]
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], strides=strides, pads=pads, dilations=dilations)
    graph = helper.make_graph([node], "col2im", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, channels, *image])], inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    x = np.random.default_rng(0).normal(0, 1, shape).astype(np.float32)
    (want,) = ort_session_run(proto, {"x": x})
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    for got in (run(model, {"x": x}), compile_model(model)({"x": x})):
        np.testing.assert_allclose(next(iter(got.values())), want, rtol=1e-5, atol=1e-5)
