"""Keras LSTM / GRU / SimpleRNN loops in frozen TensorFlow graphs (TF1 frames and TF2 While)
imported as nn.*_sequence, against TensorFlow's own outputs saved next to the graphs
(`tests/frontends/tf_rnn/make_graphs.py` wrote both; CI has no TensorFlow), on the
reference interpreter, OpenVINO running the IR irforge writes, and the CPU backend."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import irforge
from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.ir_xml.importer import read_ir_xml
from irforge.frontends.tf import import_tf
from irforge.frontends.tf.loader import load_graph
from irforge.frontends.tf.schema import DT_FLOAT, DT_INT32, message_classes
from irforge.testing.tf_models import tf_tensor
from tests.backends.ir_xml_support import assert_close, run_openvino

DATA = Path(__file__).parent / "tf_rnn"
GRAPHS = {
    "lstm": {"nn.lstm_sequence": 1},  # TF1 frame, last output only
    "lstm_seq_back": {"nn.lstm_sequence": 1},  # return_sequences, go_backwards
    "lstm_while": {"nn.lstm_sequence": 1},  # TF2 While (lower_control_flow=False)
    "gru": {"nn.gru_sequence": 1},  # reset_after=True: linear_before_reset
    "gru_v1": {"nn.gru_sequence": 1},  # reset_after=False, go_backwards
    "rnn": {"nn.rnn_sequence": 1},
    "bidi_stack": {"nn.gru_sequence": 2, "nn.rnn_sequence": 1},  # Bidirectional GRU, then a relu SimpleRNN
    # a hand-written TF1-style LSTM: MatMul of concat([x, h]), gates i, j, f, o, forget_bias
    "concat_lstm_frame": {"nn.lstm_sequence": 1},
    "concat_lstm_while": {"nn.lstm_sequence": 1},
    "concat_gru_frame": {"nn.gru_sequence": 1},  # TF1's GRUCell: split(sigmoid(...)), concat([x, r * h])
}


def saved(name: str) -> tuple[np.ndarray, np.ndarray]:
    data = np.load(DATA / f"{name}.npz")
    return data["x"], data["want"]


@pytest.mark.parametrize("name", list(GRAPHS))
def test_keras_loop_becomes_one_sequence_op_and_matches_tensorflow(name):
    x, want = saved(name)
    model = import_tf(DATA / f"{name}.pb")
    ops = Counter(op.name for op in model.func.body.block.ops)
    assert {k: v for k, v in ops.items() if k.endswith("_sequence")} == GRAPHS[name]
    assert_close(next(iter(run(model, {"x": x}).values())), want, rtol=1e-5)


@pytest.mark.parametrize("name", ["lstm", "gru", "gru_v1", "bidi_stack", "concat_lstm_while"])
def test_converted_ir_runs_in_openvino_and_on_the_cpu_backend(name, tmp_path):
    x, want = saved(name)
    model = irforge.convert_model(DATA / f"{name}.pb")
    xml, _ = write_ir_xml(model, tmp_path / "m.xml")
    assert "TensorList" not in xml.read_text()
    assert_close(next(iter(run_openvino(xml, {"x": x}).values())), want, rtol=1e-5)
    compiled = compile_model(read_ir_xml(xml), threads=1, cache_dir=tmp_path)
    try:
        assert_close(next(iter(compiled({"x": x}).values())), want, rtol=1e-5)
    finally:
        compiled.close()


def body_node(graph, op: str):  # type: ignore[no-untyped-def]
    """The first node of type `op` in the graph or a function body."""
    nodes = [*graph.node, *(n for f in graph.library.function for n in f.node_def)]
    return next(n for n in nodes if n.op == op)


def test_a_loop_body_no_cell_has_is_refused_naming_the_loop_and_why():
    graph = load_graph(DATA / "lstm.pb")
    body_node(graph, "Sigmoid").op = "Softsign"
    with pytest.raises(IrforgeError) as info:
        import_tf(graph)
    assert info.value.code == "E363"
    assert "TF1 loop frame" in info.value.what and "not an RNN layer, its body has a Softsign node" in info.value.what
    assert "LSTMSequence" in info.value.fix and "unroll=True" in info.value.fix


def test_a_changed_lstm_update_is_not_taken_for_an_lstm():
    graph = load_graph(DATA / "lstm_while.pb")
    c_update = next(n for f in graph.library.function for n in f.node_def if n.op == "AddV2" and n.name.endswith("lstm_cell_1/add"))
    c_update.op = "Mul"  # c' = (f*c) * (i*g)
    with pytest.raises(IrforgeError) as info:
        import_tf(graph)
    assert "While 'n" in info.value.what and "do not compute an LSTM cell" in info.value.what


def counting_loop():  # type: ignore[no-untyped-def]
    """A TF2 While squaring v three times: a loop, but no RNN layer."""
    classes = message_classes()
    graph = classes["GraphDef"]()
    v = graph.node.add(name="v", op="Placeholder")
    v.attr["dtype"].type = DT_FLOAT
    v.attr["shape"].shape.dim.add(size=2)
    for name, value in (("zero", np.array(0, np.int32)), ("three", np.array(3, np.int32)), ("one", np.array(1, np.int32))):
        node = graph.node.add(name=name, op="Const")
        node.attr["value"].tensor.CopyFrom(tf_tensor(value))
        node.attr["dtype"].type = DT_INT32
    loop = graph.node.add(name="loop", op="While")
    loop.input.extend(["zero", "v"])
    loop.attr["body"].func.name, loop.attr["cond"].func.name = "body", "cond"
    graph.node.add(name="out", op="Identity").input.append("loop:1")
    body, cond = graph.library.function.add(), graph.library.function.add()
    for function, name in ((body, "body"), (cond, "cond")):
        function.signature.name = name
        function.signature.input_arg.add(name="i", type=DT_INT32)
        function.signature.input_arg.add(name="x", type=DT_FLOAT)
    one = body.node_def.add(name="one", op="Const")
    one.attr["value"].tensor.CopyFrom(tf_tensor(np.array(1, np.int32)))
    body.node_def.add(name="next_i", op="AddV2").input.extend(["i", "one:output:0"])
    body.node_def.add(name="square", op="Mul").input.extend(["x", "x"])
    for arg, ref in (("i_out", "next_i:z:0"), ("x_out", "square:z:0")):
        body.signature.output_arg.add(name=arg)
        body.ret[arg] = ref
    bound = cond.node_def.add(name="bound", op="Const")
    bound.attr["value"].tensor.CopyFrom(tf_tensor(np.array(3, np.int32)))
    cond.node_def.add(name="less", op="Less").input.extend(["i", "bound:output:0"])
    cond.signature.output_arg.add(name="go")
    cond.ret["go"] = "less:z:0"
    return graph


def test_a_loop_that_is_no_rnn_layer_becomes_a_loop():
    """(extractors/control_flow.py: its functions' ops all have extractors)"""
    v = np.array([1.5, -0.5], np.float32)
    np.testing.assert_allclose(run(import_tf(counting_loop()), {"v": v})["out"], v**8, rtol=1e-6)


def test_a_loop_that_is_no_rnn_layer_with_an_unknown_op_is_refused_with_what_fits():
    graph = counting_loop()
    graph.library.function[0].node_def[2].op = "Frobnicate"  # body's square
    with pytest.raises(IrforgeError) as info:
        import_tf(graph)
    assert info.value.code == "E363"
    assert "While 'loop' (body 'body'): not an RNN layer, its body has a Frobnicate node ('square')" in info.value.what
    assert "Keras LSTM, GRU" in info.value.fix
