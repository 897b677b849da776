"""ONNX Compress (NonZero + Gather) and Det (Leibniz's formula) against onnxruntime on ref
and cpu; a run-time condition gives a dynamic axis run as a host segment on cpu."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

FLOAT, BOOL = TensorProto.FLOAT, TensorProto.BOOL


def make(nodes, inputs, initializers=(), opset=17):  # type: ignore[no-untyped-def]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info("y", FLOAT, None)],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(proto, feeds):  # type: ignore[no-untyped-def]
    model = import_onnx(proto)
    (want,) = ort_session_run(proto, feeds)
    for device, got in (("ref", run(model, feeds)), ("cpu", compile_model(model, threads=1)(feeds))):
        assert got["y"].shape == want.shape, (device, got["y"].shape, want.shape)
        np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-5, err_msg=device)
    return model


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress_with_a_run_time_condition_matches_onnxruntime(axis):
    """The condition is computed from the input: its first row > 0 (5 entries; flattened, it
    selects among the first 5 of 20), its first column > 0 for axis 0: a data-dependent count."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5)).astype(np.float32)
    nodes = [
        helper.make_node("Slice", ["x", "s0", "s1", "ax"], ["row"]),
        helper.make_node("Reshape", ["row", "flat"], ["row1"]),
        helper.make_node("Greater", ["row1", "zero"], ["cond"]),
        helper.make_node("Compress", ["x", "cond"], ["c"], **({} if axis is None else {"axis": axis})),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    slice_axis = 1 if axis == 0 else 0
    inits = [("s0", np.array([0], np.int64)), ("s1", np.array([1], np.int64)), ("ax", np.array([slice_axis], np.int64)),
             ("flat", np.array([-1], np.int64)), ("zero", np.float32(0))]
    model = check(make(nodes, [("x", FLOAT, [4, 5])], inits), {"x": x})
    gathered = [op for op in model.func.body.block.ops if op.name == "nn.gather"]
    assert len(gathered) == 1 and DYN in gathered[0].results[0].type.get_shape()


@pytest.mark.parametrize("cond, kept", [([False, True, True], 2), ([False, False, False], 0)])
def test_compress_with_a_shorter_constant_condition_selects_among_its_entries(cond, kept):
    x = np.arange(24, dtype=np.float32).reshape(2, 4, 3)
    nodes = [helper.make_node("Compress", ["x", "cond"], ["y"], axis=1)]
    model = check(make(nodes, [("x", FLOAT, [2, 4, 3])], [("cond", np.array(cond))]), {"x": x})
    assert model.func.body.block.ops.last.operands[0].type.get_shape() == (2, kept, 3)  # type: ignore[union-attr]


def test_compress_condition_input_at_run_time():
    x = np.random.default_rng(1).standard_normal((3, 6)).astype(np.float32)
    nodes = [helper.make_node("Compress", ["x", "cond"], ["y"], axis=1)]
    proto = make(nodes, [("x", FLOAT, [3, 6]), ("cond", BOOL, [6])])
    for cond in (np.array([1, 0, 1, 1, 0, 0], bool), np.zeros(6, bool)):
        check(proto, {"x": x, "cond": cond})


def test_compress_condition_longer_than_the_axis_is_refused():
    nodes = [helper.make_node("Compress", ["x", "cond"], ["y"], axis=0)]
    proto = make(nodes, [("x", FLOAT, [3, 6]), ("cond", BOOL, [5])])
    with pytest.raises(IrforgeError, match="5 entries, more than the 3") as info:
        import_onnx(proto)
    assert info.value.code == "E128"


@pytest.mark.parametrize("shape", [[2, 2], [3, 3], [2, 4, 4], [1, 1]])
def test_det_matches_onnxruntime(shape):
    x = np.random.default_rng(len(shape) + shape[-1]).standard_normal(shape).astype(np.float32)
    nodes = [helper.make_node("Det", ["x"], ["d"]), helper.make_node("Identity", ["d"], ["y"])]
    check(make(nodes, [("x", FLOAT, shape)]), {"x": x})


def test_det_of_large_matrices_is_refused():
    nodes = [helper.make_node("Det", ["x"], ["y"])]
    with pytest.raises(IrforgeError, match="5x5 matrices is not supported") as info:
        import_onnx(make(nodes, [("x", FLOAT, [5, 5])]))
    assert info.value.code == "E129"


@pytest.mark.parametrize("which", ["compress", "det"])
def test_compress_and_det_ir_run_in_openvino_like_onnxruntime(tmp_path, which):
    """The IR of a run-time Compress (NonZero-3 -> Reshape -> Gather-8, a -1 dim) and of a
    batched Det (Gather, ReduceProd, ReduceSum) run in OpenVINO."""
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import assert_close, run_openvino

    rng = np.random.default_rng(9)
    if which == "compress":
        proto = make([helper.make_node("Compress", ["x", "cond"], ["y"], axis=1)], [("x", FLOAT, [3, 6]), ("cond", BOOL, [6])])
        feeds = {"x": rng.standard_normal((3, 6)).astype(np.float32), "cond": np.array([1, 0, 1, 1, 0, 1], bool)}
    else:
        proto = make([helper.make_node("Det", ["x"], ["y"])], [("x", FLOAT, [2, 3, 3])])
        feeds = {"x": rng.standard_normal((2, 3, 3)).astype(np.float32)}
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    (want,) = ort_session_run(proto, feeds)
    assert_close(run_openvino(tmp_path / "m.xml", feeds)["y"], want, rtol=1e-5, what=which)
