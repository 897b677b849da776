"""ONNX Unique (nn.unique, OpenVINO Unique-10) against onnxruntime on ref and cpu: all four
outputs, flattened or along an axis, sorted or in first-occurrence order; on cpu it runs as
a host step between compiled segments (its sizes are known only at run time)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

OUTPUTS = ("y", "indices", "inverse", "counts")


def unique_model(shape, elem=TensorProto.FLOAT, **attrs):  # type: ignore[no-untyped-def]
    """Relu(x) -> Unique -> (Y * 2, indices, inverse, counts): compiled ops before and after."""
    nodes = [
        helper.make_node("Relu" if elem == TensorProto.FLOAT else "Identity", ["x"], ["r"]),
        helper.make_node("Unique", ["r"], ["u", "indices", "inverse", "counts"], **attrs),
        helper.make_node("Add", ["u", "u"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", elem, shape)],
        [helper.make_tensor_value_info(n, TensorProto.INT64 if n != "y" else elem, None) for n in OUTPUTS],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def check(proto, x):  # type: ignore[no-untyped-def]
    model = import_onnx(proto)
    want = ort_session_run(proto, {"x": x})
    for device, got in (("ref", run(model, {"x": x})), ("cpu", compile_model(model, threads=1)({"x": x}))):
        for name, w in zip(OUTPUTS, want):
            assert got[name].shape == w.shape, (device, name, got[name].shape, w.shape)
            np.testing.assert_array_equal(got[name], w, err_msg=f"{device} {name}")


@pytest.mark.parametrize("attrs", [{}, {"sorted": 0}, {"axis": 0}, {"axis": 1, "sorted": 0}, {"axis": -1}])
def test_unique_matches_onnxruntime(attrs):
    x = np.array([[2, 0, 2, 1], [3, -1, 3, 0], [2, 0, 2, 1]], np.float32)  # rows 0, 2 equal; columns 0, 2
    check(unique_model([3, 4], **attrs), x)


def test_unique_of_integers_in_first_occurrence_order():
    x = np.random.default_rng(4).integers(-3, 4, size=(5, 6)).astype(np.int64)
    check(unique_model([5, 6], TensorProto.INT64, sorted=0), x)


def test_unique_axis_out_of_range_is_refused():
    with pytest.raises(IrforgeError, match="axis 2 is out of range") as info:
        import_onnx(unique_model([3, 4], axis=2))
    assert info.value.code == "E130"


def test_unique_and_bit_ops_run_on_opencl_as_fallbacks():
    """OpenCL has no kernel for nn.unique or nn.bitwise: the HETERO fallback runs them."""
    pytest.importorskip("pyopencl")
    from irforge.backends.opencl import compile_model as compile_opencl
    from irforge.backends.opencl.device import _all_devices
    from tests.frontends.test_onnx_bitwise import model as bit_model

    if not _all_devices():
        pytest.skip("no OpenCL device")
    x = np.array([[2, 0, 2, 1], [3, -1, 3, 0], [2, 0, 2, 1]], np.float32)
    proto = unique_model([3, 4], axis=1, sorted=0)
    got = compile_opencl(import_onnx(proto))({"x": x})
    for name, w in zip(OUTPUTS, ort_session_run(proto, {"x": x})):
        np.testing.assert_array_equal(got[name], w, err_msg=name)
    a, b = np.arange(12, dtype=np.int32).reshape(3, 4) - 5, np.array([3, -5, 6, 7], np.int32)
    proto = bit_model("BitwiseXor", TensorProto.INT32, [[3, 4], [4]])
    (want,) = ort_session_run(proto, {"a": a, "b": b})
    np.testing.assert_array_equal(compile_opencl(import_onnx(proto))({"a": a, "b": b})["y"], want)
