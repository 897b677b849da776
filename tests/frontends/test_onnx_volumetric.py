"""ONNX 3-D convolution, ConvTranspose and pooling (video models, 3-D UNets) against
onnxruntime on the reference interpreter and the CPU backend (`backends/cpu/ops/volumetric.py`):
auto_pad, asymmetric pads, groups, dilations, a fused Relu, ceil_mode, count_include_pad."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def model(nodes, x_shape, inits=()):  # type: ignore[no-untyped-def]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a, n) for n, a in inits],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def check(proto, x_shape):  # type: ignore[no-untyped-def]
    x = np.random.default_rng(5).standard_normal(x_shape).astype(np.float32)
    (want,) = ort_session_run(proto, {"x": x})
    m = import_onnx(proto)
    got = run(m, {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    compiled = compile_model(m)
    try:
        np.testing.assert_allclose(compiled({"x": x})["y"], want, rtol=1e-4, atol=1e-5)
    finally:
        compiled.close()


def weights(*shape):  # type: ignore[no-untyped-def]
    return np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32) * 0.3


CONV = [
    ((1, 4, 5, 9, 8), (6, 4, 3, 3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2, 2])),
    ((1, 4, 5, 9, 8), (6, 2, 2, 3, 3), dict(auto_pad="SAME_LOWER", group=2, strides=[1, 2, 1])),
    ((2, 3, 6, 7, 7), (5, 3, 3, 1, 1), dict(pads=[1, 0, 0, 1, 0, 0], strides=[2, 1, 1])),
    ((1, 4, 4, 8, 8), (4, 1, 3, 3, 3), dict(group=4, pads=[0, 1, 2, 1, 0, 1])),
    ((1, 3, 4, 6, 6), (8, 3, 1, 1, 1), dict(strides=[1, 2, 2])),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "attrs"), CONV)
def test_conv3d_relu_matches_onnxruntime(x_shape, w_shape, attrs):
    inits = [("w", weights(*w_shape)), ("b", weights(w_shape[0]))]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], **attrs), helper.make_node("Relu", ["c"], ["y"])]
    check(model(nodes, x_shape, inits), x_shape)


DECONV = [
    ((1, 6, 3, 4, 4), (6, 4, 2, 2, 2), dict(strides=[2, 2, 2])),
    ((1, 4, 3, 4, 5), (4, 3, 3, 3, 3), dict(strides=[2, 2, 2], auto_pad="SAME_UPPER")),
    ((1, 4, 3, 3, 4), (4, 2, 3, 3, 2), dict(strides=[2, 1, 2], pads=[1, 0, 0, 0, 1, 1], output_padding=[1, 0, 1])),
    ((1, 4, 2, 3, 3), (4, 1, 3, 2, 3), dict(group=2, strides=[2, 2, 1], output_shape=[6, 6, 5])),
]


@pytest.mark.parametrize(("x_shape", "w_shape", "attrs"), DECONV)
def test_conv_transpose3d_matches_onnxruntime(x_shape, w_shape, attrs):
    o = w_shape[1] * attrs.get("group", 1)
    inits = [("w", weights(*w_shape)), ("b", weights(o))]
    check(model([helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)], x_shape, inits), x_shape)


POOL = [
    ("MaxPool", dict(kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1])),
    ("MaxPool", dict(kernel_shape=[2, 3, 2], strides=[2, 2, 2], ceil_mode=1, dilations=[1, 2, 1])),
    ("AveragePool", dict(kernel_shape=[3, 3, 3], strides=[2, 2, 2], pads=[1, 1, 1, 1, 1, 1], count_include_pad=1, ceil_mode=1)),
    ("AveragePool", dict(kernel_shape=[2, 3, 3], strides=[2, 2, 1], pads=[0, 1, 0, 1, 1, 2])),
    ("AveragePool", dict(kernel_shape=[3, 2, 2], auto_pad="SAME_UPPER", strides=[2, 2, 2])),
]


@pytest.mark.parametrize(("op", "attrs"), POOL)
def test_pool3d_matches_onnxruntime(op, attrs):
    check(model([helper.make_node(op, ["x"], ["y"], **attrs)], (1, 3, 7, 9, 8)), (1, 3, 7, 9, 8))
