"""TF2 While loops that are not Keras RNN layers become nn.loop (cond inlined on the initial
values for the first test, cond after body inside the region), TF2 StatelessIf nn.if:
numerics against numpy, the written IR in OpenVINO, and functions irforge cannot import
still refused (E363 for loops, E392 for If branches)."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn.control_flow import Loop
from irforge.errors import IrforgeError
from irforge.frontends.tf import import_tf
from irforge.testing.tf_models import DualBuilder, function_node, library_function, tf_tensor
from tests.backends.ir_xml_support import run_openvino

FLOAT, INT32 = 1, 3


def while_graph(body_op: str = "AddV2", grow: bool = False):  # type: ignore[no-untyped-def]
    """i = 0, acc = x; while i < n and sum(acc) < 100: i += 1, acc = acc * 2 + 1 (or acc ++ acc)."""
    b = DualBuilder()
    b.placeholder("x", [2])
    b.tf_node("Placeholder", [], "n", dtype=("type", INT32))
    b.graph.node[-1].attr["shape"].shape.SetInParent()
    b.tf_node("Const", [], "zero", value=tf_tensor(np.array(0, np.int32)), dtype=("type", INT32))

    def cond(f):  # type: ignore[no-untyped-def]
        function_node(f, "Const", "axis", [], value=tf_tensor(np.array([0], np.int32)), dtype=("type", INT32))
        function_node(f, "Const", "hundred", [], value=tf_tensor(np.array(100, np.float32)), dtype=("type", FLOAT))
        function_node(f, "Less", "counting", ["i", "limit"])
        function_node(f, "Sum", "total", ["acc", "axis:output:0"], keep_dims=False)
        function_node(f, "Less", "small", ["total:output:0", "hundred:output:0"])
        function_node(f, "LogicalAnd", "both", ["counting:z:0", "small:z:0"])

    def body(f):  # type: ignore[no-untyped-def]
        function_node(f, "Const", "one", [], value=tf_tensor(np.array(1, np.int32)), dtype=("type", INT32))
        function_node(f, "Const", "onef", [], value=tf_tensor(np.array(1, np.float32)), dtype=("type", FLOAT))
        function_node(f, "AddV2", "next_i", ["i", "one:output:0"])
        if grow:
            function_node(f, "Const", "cat_axis", [], value=tf_tensor(np.array(0, np.int32)), dtype=("type", INT32))
            function_node(f, "ConcatV2", "next_acc", ["acc", "acc", "cat_axis:output:0"])
        else:
            function_node(f, body_op, "twice", ["acc", "acc"])
            function_node(f, "AddV2", "next_acc", ["twice:z:0", "onef:output:0"])

    args = [("i", INT32), ("limit", INT32), ("acc", FLOAT)]
    library_function(b.graph, "cond_fn", args, [("keep", "both:z:0", 10)], cond)
    library_function(b.graph, "body_fn", args, [("i_out", "next_i:z:0", INT32), ("limit_out", "limit", INT32), ("acc_out", "next_acc:" + ("output:0" if grow else "z:0"), FLOAT)], body)
    b.tf_node("StatelessWhile", ["zero", "n", "x"], "loop")
    b.graph.node[-1].attr["cond"].func.name = "cond_fn"
    b.graph.node[-1].attr["body"].func.name = "body_fn"
    return b.graph


def expected(x: np.ndarray, n: int, grow: bool = False) -> tuple[int, np.ndarray]:
    i, acc = 0, x
    while i < n and acc.sum() < 100:
        i, acc = i + 1, np.concatenate([acc, acc]) if grow else acc * 2 + 1
    return i, acc


@pytest.mark.parametrize("n", [0, 2, 50])
def test_while_loop_becomes_nn_loop(tmp_path, n):
    model = import_tf(while_graph(), outputs=["loop:0", "loop:2"])
    assert [type(op) for op in model.func.body.block.ops if isinstance(op, Loop)] == [Loop]
    x = np.array([1.0, 2.0], np.float32)
    feeds = {"x": x, "n": np.array(n, np.int32)}
    i, acc = expected(x, n)
    got = run(model, feeds)
    assert int(got["loop"]) == i  # loop:0 is named loop
    np.testing.assert_allclose(got["loop:2"], acc)
    xml, _ = write_ir_xml(model, tmp_path / "w.xml")
    ov = run_openvino(xml, feeds, check_dims=False)
    np.testing.assert_allclose(ov["loop:2"], acc)


def test_while_loop_with_a_growing_variable():
    model = import_tf(while_graph(grow=True), outputs=["loop:2"])
    x = np.array([1.0, 2.0], np.float32)
    got = run(model, {"x": x, "n": np.array(3, np.int32)})
    np.testing.assert_allclose(got["loop:2"], expected(x, 3, grow=True)[1])


def test_while_loop_with_an_unsupported_body_op_is_still_refused():
    with pytest.raises(IrforgeError) as info:
        import_tf(while_graph(body_op="Frobnicate"), outputs=["loop:2"])
    assert info.value.code == "E363" and "StatelessWhile 'loop' (body 'body_fn')" in info.value.what


def test_shape_of_dynamic_dims_is_computed_at_run_time():
    """(a while-loop variable that grows has dynamic dims; its Shape is nn.shape_of)"""
    b = DualBuilder()
    b.tf_node("Placeholder", [], "x", dtype=("type", FLOAT))
    b.graph.node[-1].attr["shape"].shape.dim.add(size=-1)
    b.tf_node("Shape", ["x"], "s", out_type=("type", INT32))
    got = run(import_tf(b.graph, outputs=["s"]), {"x": np.zeros(5, np.float32)})["s"]
    assert got.dtype == np.int32 and got.tolist() == [5]


def if_graph(branch_op: str = "Neg"):  # type: ignore[no-untyped-def]
    """y = If(sum(x) > 0, then: x * 2, else: Concat(x, neg(x))): branches of different shapes."""
    b = DualBuilder()
    b.placeholder("x", [2])
    b.tf_node("Const", [], "axis", value=tf_tensor(np.array([0], np.int32)), dtype=("type", INT32))
    b.tf_node("Const", [], "zero", value=tf_tensor(np.array(0, np.float32)), dtype=("type", FLOAT))
    b.tf_node("Sum", ["x", "axis"], "total", keep_dims=False)
    b.tf_node("Greater", ["total", "zero"], "positive")

    def then(f):  # type: ignore[no-untyped-def]
        function_node(f, "AddV2", "twice", ["v", "v"])

    def other(f):  # type: ignore[no-untyped-def]
        function_node(f, branch_op, "neg", ["v"])
        function_node(f, "Const", "cat_axis", [], value=tf_tensor(np.array(0, np.int32)), dtype=("type", INT32))
        function_node(f, "ConcatV2", "both", ["v", "neg:y:0", "cat_axis:output:0"])

    library_function(b.graph, "then_fn", [("v", FLOAT)], [("out", "twice:z:0", FLOAT)], then)
    library_function(b.graph, "else_fn", [("v", FLOAT)], [("out", "both:output:0", FLOAT)], other)
    b.tf_node("StatelessIf", ["positive", "x"], "cond")
    b.graph.node[-1].attr["then_branch"].func.name = "then_fn"
    b.graph.node[-1].attr["else_branch"].func.name = "else_fn"
    return b.graph


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_becomes_nn_if(tmp_path, sign):
    from irforge.dialects.nn.control_flow import If

    model = import_tf(if_graph(), outputs=["cond"])
    assert any(isinstance(op, If) for op in model.func.body.block.ops)
    x = np.array([1.0, 2.0], np.float32) * sign
    want = x * 2 if sign > 0 else np.concatenate([x, -x])
    np.testing.assert_allclose(run(model, {"x": x})["cond"], want)
    xml, _ = write_ir_xml(model, tmp_path / "if.xml")
    np.testing.assert_allclose(run_openvino(xml, {"x": x})["cond"], want)


def test_if_with_an_unsupported_branch_op_names_it():
    with pytest.raises(IrforgeError, match="unsupported TensorFlow ops in the branches of StatelessIf 'cond': Frobnicate") as info:
        import_tf(if_graph("Frobnicate"), outputs=["cond"])
    assert info.value.code == "E392"
