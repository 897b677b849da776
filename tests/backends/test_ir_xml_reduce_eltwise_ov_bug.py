"""OpenVINO 2026.4.1's CPU plugin computes a keep_dims=false Reduce over the last axis of a
rank-3 tensor followed by an element-wise op with a per-channel constant wrong for batch > 1
(the constant is applied along the batch axis). x-vector statistics pooling exports hit it
(ReduceMean over time, then BatchNorm1d as Mul + Add). The IR writer emits that Reduce as
keep_dims=true + Squeeze (keep_dims=true: followed by Maximum(y, y)), which OpenVINO
computes right; other Reduces are written as before."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.ir_xml import write_ir_xml
from irforge.frontends.onnx import import_onnx
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import ort_session_run

C, T = 6, 5


def model(reduce: str, axis: int, keepdims: int, tail: list[str], batch) -> object:  # type: ignore[no-untyped-def]
    """x [batch, C, T] -> `reduce` over `axis` -> each op of `tail` with a per-channel constant."""
    rng = np.random.default_rng(3)
    shape = (C, 1) if keepdims else (C,)
    inits, nodes, last = [], [helper.make_node(reduce, ["x"], ["r"], axes=[axis], keepdims=keepdims)], "r"
    for i, op in enumerate(tail):
        const = (rng.standard_normal(shape) + 2).astype(np.float32)
        inits.append(numpy_helper.from_array(const, f"c{i}"))
        out = "y" if i == len(tail) - 1 else f"t{i}"
        nodes.append(helper.make_node(op, [last, f"c{i}"], [out]))
        last = out
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, C, T])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def check_in_openvino(tmp_path, proto, batch: int = 2) -> str:  # type: ignore[no-untyped-def]
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    feeds = {"x": np.random.default_rng(0).standard_normal((batch, C, T)).astype(np.float32)}
    (want,) = ort_session_run(proto, feeds)
    assert_close(run_openvino(tmp_path / "m.xml", feeds)["y"], want, what="OpenVINO vs onnxruntime")
    return (tmp_path / "m.xml").read_text()


@pytest.mark.parametrize("batch", [2, "n"])
@pytest.mark.parametrize(("reduce", "tail"), [
    ("ReduceMean", ["Mul", "Add"]),  # stats pooling then BatchNorm1d
    ("ReduceMin", ["Sub", "Div"]),
    ("ReduceMax", ["Add"]),
])  # fmt: skip
def test_last_axis_reduce_then_per_channel_constant_runs_right_in_openvino(tmp_path, batch, reduce, tail):
    xml = check_in_openvino(tmp_path, model(reduce, 2, 0, tail, batch))
    assert 'type="Squeeze"' in xml  # the workaround's form


@pytest.mark.parametrize("batch", [2, "n"])
@pytest.mark.parametrize(("reduce", "tail"), [("ReduceMean", ["Mul", "Add"]), ("ReduceMax", ["Sub"])])
def test_keep_dims_form_runs_right_in_openvino(tmp_path, batch, reduce, tail):
    xml = check_in_openvino(tmp_path, model(reduce, 2, 1, tail, batch))
    assert 'type="Maximum"' in xml  # the workaround's barrier


@pytest.mark.parametrize(("axis", "tail", "batch"), [
    (1, ["Mul"], 2),      # not the last axis
    (2, ["Relu"], 2),     # no element-wise op after it
    (2, ["Mul"], 1),      # batch 1 is right in OpenVINO
])  # fmt: skip
def test_unaffected_reduces_are_written_as_before(tmp_path, axis, tail, batch):
    shape = (T,) if axis == 1 else (C,)
    if tail == ["Relu"]:
        nodes = [helper.make_node("ReduceMean", ["x"], ["r"], axes=[axis], keepdims=0), helper.make_node("Relu", ["r"], ["y"])]
        inits = []
    else:
        nodes = [helper.make_node("ReduceMean", ["x"], ["r"], axes=[axis], keepdims=0), helper.make_node("Mul", ["r", "c"], ["y"])]
        inits = [numpy_helper.from_array(np.arange(1, shape[0] + 1, dtype=np.float32), "c")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, C, T])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits,
    )  # fmt: skip
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    xml = check_in_openvino(tmp_path, proto, batch)
    assert 'type="Squeeze"' not in xml
    assert '<data keep_dims="false"' in xml
