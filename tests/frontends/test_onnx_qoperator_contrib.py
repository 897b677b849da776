"""onnxruntime's QOperator contrib ops (com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearSoftmax, QLinearGlobalAveragePool, QLinearConcat, QGemm) imported
as dequantize -> float op -> quantize, checked against onnxruntime's own kernels (graph optimisations off):
equal but for values within float rounding of a half step, which may land one step apart."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx

U8, I8 = TensorProto.UINT8, TensorProto.INT8


def model(node: onnx.NodeProto, inputs: list[tuple[str, int, list[int]]], initializers: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node], "q", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_empty_tensor_value_info(node.output[0])],
        [numpy_helper.from_array(v, n) for n, v in initializers.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def ort_unfused(proto: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)[0]


def check(proto: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> None:
    want = ort_unfused(proto, feeds)
    model_ = import_onnx(proto)
    got = next(iter(run(model_, feeds).values()))
    assert got.dtype == want.dtype and got.shape == want.shape
    steps = np.abs(got.astype(np.int64) - want.astype(np.int64)) if want.dtype.kind in "iu" else np.abs(got - want)
    if want.dtype.kind in "iu":
        assert steps.max() <= 1 and np.mean(steps > 0) <= 0.02, (steps.max(), np.mean(steps > 0))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def rand_q(shape: list[int], dtype: type, seed: int) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(dtype)


def s(v: float) -> np.ndarray:
    return np.array(v, np.float32)


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_qlinear_add_and_mul_with_broadcasting(op, dtype):
    t = U8 if dtype == np.uint8 else I8
    node = helper.make_node(op, ["a", "as", "az", "b", "bs", "bz", "cs", "cz"], ["c"], domain="com.microsoft")
    zp = lambda v: np.array(v, dtype)  # noqa: E731
    # scales as a quantizer computes them (not round numbers, which make exact half steps common)
    init = {"as": s(0.0213), "az": zp(3), "bs": s(0.0517), "bz": zp(-2 if dtype == np.int8 else 130), "cs": s(0.0731 if op == "QLinearAdd" else 0.2931), "cz": zp(5)}
    proto = model(node, [("a", t, [2, 3, 4]), ("b", t, [4])], init)
    check(proto, {"a": rand_q([2, 3, 4], dtype, 1), "b": rand_q([4], dtype, 2)})


@pytest.mark.parametrize("op", ["QLinearSigmoid", "QLinearLeakyRelu"])
def test_qlinear_activations(op):
    attrs = {"alpha": 0.2} if op == "QLinearLeakyRelu" else {}
    node = helper.make_node(op, ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", **attrs)
    init = {"xs": s(0.05), "xz": np.array(128, np.uint8), "ys": s(1 / 256 if op == "QLinearSigmoid" else 0.04), "yz": np.array(0 if op == "QLinearSigmoid" else 100, np.uint8)}
    proto = model(node, [("x", U8, [256])], init)
    check(proto, {"x": np.arange(256, dtype=np.uint8)})  # every input value


@pytest.mark.parametrize("opset,axis", [(13, -1), (13, 1), (11, 1)])
def test_qlinear_softmax(opset, axis):
    node = helper.make_node("QLinearSoftmax", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", axis=axis, opset=opset)
    init = {"xs": s(0.0871), "xz": np.array(131, np.uint8), "ys": s(1 / 256), "yz": np.array(0, np.uint8)}
    proto = model(node, [("x", U8, [2, 3, 7])], init)
    check(proto, {"x": rand_q([2, 3, 7], np.uint8, 9)})


def test_qlinear_global_average_pool():
    node = helper.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", channels_last=0)
    init = {"xs": s(0.03), "xz": np.array(120, np.uint8), "ys": s(0.01), "yz": np.array(128, np.uint8)}
    proto = model(node, [("x", U8, [2, 8, 5, 5])], init)
    check(proto, {"x": rand_q([2, 8, 5, 5], np.uint8, 3)})


def test_qlinear_concat_requantizes_each_input():
    node = helper.make_node("QLinearConcat", ["ys", "yz", "a", "as", "az", "b", "bs", "bz"], ["y"], domain="com.microsoft", axis=1)
    init = {"ys": s(0.05), "yz": np.array(128, np.uint8), "as": s(0.05), "az": np.array(128, np.uint8), "bs": s(0.02), "bz": np.array(90, np.uint8)}
    proto = model(node, [("a", U8, [2, 3, 4]), ("b", U8, [2, 5, 4])], init)
    check(proto, {"a": rand_q([2, 3, 4], np.uint8, 4), "b": rand_q([2, 5, 4], np.uint8, 5)})


@pytest.mark.parametrize("form", ["quantized", "float-output", "per-column"])
def test_qgemm(form):
    rng = np.random.default_rng(6)
    # transB: [N, K]; |b| < 64: onnxruntime's u8 x s8 kernel on AVX2 hosts without VNNI adds
    # products in pairs with 16-bit saturation (255 * 127 * 2 overflows), which is its error
    b = np.random.default_rng(7).integers(-63, 64, [6, 5]).astype(np.int8)
    b_scale = rng.uniform(0.01, 0.03, 6).astype(np.float32) if form == "per-column" else s(0.02)
    b_zp = np.zeros(6, np.int8) if form == "per-column" else np.array(0, np.int8)
    init = {"as": s(0.04), "az": np.array(110, np.uint8), "b": b, "bs": b_scale, "bz": b_zp, "c": rng.integers(-500, 500, 6).astype(np.int32)}
    names = ["a", "as", "az", "b", "bs", "bz", "c"]
    if form != "float-output":
        init.update(ys=s(0.5), yz=np.array(120, np.uint8))
        names += ["ys", "yz"]
    node = helper.make_node("QGemm", names, ["y"], domain="com.microsoft", transB=1, alpha=0.75)
    proto = model(node, [("a", U8, [3, 5])], init)
    check(proto, {"a": rand_q([3, 5], np.uint8, 8)})


def test_channels_last_pool_is_refused_by_name():
    node = helper.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"], domain="com.microsoft", channels_last=1)
    init = {"xs": s(0.03), "xz": np.array(120, np.uint8), "ys": s(0.01), "yz": np.array(128, np.uint8)}
    with pytest.raises(IrforgeError, match="channels_last") as info:
        import_onnx(model(node, [("x", U8, [1, 5, 5, 8])], init))
    assert info.value.code == "E179"


def test_max_pool_on_uint8_runs_on_cpu_as_a_host_step():
    """QOperator models keep MaxPool on the uint8 tensors between QLinearConvs."""
    from irforge.backends.cpu import compile_model

    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    proto = model(node, [("x", U8, [1, 4, 7, 7])], {})
    x = {"x": rand_q([1, 4, 7, 7], np.uint8, 10)}
    got = next(iter(compile_model(import_onnx(proto))(x).values()))
    np.testing.assert_array_equal(got, ort_unfused(proto, x))
