"""A node whose subgraph reads an outer value by name is imported after that value's
producer, even where the graph lists the producer later (Mask R-CNN's mask paste Loop read
a Cast that the order by explicit inputs alone put after it: 'used but produced by no
node')."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx


def test_if_reading_an_outer_value_listed_after_it_imports():
    then = helper.make_graph([helper.make_node("Mul", ["doubled", "x"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [3])])
    other = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [3])])
    nodes = [
        helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other),
        helper.make_node("Add", ["x", "x"], ["doubled"]),  # read by the then-branch only
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
                                           helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    x = np.array([1.0, -2.0, 3.0], np.float32)
    np.testing.assert_array_equal(run(model, {"x": x, "cond": np.array(True)})["y"], 2 * x * x)
    np.testing.assert_array_equal(run(model, {"x": x, "cond": np.array(False)})["y"], -x)


def test_a_branch_value_named_like_a_later_outer_value_is_no_outer_read():
    """The then-branch defines its own 'c'; the outer 'c' comes after the If and reads its
    output. Counting the branch's 'c' as an outer read made a cycle (E197)."""
    then = helper.make_graph([helper.make_node("Neg", ["x"], ["c"]), helper.make_node("Abs", ["c"], ["t"])], "then", [],
                             [helper.make_tensor_value_info("t", TensorProto.FLOAT, [3])])
    other = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, [3])])
    nodes = [
        helper.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other),
        helper.make_node("Add", ["y", "x"], ["c"]),
    ]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
                                           helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("c", TensorProto.FLOAT, [3])])
    model = import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    x = np.array([1.0, -2.0, 3.0], np.float32)
    np.testing.assert_array_equal(run(model, {"x": x, "cond": np.array(True)})["c"], np.abs(x) + x)
    np.testing.assert_array_equal(run(model, {"x": x, "cond": np.array(False)})["c"], 2 * x)
