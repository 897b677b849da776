"""ONNX If / Loop whose control is known only at run time become nn.if / nn.loop with the
subgraphs as regions: numerics against onnxruntime on the reference interpreter."""

from __future__ import annotations

import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.dialects.nn.control_flow import If, Loop
from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx
from tests.frontends.test_onnx_control_flow import loop_model
from tests.helpers import assert_round_trip, ort_session_run, rand


def vi(name: str, elem: int, shape: list | None) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, elem, shape)


def model_of(nodes, inputs, outputs, inits=()) -> onnx.ModelProto:  # type: ignore[no-untyped-def]
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def data_if_model() -> onnx.ModelProto:
    """If ReduceSum(x) > 0 then x * 2 (2x3) else Concat(x, x + 1) (4x3): branch shapes differ;
    both branches read x from the enclosing graph, the else branch a weight of the top graph."""
    then = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["t"])], "then", [], [vi("t", TensorProto.FLOAT, None)], [numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    other = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["x1"]), helper.make_node("Concat", ["x", "x1"], ["e"], axis=0)],
        "else", [], [vi("e", TensorProto.FLOAT, None)],
    )  # fmt: skip
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then, else_branch=other),
    ]
    inits = [numpy_helper.from_array(np.array(0.0, np.float32), "zero"), numpy_helper.from_array(rand(2, 3, seed=5), "w")]
    return model_of(nodes, [vi("x", TensorProto.FLOAT, [2, 3])], [vi("y", TensorProto.FLOAT, None)], inits)


def check(model: onnx.ModelProto, feeds: dict[str, np.ndarray], op: type, cpu: bool = True) -> None:
    """ref (and the CPU backend: host steps, in host segments where dims are dynamic) give
    onnxruntime's outputs."""
    imported = import_onnx(model)
    assert any(isinstance(o, op) for o in imported.func.body.block.ops)
    assert_round_trip(imported)
    names = [o.name for o in model.graph.output]
    want = dict(zip(names, ort_session_run(model, feeds)))
    runs = {"ref": run(imported, feeds)}
    if cpu:
        with tempfile.TemporaryDirectory() as cache:
            compiled = compile_model(imported, threads=1, cache_dir=cache)
            try:
                runs["cpu"] = compiled(feeds)
            finally:
                compiled.close()
    for backend, got in runs.items():
        for name in names:
            assert got[name].shape == want[name].shape, (backend, name)
            np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=1e-6, err_msg=f"{backend}: {name}")


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_on_data_with_different_branch_shapes(sign):
    model = data_if_model()
    imported = import_onnx(model)
    assert str(imported.func.function_type.outputs.data[0]) == "tensor<?x3xf32>"
    check(model, {"x": sign * np.abs(rand(2, 3, seed=1))}, If)


def counted_loop_model() -> onnx.ModelProto:
    """Loop n times (n an input): acc = acc * x + i, grow = Concat(grow, acc row sums); scans
    out acc; the body reads x (outer scope)."""
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["acc", "x"], ["ax"]),
            helper.make_node("Add", ["ax", "fi"], ["acc2"]),
            helper.make_node("ReduceMax", ["acc2"], ["rs"], axes=[1], keepdims=0),
            helper.make_node("Concat", ["grow", "rs"], ["grow2"], axis=0),
            helper.make_node("Identity", ["cond"], ["cond2"]),
            helper.make_node("Neg", ["acc2"], ["scan"]),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("acc", TensorProto.FLOAT, [2, 3]), vi("grow", TensorProto.FLOAT, None)],
        [vi("cond2", TensorProto.BOOL, []), vi("acc2", TensorProto.FLOAT, [2, 3]), vi("grow2", TensorProto.FLOAT, None), vi("scan", TensorProto.FLOAT, [2, 3])],
    )  # fmt: skip
    nodes = [helper.make_node("Loop", ["n", "", "x", "g0"], ["acc_out", "grow_out", "scans"], name="counted", body=body)]
    inputs = [vi("x", TensorProto.FLOAT, [2, 3]), vi("n", TensorProto.INT64, [])]
    outputs = [vi("acc_out", TensorProto.FLOAT, [2, 3]), vi("grow_out", TensorProto.FLOAT, None), vi("scans", TensorProto.FLOAT, None)]
    return model_of(nodes, inputs, outputs, [numpy_helper.from_array(np.zeros([1], np.float32), "g0")])


@pytest.mark.parametrize("n", [0, 1, 4])
def test_loop_with_a_run_time_trip_count(n):
    model = counted_loop_model()
    imported = import_onnx(model)
    (loop,) = [o for o in imported.func.body.block.ops if isinstance(o, Loop)]
    assert [str(t) for t in loop.result_types] == ["tensor<2x3xf32>", "tensor<?xf32>", "tensor<?x2x3xf32>"]
    check(model, {"x": rand(2, 3, seed=2), "n": np.array(n, np.int64)}, Loop)


def test_while_loop_with_a_condition_computed_in_the_body():
    check(loop_model(30, condition="data"), {"x": np.abs(rand(2, 3, seed=1)) + 1}, Loop)


def test_loop_longer_than_the_unroll_limit_stays_a_loop():
    check(loop_model(300), {"x": rand(2, 3, seed=1)}, Loop)  # static: 300 iterations known


@pytest.mark.parametrize("cond", [True, False])
def test_if_with_static_branches_inside_a_compiled_model(cond):
    """Both branches 2x3: no dynamic dim, so the model compiles as one program with the If as
    a host step between compiled ops."""
    then = helper.make_graph([helper.make_node("Mul", ["h", "h"], ["t"])], "then", [], [vi("t", TensorProto.FLOAT, [2, 3])])
    other = helper.make_graph([helper.make_node("Sigmoid", ["h"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, [2, 3])])
    nodes = [
        helper.make_node("Relu", ["x"], ["h"]),
        helper.make_node("If", ["c"], ["y0"], then_branch=then, else_branch=other),
        helper.make_node("Tanh", ["y0"], ["y"]),
    ]
    model = model_of(nodes, [vi("x", TensorProto.FLOAT, [2, 3]), vi("c", TensorProto.BOOL, [])], [vi("y", TensorProto.FLOAT, [2, 3])])
    check(model, {"x": rand(2, 3, seed=4), "c": np.array(cond)}, If)


def test_if_nested_in_a_loop():
    """Each iteration: acc = If(i is even) then acc + x else acc * 0.5 (x outer to both)."""
    then = helper.make_graph([helper.make_node("Add", ["acc", "x"], ["t"])], "then", [], [vi("t", TensorProto.FLOAT, [2, 3])])
    other = helper.make_graph([helper.make_node("Mul", ["acc", "half"], ["e"])], "else", [], [vi("e", TensorProto.FLOAT, [2, 3])], [numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    body = helper.make_graph(
        [
            helper.make_node("Mod", ["i", "two"], ["r"]),
            helper.make_node("Equal", ["r", "zero"], ["even"]),
            helper.make_node("If", ["even"], ["acc2"], then_branch=then, else_branch=other),
            helper.make_node("Identity", ["cond"], ["cond2"]),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("acc", TensorProto.FLOAT, [2, 3])],
        [vi("cond2", TensorProto.BOOL, []), vi("acc2", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(np.array(2, np.int64), "two"), numpy_helper.from_array(np.array(0, np.int64), "zero")],
    )  # fmt: skip
    nodes = [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)]
    model = model_of(nodes, [vi("x", TensorProto.FLOAT, [2, 3]), vi("n", TensorProto.INT64, [])], [vi("y", TensorProto.FLOAT, [2, 3])])
    check(model, {"x": rand(2, 3, seed=3), "n": np.array(5, np.int64)}, Loop)


def test_loop_without_trip_count_or_condition_is_refused():
    model = counted_loop_model()
    model.graph.node[0].input[0] = ""
    with pytest.raises(IrforgeError, match="without a trip count and without a condition") as info:
        import_onnx(model)
    assert info.value.code == "E192" and "ONNX node 'counted'" in str(info.value)


def test_if_whose_branches_differ_in_rank_is_refused():
    then = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", TensorProto.FLOAT, None)])
    other = helper.make_graph([helper.make_node("ReduceMax", ["x"], ["e"], keepdims=0)], "else", [], [vi("e", TensorProto.FLOAT, None)])
    model = model_of([helper.make_node("If", ["c"], ["y"], name="odd", then_branch=then, else_branch=other)], [vi("x", TensorProto.FLOAT, [2, 3]), vi("c", TensorProto.BOOL, [])], [vi("y", TensorProto.FLOAT, None)])
    with pytest.raises(IrforgeError, match="rank and element type must agree") as info:
        import_onnx(model)
    assert info.value.code == "E191" and "ONNX node 'odd'" in str(info.value)


def slice_rows_loop():  # type: ignore[no-untyped-def]
    """A Loop summing rows x[i:i+1] (Slice at the iteration number), trip count an input."""
    body = helper.make_graph(
        [
            helper.make_node("Unsqueeze", ["i", "axes"], ["start"]),
            helper.make_node("Add", ["start", "one"], ["end"]),
            helper.make_node("Slice", ["x", "start", "end"], ["row"]),
            helper.make_node("Add", ["acc", "row"], ["acc2"]),
            helper.make_node("Identity", ["cond"], ["cond2"]),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("acc", TensorProto.FLOAT, [1, 3])],
        [vi("cond2", TensorProto.BOOL, []), vi("acc2", TensorProto.FLOAT, [1, 3])],
        [numpy_helper.from_array(np.array([0], np.int64), "axes"), numpy_helper.from_array(np.array([1], np.int64), "one")],
    )  # fmt: skip
    nodes = [helper.make_node("Loop", ["n", "", "a0"], ["y"], name="rows", body=body)]
    return model_of(nodes, [vi("x", TensorProto.FLOAT, [2, 3]), vi("n", TensorProto.INT64, [])], [vi("y", TensorProto.FLOAT, [1, 3])], [numpy_helper.from_array(np.zeros([1, 3], np.float32), "a0")])


def test_loop_slicing_at_the_iteration_number_runs_as_a_region():
    """Slice's starts at the iteration number are nn.slice_to in the body (run-time bounds)."""
    model = slice_rows_loop()
    imported = import_onnx(model)
    assert "nn.loop" in [op.name for op in imported.func.body.block.ops]
    feeds = {"x": rand(2, 3, seed=6), "n": np.array(2, np.int64)}
    np.testing.assert_allclose(run(imported, feeds)["y"], ort_session_run(model, feeds)[0], rtol=1e-6)
    model.graph.initializer.append(numpy_helper.from_array(np.array(2, np.int64), "n"))
    del model.graph.input[1]
    feeds = {"x": rand(2, 3, seed=6)}
    np.testing.assert_allclose(run(import_onnx(model), feeds)["y"], ort_session_run(model, feeds)[0], rtol=1e-6)


def test_loop_whose_body_needs_a_per_iteration_constant_names_the_trip_count():
    """Trilu's k must be known at conversion: at the iteration number only when unrolled."""
    body = helper.make_graph(
        [
            helper.make_node("Trilu", ["x", "i"], ["band"], upper=1),
            helper.make_node("Add", ["acc", "band"], ["acc2"]),
            helper.make_node("Identity", ["cond"], ["cond2"]),
        ],
        "body",
        [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("acc", TensorProto.FLOAT, [2, 3])],
        [vi("cond2", TensorProto.BOOL, []), vi("acc2", TensorProto.FLOAT, [2, 3])],
    )  # fmt: skip
    nodes = [helper.make_node("Loop", ["n", "", "a0"], ["y"], name="rows", body=body)]
    model = model_of(nodes, [vi("x", TensorProto.FLOAT, [2, 3]), vi("n", TensorProto.INT64, [])], [vi("y", TensorProto.FLOAT, [2, 3])], [numpy_helper.from_array(np.zeros([2, 3], np.float32), "a0")])
    model.opset_import[0].version = 14  # Trilu
    with pytest.raises(IrforgeError, match="this Loop must be unrolled") as info:
        import_onnx(model)
    assert info.value.code == "E193" and info.value.tensor == "n"  # type: ignore[attr-defined]
    model.graph.initializer.append(numpy_helper.from_array(np.array(2, np.int64), "n"))
    del model.graph.input[1]
    feeds = {"x": rand(2, 3, seed=6)}
    np.testing.assert_allclose(run(import_onnx(model), feeds)["y"], ort_session_run(model, feeds)[0], rtol=1e-6)
