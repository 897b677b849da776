"""MatMulInteger and ConvInteger (onnxruntime's quantize_dynamic) import as float32
compositions: exact integer results (numpy in int64), equal to onnxruntime where its u8 x s8
kernels do not saturate (7-bit weights; with full-range s8 weights onnxruntime's AVX2 kernels
saturate 16-bit sums: up to 12447 off on a 32-term product, measured), on ref and cpu."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def model(op: str, w: np.ndarray, w_zero: np.ndarray, x_shape: list[int], a_zero_shape: list[int] | None = None):  # type: ignore[no-untyped-def]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w_zero, "wz")]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"])]
    zero = "z"
    if a_zero_shape is not None:
        inits.append(numpy_helper.from_array(np.full(a_zero_shape, 3, np.uint8), "rows"))
        zero = "rows"
    attrs = {"pads": [1, 1, 1, 1]} if op == "ConvInteger" else {}
    nodes.append(helper.make_node(op, ["y", "w", zero, "wz"], ["o"], **attrs))
    graph = helper.make_graph(nodes, "integer", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("o", TensorProto.INT32, None), helper.make_tensor_value_info("y", TensorProto.UINT8, None),
                               helper.make_tensor_value_info("z", TensorProto.UINT8, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def exact(op: str, y: np.ndarray, z: np.ndarray, w: np.ndarray, w_zero: np.ndarray) -> np.ndarray:
    a = y.astype(np.int64) - int(z)
    if op == "MatMulInteger":
        return a @ (w.astype(np.int64) - w_zero.astype(np.int64))
    b = w.astype(np.int64) - w_zero.astype(np.int64)  # onnxruntime's ConvInteger takes one weight zero point
    padded = np.pad(a, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((a.shape[0], b.shape[0], a.shape[2], a.shape[3]), np.int64)
    for i in range(a.shape[2]):
        for j in range(a.shape[3]):
            out[:, :, i, j] = np.einsum("nchw,ochw->no", padded[:, :, i:i + 3, j:j + 3], b)
    return out


@pytest.mark.parametrize("op", ["MatMulInteger", "ConvInteger"])
@pytest.mark.parametrize("bits", [7, 8])
@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_integer_ops_are_exact(op, bits, device):
    rng = np.random.default_rng(2)
    limit = (1 << (bits - 1)) - 1
    if op == "MatMulInteger":
        w, w_zero, x_shape = rng.integers(-limit, limit + 1, (48, 16)).astype(np.int8), rng.integers(-3, 4, 16).astype(np.int8), [2, 12, 48]
    else:
        w, w_zero, x_shape = rng.integers(-limit, limit + 1, (6, 4, 3, 3)).astype(np.int8), np.array(2, np.int8), [1, 4, 8, 8]
    proto = model(op, w, w_zero, x_shape)
    x = (rng.standard_normal(x_shape) * 3).astype(np.float32)
    want, y, z = ort_session_run(proto, {"x": x})
    reference = exact(op, y, z, w, w_zero)
    irforge_model = import_onnx(proto)
    if device == "ref":
        got = run(irforge_model, {"x": x})
    else:
        from irforge.backends.cpu import compile_model

        got = compile_model(irforge_model)({"x": x})
    out = next(iter(got.values()))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, reference)
    if bits == 7:  # onnxruntime does not saturate: the same numbers
        np.testing.assert_array_equal(want, reference)


def test_a_per_row_zero_point_is_refused():
    proto = model("MatMulInteger", np.ones((8, 4), np.int8), np.zeros((), np.int8), [6, 8], a_zero_shape=[6])
    with pytest.raises(IrforgeError) as e:
        import_onnx(proto)
    assert e.value.code == "E157" and "a_zero_point" in e.value.what
