"""ONNX BitwiseAnd / Or / Xor / Not and BitShift (nn.bitwise) against onnxruntime on ref and
cpu (a host step between compiled integer ops), and a bad BitShift direction."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def model(op_type, elem, shapes, add=True, **attrs):  # type: ignore[no-untyped-def]
    """op_type(a[, b]) + a (the CPU backend has no u8 Add: no Add after the shifts)."""
    names = ["a", "b"][: len(shapes)]
    nodes = [helper.make_node(op_type, names, ["bits" if add else "y"], **attrs)]
    if add:
        nodes.append(helper.make_node("Add", ["bits", "a"], ["y"]))
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, elem, s) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", elem, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def check(proto, feeds):  # type: ignore[no-untyped-def]
    imported = import_onnx(proto)
    (want,) = ort_session_run(proto, feeds)
    for device, got in (("ref", run(imported, feeds)), ("cpu", compile_model(imported, threads=1)(feeds))):
        assert got["y"].dtype == want.dtype and got["y"].shape == want.shape, device
        np.testing.assert_array_equal(got["y"], want, err_msg=device)


@pytest.mark.parametrize("op_type", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_binary_bit_operations_match_onnxruntime(op_type):
    rng = np.random.default_rng(5)
    a = rng.integers(-1000, 1000, size=(3, 4)).astype(np.int32)
    b = rng.integers(-1000, 1000, size=(4,)).astype(np.int32)
    check(model(op_type, TensorProto.INT32, [[3, 4], [4]]), {"a": a, "b": b})


def test_bitwise_not_matches_onnxruntime():
    a = np.array([[0, 1, -1], [127, -128, 5]], np.int64)
    check(model("BitwiseNot", TensorProto.INT64, [[2, 3]]), {"a": a})


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_matches_onnxruntime(direction):
    a = np.array([[1, 2, 200, 255], [16, 7, 128, 3]], np.uint8)
    b = np.array([[0, 1, 2, 7], [4, 3, 1, 5]], np.uint8)
    check(model("BitShift", TensorProto.UINT8, [[2, 4], [2, 4]], add=False, direction=direction), {"a": a, "b": b})


def test_bit_shift_direction_must_be_left_or_right():
    with pytest.raises(IrforgeError, match="direction='UP'") as info:
        import_onnx(model("BitShift", TensorProto.UINT32, [[4], [4]], direction="UP"))
    assert info.value.code == "E130"
