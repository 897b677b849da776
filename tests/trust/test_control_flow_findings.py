"""Findings of the control-flow fuzz campaign (`irforge/testing/fuzz_control_flow.py`), each
re-checked by name: a loop that would run 10**9 iterations or never stops is refused with E879
(before its first iteration when it is a plain counted loop), on ref and cpu; the limit is
`ir-run --max-iterations`; constant folding leaves a long loop to run time instead of running
it at conversion."""

from __future__ import annotations

import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.reference import run
from irforge.backends.reference.kernels.control_flow import iteration_limit
from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx
from irforge.testing import fuzz_control_flow
from irforge.tools import ir_convert, ir_run


def load(data: bytes) -> onnx.ModelProto:
    model = onnx.ModelProto()
    model.ParseFromString(data)
    return model


def endless_while() -> onnx.ModelProto:
    """The while seed with its condition passed through unchanged: it never turns false."""
    model = load(fuzz_control_flow.onnx_while())
    body = model.graph.node[0].attribute[0].g
    (less,) = [n for n in body.node if n.op_type == "Less"]
    less.op_type = "Identity"
    del less.input[:]
    less.input.append("cond")
    return model


def exit_of(main, argv, capsys) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code, capsys.readouterr().err.strip()


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_a_trip_count_of_a_billion_is_refused_before_the_first_iteration(tmp_path, capsys, device):
    (tmp_path / "m.onnx").write_bytes(fuzz_control_flow.onnx_loop(nested=True))
    np.save(tmp_path / "n.npy", np.array(10**9, np.int64))
    started = time.perf_counter()
    code, err = exit_of(ir_run.main, [str(tmp_path / "m.onnx"), "--device", device, "--input", f"n={tmp_path / 'n.npy'}",
                                      "--output", str(tmp_path / "o.npz")], capsys)
    assert code == 2 and err.startswith("irforge: error[E879]: nn.loop 'counted' has a trip count of 1000000000"), err
    assert "--max-iterations" in err and len(err.splitlines()) == 1
    assert time.perf_counter() - started < 60 and not (tmp_path / "o.npz").exists()


def test_a_condition_that_never_turns_false_stops_at_the_limit():
    model = import_onnx(endless_while())
    with iteration_limit(50), pytest.raises(IrforgeError) as info:
        run(model, {"x": np.ones((2, 3), np.float32)})
    assert info.value.code == "E879" and "still running after 50 iterations" in info.value.what


def test_max_iterations_is_the_limit_and_zero_lifts_it(tmp_path, capsys):
    (tmp_path / "m.onnx").write_bytes(fuzz_control_flow.onnx_loop())
    np.save(tmp_path / "n.npy", np.array(30, np.int64))
    argv = [str(tmp_path / "m.onnx"), "--input", f"n={tmp_path / 'n.npy'}"]
    code, err = exit_of(ir_run.main, [*argv, "--max-iterations", "20"], capsys)
    assert code == 2 and "E879" in err and "over the limit of 20 iterations" in err
    ir_run.main([*argv, "--max-iterations", "0"])
    assert "scans: shape=[30, 2, 3]" in capsys.readouterr().out
    for bad in ("x", "-1", "1e3"):
        code, err = exit_of(ir_run.main, [*argv, "--max-iterations", bad], capsys)
        assert code == 2 and err.startswith(f"irforge: error[E878]: bad --max-iterations '{bad}'"), err


def test_constant_folding_leaves_an_endless_constant_loop_to_run_time(tmp_path, capsys):
    """All of the loop's inputs constant: folding would run it at conversion (forever before
    the budget, 100000 iterations with it); it stays a Loop in the IR instead."""
    model = endless_while()
    graph = model.graph
    graph.initializer.append(numpy_helper.from_array(np.ones((2, 3), np.float32), "x"))
    graph.node.append(helper.make_node("Add", ["y", "z"], ["out"]))
    del graph.input[:], graph.output[:]
    graph.input.append(helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3]))
    graph.output.append(helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3]))
    onnx.save_model(model, str(tmp_path / "m.onnx"))
    started = time.perf_counter()
    ir_convert.main(["-m", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out")])
    assert time.perf_counter() - started < 60
    captured = capsys.readouterr()
    assert "Warning" not in captured.err  # numpy's overflow warnings of the folding attempt
    assert 'type="Loop"' in (tmp_path / "out" / "m.xml").read_text()


def test_gemm_with_a_weight_of_rank_three_is_a_clean_error():
    model = load(fuzz_control_flow.onnx_attention())
    w = numpy_helper.from_array(np.ones((2, 8, 8), np.float32), "w")
    model.graph.initializer.append(w)
    model.graph.node.append(helper.make_node("Gemm", ["y", "w"], ["g"]))
    del model.graph.output[:]
    model.graph.output.append(helper.make_tensor_value_info("g", TensorProto.FLOAT, None))
    with pytest.raises(IrforgeError) as info:
        import_onnx(model)
    assert "input #1 has rank 3" in info.value.what and info.value.code


def tf_graph(data: bytes):  # type: ignore[no-untyped-def]
    from irforge.frontends.tf.schema import message_classes

    graph = message_classes()["GraphDef"]()
    graph.ParseFromString(data)
    return graph


def test_a_while_cond_returning_nothing_is_a_clean_error():
    from irforge.frontends.tf import import_tf

    graph = tf_graph(fuzz_control_flow.tf_while())
    (cond,) = [f for f in graph.library.function if f.signature.name == "cond_fn"]
    del cond.signature.output_arg[:]
    cond.ret.clear()
    with pytest.raises(IrforgeError) as info:
        import_tf(graph, outputs=["y"])
    assert "function 'cond_fn' returns 0 values, the loop needs 1" in info.value.what


def test_a_while_body_add_with_one_input_is_not_an_rnn_cell():
    """The RNN-cell matcher unpacked (a, b) of an AddV2 with one input (ValueError)."""
    from irforge.frontends.tf import import_tf

    graph = tf_graph(fuzz_control_flow.tf_while())
    (body,) = [f for f in graph.library.function if f.signature.name == "body_fn"]
    (add,) = [n for n in body.node_def if n.name == "next_i"]
    del add.input[1:]
    with pytest.raises(IrforgeError) as info:
        import_tf(graph, outputs=["y"])
    assert info.value.code in ("E363", "E041") and "next_i" in info.value.render()


def test_mlir_whose_declared_format_rejects_a_result_type_is_a_clean_error():
    """xDSL checks an op's types while parsing its custom format: VerifyException, not ParseError."""
    from irforge.model import parse_module

    text = ('builtin.module {\n  func.func @main(%0: tensor<2x6xf32>, %1: tensor<2xi64>) -> (tensor<?x?xf32>) {\n'
            '    %2 = nn.reshape_to %0, %1 {name = "r"} : (tensor<2x6xf32>, tensor<2xi64>) -> i32\n'
            '    func.return %2 : i32\n  }\n}\n')
    with pytest.raises(IrforgeError) as info:
        parse_module(text, source="m.mlir")
    assert info.value.code == "E695" and "invalid IR" in info.value.what


def test_a_counted_loop_read_from_ir_xml_is_refused_before_its_first_iteration(tmp_path, capsys):
    """OpenVINO IR's Loop body ends in a constant-true condition Result, not the condition
    parameter: still a plain counted loop (2**62 iterations ran for minutes, quadratically)."""
    (tmp_path / "m.onnx").write_bytes(fuzz_control_flow.onnx_loop())
    ir_convert.main(["-m", str(tmp_path / "m.onnx"), "-o", str(tmp_path)])
    np.save(tmp_path / "n.npy", np.array(2**62, np.int64))
    started = time.perf_counter()
    code, err = exit_of(ir_run.main, [str(tmp_path / "m.xml"), "--device", "cpu", "--input", f"n={tmp_path / 'n.npy'}"], capsys)
    assert code == 2 and "E879" in err and f"trip count of {2**62}" in err
    assert time.perf_counter() - started < 60


@pytest.mark.parametrize("begin, strides", [([0, 0, 0], [1, 1, 1]), ([0, 0], [1, 0]), ([0], [1, 1])])
def test_tf_strided_slice_past_the_rank_or_with_a_zero_stride_is_a_clean_error(begin, strides):
    from irforge.frontends.tf import import_tf
    from irforge.testing.tf_models import DualBuilder, tf_tensor

    b = DualBuilder()
    b.placeholder("x", [2, 3])
    for name, values in (("b", begin), ("e", [1] * len(strides)), ("s", strides)):
        b.tf_node("Const", [], name, value=tf_tensor(np.array(values, np.int32)), dtype=("type", 3))
    b.tf_node("StridedSlice", ["x", "b", "e", "s"], "y", T=("type", 1), Index=("type", 3))
    with pytest.raises(IrforgeError) as info:
        import_tf(b.graph, outputs=["y"])
    assert "StridedSlice" in info.value.render() and ("rank 2" in info.value.what or "strides" in info.value.what)


def quantized_with(edit) -> onnx.ModelProto:  # type: ignore[no-untyped-def]
    model = load(fuzz_control_flow.onnx_quantized())
    edit(model.graph)
    return model


def test_conv_integer_with_a_scalar_weight_is_a_clean_error():
    def edit(graph):  # type: ignore[no-untyped-def]
        (ci,) = [n for n in graph.node if n.op_type == "ConvInteger"]
        graph.initializer.append(numpy_helper.from_array(np.int8(3), "w0"))
        ci.input[1] = "w0"

    with pytest.raises(IrforgeError) as info:
        import_onnx(quantized_with(edit))
    assert "input #1 has rank 0" in info.value.what


@pytest.mark.parametrize("shape", [[], [7]])
def test_a_per_axis_zero_point_on_a_scalar_or_past_the_rank_is_e185(shape):
    """QLinearAdd's b (a scalar here) with a 3-value zero point: `axis % rank` divided by zero
    (a scalar) or wrapped silently onto another axis."""
    def edit(graph):  # type: ignore[no-untyped-def]
        for init in graph.initializer:
            if init.name == "b":
                init.CopyFrom(numpy_helper.from_array(np.zeros(shape, np.uint8), "b"))
            if init.name == "bz":
                init.CopyFrom(numpy_helper.from_array(np.array([120, 121, 122], np.uint8), "bz"))

    with pytest.raises(IrforgeError) as info:
        import_onnx(quantized_with(edit))
    assert info.value.code in ("E185", "E041", "E172") and "QLinearAdd" in info.value.render()


def in_body(text: str, old: str, new: str) -> str:
    at = text.index("<body>")
    return text[:at] + text[at:].replace(old, new, 1)


@pytest.mark.parametrize("edit, message", [
    (lambda t: in_body(t, '<data shape="2,3" element_type="f32" />', '<data shape="2,3" element_type="../x" />'), "element_type '../x'"),
    (lambda t: t.replace('internal_layer_id="0"', 'internal_layer_id="77"'), "names body layer 77, which is not a body Parameter"),
    (lambda t: t.replace('<edge from-layer="13" to-layer="1" />', '<edge from-layer="66" to-layer="1" />'), "Result"),
])  # fmt: skip
def test_ir_xml_loop_port_maps_and_back_edges_to_nowhere_are_e640(tmp_path, edit, message):
    from irforge.frontends.ir_xml import read_ir_xml

    (tmp_path / "m.onnx").write_bytes(fuzz_control_flow.onnx_loop())
    ir_convert.main(["-m", str(tmp_path / "m.onnx"), "-o", str(tmp_path)])
    xml = tmp_path / "m.xml"
    text = xml.read_text()
    edited = edit(text)
    assert edited != text
    xml.write_text(edited)
    with pytest.raises(IrforgeError) as info:
        read_ir_xml(xml)
    assert info.value.code == "E640" and message in info.value.what, info.value.what


def test_mlir_integer_array_of_a_huge_width_is_a_clean_error():
    from irforge.model import parse_module

    text = ('builtin.module {\n  func.func @main(%0: tensor<2x3xf32>) -> (tensor<2xf32>) {\n'
            '    %1 = nn.reduce %0 {operation = "max", axes = array<i99999999999999999999: 1>, keep_dims = false, name = "r"}'
            ' : (tensor<2x3xf32>) -> tensor<2xf32>\n    func.return %1 : tensor<2xf32>\n  }\n}\n')
    with pytest.raises(IrforgeError) as info:
        parse_module(text, source="m.mlir")
    assert info.value.code == "E695"


def test_if_on_an_empty_constant_condition_is_a_clean_error():
    model = load(fuzz_control_flow.onnx_if())
    model.graph.initializer.append(numpy_helper.from_array(np.zeros([0], np.bool_), "none"))
    (branch,) = [n for n in model.graph.node if n.op_type == "If"]
    branch.input[0] = "none"
    with pytest.raises(IrforgeError) as info:
        import_onnx(model)
    assert "the condition has 0 values" in info.value.what


def test_matmul_integer_with_a_zero_point_per_column_of_the_wrong_count_is_a_clean_error():
    def edit(graph):  # type: ignore[no-untyped-def]
        for init in graph.initializer:
            if init.name == "mwz":
                init.CopyFrom(numpy_helper.from_array(np.array([1, 2, 3], np.int8), "mwz"))

    with pytest.raises(IrforgeError) as info:
        import_onnx(quantized_with(edit))
    assert "zero point has 3 values" in info.value.what


@pytest.mark.parametrize("pads", [np.zeros((2, 4), np.int64), np.zeros(5, np.int64)])
def test_onnx_pad_with_pads_of_another_shape_or_count_is_a_clean_error(pads):
    """(a 2-D pads reached int() of a row: TypeError)"""
    graph = helper.make_graph([helper.make_node("Pad", ["x", "p"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(pads, "p")])
    with pytest.raises(IrforgeError) as info:
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    assert "Pad takes a begin and an end per axis" in info.value.what


def test_mlir_function_of_two_blocks_is_a_clean_error():
    """(a block after func.return verifies in xDSL; the interpreter asked for the one block)"""
    from irforge.model import parse_module

    text = ('builtin.module {\n  func.func @main(%0: tensor<2x3xf32>) -> (tensor<2x3xf32>) {\n'
            '    func.return %0 : tensor<2x3xf32>\n  ^bb0(%1: tensor<2x3xf32>):\n  }\n}\n')
    with pytest.raises(IrforgeError) as info:
        parse_module(text, source="m.mlir")
    assert info.value.code == "E695" and "has 2 blocks" in info.value.what
