"""ONNX If and Loop folded at import: a constant condition inlines the taken branch, a constant
trip count unrolls the body; numerics against onnxruntime on ref and cpu. (Run-time ones:
test_onnx_control_flow_regions.py.)"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx
from tests.helpers import ort_session_run, rand

X = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])


def branch(name: str, op: str, scale: float) -> onnx.GraphProto:
    """y = op(x, scale): reads x from the enclosing graph."""
    node = helper.make_node(op, ["x", f"{name}_k"], [f"{name}_y"])
    k = numpy_helper.from_array(np.array(scale, np.float32), f"{name}_k")
    return helper.make_graph([node], name, [], [helper.make_tensor_value_info(f"{name}_y", TensorProto.FLOAT, [2, 3])], [k])


def if_model(condition_from_shape: bool) -> onnx.ModelProto:
    """If(cond) then x * 3 else x + 10, cond = (x.shape[1] > 2) or a graph input."""
    nodes, inputs, inits = [], [X], []
    if condition_from_shape:
        inits = [numpy_helper.from_array(np.array(1, np.int64), "one"), numpy_helper.from_array(np.array(2, np.int64), "two")]
        nodes += [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("Gather", ["shape", "one"], ["width"], axis=0),
            helper.make_node("Greater", ["width", "two"], ["cond"]),
        ]
    else:
        inputs.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    nodes.append(helper.make_node("If", ["cond"], ["y"], name="pick", then_branch=branch("then", "Mul", 3.0), else_branch=branch("else", "Add", 10.0)))
    graph = helper.make_graph(nodes, "if", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def loop_model(trip_count: int = 4, condition: str = "constant", body_op: str = "Add") -> onnx.ModelProto:
    """acc = x; repeat: acc = acc * 0.5 + x * i (i the iteration), scan out acc; the body
    reads x from the enclosing graph."""
    body_nodes = [
        helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["x", "i_f"], ["xi"]),
        helper.make_node("Mul", ["acc_in", "half"], ["acc_half"]),
        helper.make_node(body_op, ["acc_half", "xi"], ["acc_out"]),
        helper.make_node("Identity", ["acc_out"], ["scan_out"]),
    ]
    if condition == "data":  # keep going while the sum stays below 100: data-dependent
        body_nodes += [helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0), helper.make_node("Less", ["total", "hundred"], ["cond_out"])]
    else:
        body_nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    body = helper.make_graph(
        body_nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("scan_out", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half"), numpy_helper.from_array(np.array(100.0, np.float32), "hundred")],
    )  # fmt: skip
    inits = [numpy_helper.from_array(np.array(trip_count, np.int64), "M"), numpy_helper.from_array(np.array(True), "keep_going")]
    node = helper.make_node("Loop", ["M", "keep_going", "x"], ["acc", "scans"], name="repeat", body=body)
    outputs = [helper.make_tensor_value_info("acc", TensorProto.FLOAT, [2, 3]), helper.make_tensor_value_info("scans", TensorProto.FLOAT, [trip_count, 2, 3])]
    graph = helper.make_graph([node], "loop", [X], outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


FEEDS = {"x": rand(2, 3, seed=1)}


def test_if_with_a_shape_condition_is_the_taken_branch():
    model = if_model(condition_from_shape=True)
    imported = import_onnx(model)
    assert [op.name for op in imported.func.body.block.ops if op.name.startswith("nn.") and op.name != "nn.constant"] == ["nn.eltwise"]
    (want,) = ort_session_run(model, FEEDS)
    np.testing.assert_allclose(run(imported, FEEDS)["y"], want, rtol=1e-6)
    np.testing.assert_allclose(want, FEEDS["x"] * 3, rtol=1e-6)


def test_constant_loop_is_unrolled_and_matches_onnxruntime(tmp_path):
    model = loop_model(4)
    imported = import_onnx(model)
    want = dict(zip(["acc", "scans"], ort_session_run(model, FEEDS)))
    got = run(imported, FEEDS)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6)
    compiled = compile_model(imported, threads=1, cache_dir=tmp_path)
    try:
        out = compiled(FEEDS)
    finally:
        compiled.close()
    for name in want:
        np.testing.assert_allclose(out[name], want[name], rtol=1e-6)


def test_one_iteration_loop():
    model = loop_model(1)
    want = dict(zip(["acc", "scans"], ort_session_run(model, FEEDS)))
    got = run(import_onnx(model), FEEDS)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6)


@pytest.mark.parametrize(
    "model, message, code",
    [
        (lambda: loop_model(2, body_op="StringConcat"), "unsupported ONNX ops in a subgraph: StringConcat", "E190"),
    ],
    ids=["unsupported-body-op"],
)
def test_loops_that_cannot_be_unrolled_are_refused(model, message, code):
    with pytest.raises(IrforgeError, match=message) as info:
        import_onnx(model())
    assert info.value.code == code and "ONNX node 'repeat'" in str(info.value)
