"""ONNX sequences and optionals resolved at import (frontends/onnx/sequences.py): small
onnx.helper models of the shapes TorchScript exports write (a list appended to in a counted
loop, torch.cat / torch.stack of a list, torch.split then an index, an Optional argument)
against onnxruntime on ref and cpu, and through the real OpenVINO runtime on the written IR;
structures known only at run time are one-line errors."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError, NotConstantError
from irforge.frontends.onnx.importer import import_onnx
from tests.backends.ir_xml_support import run_openvino
from tests.helpers import ort_session_run, rand

OPSET = [helper.make_opsetid("", 18)]


def tensor(name: str, shape: list, elem: int = TensorProto.FLOAT) -> onnx.ValueInfoProto:  # type: ignore[type-arg]
    return helper.make_tensor_value_info(name, elem, shape)


def const(name: str, value: object, dtype: type = np.int64) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(value, dtype), name)


def appending_loop(trip: int | None = 3, start_with_y: bool = False) -> onnx.ModelProto:
    """out = stack([x * i + y for i in range(trip)], dim=1) and cat(..., dim=0): a Loop whose
    body appends to a sequence (SequenceInsert) and two ConcatFromSequence."""
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["i_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["x", "i_f"], ["xi"]),
            helper.make_node("Add", ["xi", "y"], ["item"]),
            helper.make_node("SequenceInsert", ["seq_in", "item"], ["seq_out"]),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "body",
        [tensor("i", [], TensorProto.INT64), tensor("cond_in", [], TensorProto.BOOL), helper.make_tensor_sequence_value_info("seq_in", TensorProto.FLOAT, None)],
        [tensor("cond_out", [], TensorProto.BOOL), helper.make_tensor_sequence_value_info("seq_out", TensorProto.FLOAT, None)],
    )
    inputs, inits = [tensor("x", [2, 3]), tensor("y", [2, 3])], [const("yes", True, np.bool_)]
    if trip is None:
        inputs.append(tensor("n", [], TensorProto.INT64))
    else:
        inits.append(const("n", trip))
    graph = helper.make_graph(
        [
            helper.make_node("SequenceConstruct", ["y"], ["empty"]) if start_with_y else helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
            helper.make_node("Loop", ["n", "yes", "empty"], ["items"], name="append_loop", body=body),
            helper.make_node("ConcatFromSequence", ["items"], ["stacked"], axis=1, new_axis=1),
            helper.make_node("ConcatFromSequence", ["items"], ["joined"], axis=0),
            helper.make_node("SequenceAt", ["items", "minus_two"], ["second_last"]),
        ],
        "appending", inputs, [tensor("stacked", None), tensor("joined", None), tensor("second_last", None)], [*inits, const("minus_two", -2)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=OPSET)


def split_and_index() -> onnx.ModelProto:
    """parts = x.split(3, dim=1) (7 columns: 3, 3, 1); y = cat([parts[-1], parts[0]] with
    parts[1] erased and x[:, :2] inserted at 1); n = len(parts); z = stack(unbind(x, 0), -1)."""
    graph = helper.make_graph(
        [
            helper.make_node("SplitToSequence", ["x", "three"], ["parts"], axis=1),
            helper.make_node("SequenceLength", ["parts"], ["n"]),
            helper.make_node("SequenceAt", ["parts", "minus_one"], ["last"]),
            helper.make_node("SequenceErase", ["parts", "one"], ["erased"]),
            helper.make_node("Slice", ["x", "zero1", "two1", "one1"], ["head"]),
            helper.make_node("SequenceInsert", ["erased", "head", "one"], ["inserted"]),
            helper.make_node("SequenceInsert", ["inserted", "last", "zero"], ["front"]),
            helper.make_node("ConcatFromSequence", ["front"], ["y"], axis=-1),
            helper.make_node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
            helper.make_node("ConcatFromSequence", ["rows"], ["z"], axis=-1, new_axis=1),
        ],
        "split",
        [tensor("x", [2, 7])],
        [tensor("y", None), tensor("n", [], TensorProto.INT64), tensor("z", None)],
        [const("three", 3), const("minus_one", -1), const("one", 1), const("zero", 0), const("zero1", [0]), const("two1", [2]), const("one1", [1])],
    )
    return helper.make_model(graph, opset_imports=OPSET)


def optional_argument(present: bool) -> onnx.ModelProto:
    """def f(x, bias: Optional[Tensor]): return x + bias if bias is not None else x * 2"""
    then = helper.make_graph(
        [helper.make_node("OptionalGetElement", ["bias_opt"], ["b"]), helper.make_node("Add", ["x", "b"], ["then_y"])],
        "then", [], [tensor("then_y", [2, 3])],
    )  # fmt: skip
    other = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["else_y"])], "else", [], [tensor("else_y", [2, 3])], [const("two", 2.0, np.float32)])
    make_optional = (
        helper.make_node("Optional", ["bias"], ["bias_opt"])
        if present
        else helper.make_node("Optional", [], ["bias_opt"], type=helper.make_tensor_type_proto(TensorProto.FLOAT, [2, 3]))
    )
    graph = helper.make_graph(
        [
            make_optional,
            helper.make_node("OptionalHasElement", ["bias_opt"], ["given"]),
            helper.make_node("If", ["given"], ["y"], then_branch=then, else_branch=other),
        ],
        "optional", [tensor("x", [2, 3]), tensor("bias", [2, 3])], [tensor("y", [2, 3])],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=OPSET)


MODELS = {
    "appending-loop": (appending_loop, {"x": rand(2, 3, seed=1), "y": rand(2, 3, seed=2)}),
    "split-and-index": (split_and_index, {"x": rand(2, 7, seed=3)}),
    "optional-present": (lambda: optional_argument(True), {"x": rand(2, 3, seed=4), "bias": rand(2, 3, seed=5)}),
    "optional-absent": (lambda: optional_argument(False), {"x": rand(2, 3, seed=4), "bias": rand(2, 3, seed=5)}),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_matches_onnxruntime_on_ref_cpu_and_openvino(name, tmp_path):  # type: ignore[no-untyped-def]
    make, feeds = MODELS[name]
    model = make()
    want = ort_session_run(model, feeds)
    names = [o.name for o in model.graph.output]
    imported = import_onnx(model)
    got = run(imported, feeds)
    compiled = compile_model(imported, threads=1, cache_dir=tmp_path / "cache")
    try:
        on_cpu = compiled(feeds)
    finally:
        compiled.close()
    xml, _ = write_ir_xml(imported, tmp_path / "m.xml")
    on_openvino = run_openvino(xml, feeds)
    for key, expected in zip(names, want):
        for what, outputs in (("ref", got), ("cpu", on_cpu), ("OpenVINO", on_openvino)):
            assert outputs[key].shape == expected.shape, (what, key)
            np.testing.assert_allclose(outputs[key], expected, rtol=1e-5, atol=1e-6, err_msg=f"{what} {key}")


def test_the_loop_unrolls_into_plain_ops():
    from irforge.dialects.nn.control_flow import Loop

    ops = list(import_onnx(appending_loop()).func.body.block.ops)
    assert not any(isinstance(op, Loop) for op in ops)


def test_a_sequence_output_becomes_one_output_per_element():
    graph = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "two"], ["parts"], axis=1)],
        "out", [tensor("x", [2, 5])], [helper.make_tensor_sequence_value_info("parts", TensorProto.FLOAT, None)], [const("two", 2)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=OPSET)
    x = rand(2, 5, seed=6)
    (want,) = ort_session_run(model, {"x": x})
    got = run(import_onnx(model), {"x": x})
    assert list(got) == ["parts.0", "parts.1", "parts.2"]
    for array, expected in zip(got.values(), want):
        np.testing.assert_array_equal(array, expected)


@pytest.mark.parametrize(("n", "start_with_y"), [(2, False), (4, False), (1, True), (3, True)])
def test_a_run_time_appending_loop_becomes_a_loop_with_a_scan_output(n, start_with_y, tmp_path):
    """sequence_scan.py: the appended item is the loop's scan output; ConcatFromSequence a
    Permute (new_axis=1, axis 1) and a Reshape (axis 0)."""
    from irforge.dialects.nn.control_flow import Loop

    model = appending_loop(trip=None, start_with_y=start_with_y)
    feeds = {"x": rand(2, 3, seed=1), "y": rand(2, 3, seed=2), "n": np.array(n, np.int64)}
    want = ort_session_run(model, feeds)
    imported = import_onnx(model)
    assert sum(isinstance(op, Loop) for op in imported.func.body.block.ops) == 1
    xml, _ = write_ir_xml(imported, tmp_path / "m.xml")
    compiled = compile_model(imported, threads=1, cache_dir=tmp_path / "cache")
    try:
        on_cpu = compiled(feeds)
    finally:
        compiled.close()
    for what, got in (("ref", run(imported, feeds)), ("cpu", on_cpu), ("OpenVINO", run_openvino(xml, feeds))):
        for key, expected in zip(("stacked", "joined", "second_last"), want):
            np.testing.assert_allclose(got[key], expected, rtol=1e-6, atol=1e-6, err_msg=f"{what} {key}")


@pytest.mark.parametrize("at", [-3, 1])
def test_a_run_time_position_gathers_from_the_stacked_elements(at, tmp_path):
    graph = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "two"], ["s"], axis=1), helper.make_node("SequenceAt", ["s", "at"], ["y"])],
        "at", [tensor("x", [2, 6]), tensor("at", [], TensorProto.INT64)], [tensor("y", None)], [const("two", 2)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=OPSET)
    feeds = {"x": rand(2, 6, seed=8), "at": np.array(at, np.int64)}
    (want,) = ort_session_run(model, feeds)
    imported = import_onnx(model)
    xml, _ = write_ir_xml(imported, tmp_path / "m.xml")
    for what, got in (("ref", run(imported, feeds)), ("OpenVINO", run_openvino(xml, feeds))):
        np.testing.assert_array_equal(got["y"], want, err_msg=what)


def test_a_run_time_loop_inserting_at_a_position_names_the_trip_count():
    model = appending_loop(trip=None)
    body = model.graph.node[1].attribute[0].g
    body.initializer.append(const("front", 0))
    body.node[3].input.append("front")  # SequenceInsert(seq, item, 0): not an append
    with pytest.raises(NotConstantError) as caught:
        import_onnx(model)
    assert caught.value.code == "E195" and caught.value.tensor == "n" and "append_loop" in str(caught.value)


def test_a_position_out_of_range_is_one_line():
    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x", "x"], ["s"]), helper.make_node("SequenceAt", ["s", "five"], ["y"])],
        "at", [tensor("x", [2])], [tensor("y", [2])], [const("five", 5)],
    )  # fmt: skip
    with pytest.raises(IrforgeError) as caught:
        import_onnx(helper.make_model(graph, opset_imports=OPSET))
    assert caught.value.code == "E188" and "5 is out of range for a sequence of 2" in caught.value.what


def test_a_sequence_model_input_is_refused():
    graph = helper.make_graph(
        [helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0)],
        "in", [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, [2])], [tensor("y", None)],
    )  # fmt: skip
    with pytest.raises(IrforgeError) as caught:
        import_onnx(helper.make_model(graph, opset_imports=OPSET))
    assert caught.value.code == "E187" and "'s' is a sequence" in caught.value.what


def test_splitting_a_dynamic_axis_into_a_sequence_is_refused():
    graph = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0), helper.make_node("SequenceLength", ["s"], ["n"])],
        "dyn", [tensor("x", ["N", 3])], [tensor("n", [], TensorProto.INT64)],
    )  # fmt: skip
    with pytest.raises(IrforgeError) as caught:
        import_onnx(helper.make_model(graph, opset_imports=OPSET))
    assert caught.value.code == "E195" and "dynamic axis 0" in caught.value.what


def if_building_lists(else_length: int = 2) -> onnx.ModelProto:
    """items = [x * 2, x] if cond else [x + 1, x - 1] (or [x + 1]); cat(items)."""
    then = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["a"]), helper.make_node("SequenceConstruct", ["a", "x"], ["then_items"])],
        "then", [], [helper.make_tensor_sequence_value_info("then_items", TensorProto.FLOAT, None)], [const("two", 2.0, np.float32)],
    )  # fmt: skip
    made = ["b", "c"][:else_length]
    other = helper.make_graph(
        [helper.make_node("Add", ["x", "one_f"], ["b"]), helper.make_node("Sub", ["x", "one_f"], ["c"]), helper.make_node("SequenceConstruct", made, ["else_items"])],
        "else", [], [helper.make_tensor_sequence_value_info("else_items", TensorProto.FLOAT, None)], [const("one_f", 1.0, np.float32)],
    )  # fmt: skip
    graph = helper.make_graph(
        [
            helper.make_node("If", ["cond"], ["items"], name="choose", then_branch=then, else_branch=other),
            helper.make_node("ConcatFromSequence", ["items"], ["y"], axis=0),
        ],
        "if_lists", [tensor("x", [2, 3]), tensor("cond", [], TensorProto.BOOL)], [tensor("y", None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=OPSET)


@pytest.mark.parametrize("cond", [True, False])
def test_a_run_time_if_giving_lists_of_one_length_is_one_if_per_element(cond, tmp_path):
    from irforge.dialects.nn.control_flow import If

    model = if_building_lists()
    feeds = {"x": rand(2, 3, seed=9), "cond": np.array(cond)}
    (want,) = ort_session_run(model, feeds)
    imported = import_onnx(model)
    (op,) = [op for op in imported.func.body.block.ops if isinstance(op, If)]
    assert len(op.results) == 2
    xml, _ = write_ir_xml(imported, tmp_path / "m.xml")
    for what, got in (("ref", run(imported, feeds)), ("OpenVINO", run_openvino(xml, feeds))):
        np.testing.assert_allclose(got["y"], want, rtol=1e-6, err_msg=what)


def test_a_run_time_if_giving_lists_of_different_lengths_names_the_condition():
    with pytest.raises(NotConstantError) as caught:
        import_onnx(if_building_lists(else_length=1))
    assert caught.value.code == "E195" and caught.value.tensor == "cond" and "('sequence', 2)" in caught.value.what


def test_a_sequence_read_as_a_tensor_names_the_node():
    graph = helper.make_graph(
        [helper.make_node("SequenceConstruct", ["x"], ["s"]), helper.make_node("Relu", ["s"], ["y"], name="act")],
        "kind", [tensor("x", [2])], [tensor("y", None)],
    )  # fmt: skip
    with pytest.raises(IrforgeError) as caught:
        import_onnx(helper.make_model(graph, opset_imports=OPSET))
    assert caught.value.code == "E188" and "'act'" in str(caught.value) and "'s' is a sequence" in caught.value.what


def test_a_while_loop_appending_on_a_data_condition_becomes_a_loop_with_a_scan_output(tmp_path):
    """Trip count 5 but the condition (sum(item) < 3) is data: the unrolling gives up, the
    scan lowering takes it."""
    from irforge.dialects.nn.control_flow import Loop

    model = appending_loop(trip=5)
    body = model.graph.node[1].attribute[0].g
    body.node[4].CopyFrom(helper.make_node("ReduceSum", ["item"], ["total"], keepdims=0))
    body.node.append(helper.make_node("Less", ["total", "three"], ["cond_out"]))
    body.initializer.append(const("three", 3.0, np.float32))
    imported = import_onnx(model)
    assert sum(isinstance(op, Loop) for op in imported.func.body.block.ops) == 1
    xml, _ = write_ir_xml(imported, tmp_path / "m.xml")
    for seed in (0, 1):
        feeds = {"x": np.abs(rand(2, 3, seed=seed)), "y": rand(2, 3, seed=seed + 5) * 0.1}
        want = ort_session_run(model, feeds)
        for what, got in (("ref", run(imported, feeds)), ("OpenVINO", run_openvino(xml, feeds))):
            for key, expected in zip(("stacked", "joined", "second_last"), want):
                np.testing.assert_allclose(got[key], expected, rtol=1e-6, atol=1e-6, err_msg=f"{what} {key}")


def test_a_sequence_input_given_as_its_elements(tmp_path):
    """`--input s.0,s.1 --input_shape [2,3],[1,3]`: one tensor input per element."""
    import argparse

    from irforge.frontends.onnx.frontend import import_from_args

    graph = helper.make_graph(
        [helper.make_node("SequenceAt", ["s", "minus_one"], ["last"]), helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=0), helper.make_node("Add", ["y", "y"], ["z"])],
        "seq_in", [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)], [tensor("z", None), tensor("last", None)], [const("minus_one", -1)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=OPSET)
    path = tmp_path / "seq_in.onnx"
    onnx.save(model, str(path))
    elements = [rand(2, 3, seed=10), rand(1, 3, seed=11)]
    want = ort_session_run(model, {"s": elements})
    args = argparse.Namespace(input_model=str(path), input=["s.0", "s.1"], input_shape=[[2, 3], [1, 3]], batch=None)
    imported = import_from_args(args)
    feeds = {"s.0": elements[0], "s.1": elements[1]}
    xml, _ = write_ir_xml(imported, tmp_path / "m.xml")
    for what, got in (("ref", run(imported, feeds)), ("OpenVINO", run_openvino(xml, feeds))):
        for key, expected in zip(("z", "last"), want):
            np.testing.assert_array_equal(got[key], expected, err_msg=f"{what} {key}")
