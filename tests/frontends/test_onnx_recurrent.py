"""ONNX LSTM, GRU and RNN: every attribute through the importer into nn.*_sequence, compared
with onnxruntime on the reference interpreter, the CPU backend (host step) and OpenVINO
running the IR irforge writes (read back by irforge's IR reader too)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.ir_xml.importer import read_ir_xml
from irforge.frontends.onnx.importer import import_onnx
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import ort_session_run, rand

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def recurrent_model(op: str, *, n=2, t=5, i=3, h=4, layout=0, direction="forward", lengths=None, states=False, weights_as_inputs=False, **attrs):  # type: ignore[no-untyped-def]
    """A one-node model and its feeds: X (and the initial states, sequence lengths) as inputs,
    W, R, B initializers (or inputs)."""
    d = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x = rand(*((n, t, i) if layout else (t, n, i)), seed=1)
    arrays = {"W": rand(d, g * h, i, seed=2), "R": rand(d, g * h, h, seed=3), "B": rand(d, 2 * g * h, seed=4)}
    state_shape = (n, d, h) if layout else (d, n, h)
    feeds = {"X": x}
    names = ["X", "W", "R", "B", "", ""]
    if lengths is not None:
        feeds["sequence_lens"] = np.array(lengths, np.int32)
        names[4] = "sequence_lens"
    if states:
        feeds["initial_h"] = rand(*state_shape, seed=5)
        names[5] = "initial_h"
        if op == "LSTM":
            feeds["initial_c"] = rand(*state_shape, seed=6)
            names.append("initial_c")
    while not names[-1]:
        names.pop()
    outputs = ["Y", "Y_h", "Y_c"][: 3 if op == "LSTM" else 2]
    node = helper.make_node(op, names, outputs, hidden_size=h, direction=direction, layout=layout, **attrs)
    if weights_as_inputs:
        feeds.update(arrays)
        initializers = []
    else:
        initializers = [numpy_helper.from_array(v, k) for k, v in arrays.items()]
    inputs = [helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in feeds.items()]
    graph = helper.make_graph([node], "rnn", inputs, [helper.make_empty_tensor_value_info(o) for o in outputs], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), feeds


CASES = {
    "lstm": ("LSTM", {}),
    "lstm-layout1-bidirectional-states": ("LSTM", {"layout": 1, "direction": "bidirectional", "states": True}),
    "lstm-reverse-lengths-clip": ("LSTM", {"direction": "reverse", "lengths": [5, 3], "clip": 0.5}),
    "lstm-relu": ("LSTM", {"activations": ["Sigmoid", "Relu", "Relu"], "clip": 2.0}),
    "lstm-weights-as-inputs": ("LSTM", {"weights_as_inputs": True, "states": True}),
    "gru": ("GRU", {}),
    "gru-linear-before-reset-bidirectional": ("GRU", {"linear_before_reset": 1, "direction": "bidirectional", "lengths": [2, 5]}),
    "gru-layout1-states-reverse": ("GRU", {"layout": 1, "states": True, "direction": "reverse"}),
    "rnn": ("RNN", {}),
    "rnn-relu-bidirectional-lengths": ("RNN", {"activations": ["Relu", "Relu"], "direction": "bidirectional", "lengths": [4, 1], "states": True}),
}
REF_ONLY = {  # activations OpenVINO's cells lack (its CPU plugin refuses even hardsigmoid)
    "lstm-hardsigmoid": ("LSTM", {"activations": ["HardSigmoid", "Tanh", "Relu"], "activation_alpha": [0.3], "activation_beta": [0.4]}),
    "gru-onnx-only-activations": ("GRU", {"activations": ["LeakyRelu", "ScaledTanh"], "activation_alpha": [0.2, 0.7], "activation_beta": [1.5]}),
    "rnn-affine": ("RNN", {"activations": ["Affine"], "activation_alpha": [0.5], "activation_beta": [0.1]}),
    "rnn-elu-softsign-bidirectional": ("RNN", {"activations": ["Elu", "Elu"], "direction": "bidirectional"}),
    "lstm-thresholded-softplus-softsign": ("LSTM", {"activations": ["ThresholdedRelu", "Softplus", "Softsign"], "activation_alpha": [0.1]}),
}


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The node's outputs by name; onnxruntime has no layout 1, so a batch-first node runs as
    its layout-0 twin on transposed data."""
    node = model.graph.node[0]
    layout = next((a.i for a in node.attribute if a.name == "layout"), 0)
    if not layout:
        return dict(zip(["Y", "Y_h", "Y_c"], ort_session_run(model, feeds)))
    twin = onnx.ModelProto()
    twin.CopyFrom(model)
    next(a for a in twin.graph.node[0].attribute if a.name == "layout").i = 0
    swapped = {k: (v.transpose(1, 0, 2) if k in ("X", "initial_h", "initial_c") else v) for k, v in feeds.items()}
    del twin.graph.input[:]
    twin.graph.input.extend(helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for k, v in swapped.items())
    y, *states = ort_session_run(twin, swapped)
    return dict(zip(["Y", "Y_h", "Y_c"], [y.transpose(2, 0, 1, 3), *(s.transpose(1, 0, 2) for s in states)]))


def converted(case: tuple[str, dict]):  # type: ignore[no-untyped-def]
    op, kwargs = case
    model, feeds = recurrent_model(op, **kwargs)
    return import_onnx(model), feeds, onnxruntime_outputs(model, feeds)


def check(got: dict[str, np.ndarray], want: dict[str, np.ndarray], rtol: float = 1e-5) -> None:
    for name, expected in want.items():
        assert_close(got[name], expected, rtol=rtol, what=name)


@pytest.mark.parametrize("case", [*CASES, *REF_ONLY])
def test_reference_matches_onnxruntime(case):
    model, feeds, want = converted({**CASES, **REF_ONLY}[case])
    check(run(model, feeds), want)


@pytest.mark.parametrize("case", ["lstm-layout1-bidirectional-states", "gru-linear-before-reset-bidirectional", "rnn-relu-bidirectional-lengths"])
def test_cpu_backend_matches_onnxruntime(case, tmp_path):
    model, feeds, want = converted(CASES[case])
    compiled = compile_model(model, threads=2, cache_dir=tmp_path)
    try:
        check(compiled(feeds), want)
    finally:
        compiled.close()


@pytest.mark.parametrize("case", list(CASES))
def test_openvino_runs_the_ir_like_onnxruntime(case, tmp_path):
    model, feeds, want = converted(CASES[case])
    xml, _ = write_ir_xml(model, tmp_path / "m.xml")
    check(run_openvino(xml, feeds), want, rtol=1e-4)
    back = read_ir_xml(xml)
    check(run(back, feeds), want)
    again, _ = write_ir_xml(back, tmp_path / "again.xml")
    assert again.read_bytes() == xml.read_bytes()


def test_activation_openvino_lacks_is_refused_by_the_writer(tmp_path):
    model, _, _ = converted(REF_ONLY["rnn-affine"])
    with pytest.raises(IrforgeError, match="activation 'affine' of nn.rnn_sequence has no OpenVINO equivalent") as info:
        write_ir_xml(model, tmp_path / "m.xml")
    assert info.value.code == "E660"
    assert not (tmp_path / "m.xml").exists()


def node_with(op: str, extra_inputs: dict[str, np.ndarray], **attrs) -> onnx.ModelProto:  # type: ignore[no-untyped-def]
    model, _ = recurrent_model(op, **attrs)
    node = model.graph.node[0]
    for name, value in extra_inputs.items():
        while len(node.input) < 7:
            node.input.append("")
        node.input.append(name)
        model.graph.initializer.append(numpy_helper.from_array(value, name))
    return model


@pytest.mark.parametrize(
    "model, message, code",
    [
        (lambda: node_with("LSTM", {"P": rand(1, 12, seed=7)}), "peepholes \\(input P\\) are not supported", "E164"),
        (lambda: node_with("LSTM", {}, input_forget=1), "input_forget=1 is not supported", "E163"),
        (lambda: node_with("GRU", {}, direction="bidirectional", activations=["Sigmoid", "Tanh", "Sigmoid", "Relu"]), "different activations per direction", "E162"),
        (lambda: node_with("RNN", {}, activations=["Gelu"]), "activation 'Gelu' is not supported", "E160"),
        (lambda: node_with("RNN", {}, activations=["Tanh", "Tanh", "Tanh"]), "activations has 3 names, expected 1", "E161"),
    ],
    ids=["peepholes", "input-forget", "mixed-directions", "unknown-activation", "activation-count"],
)
def test_unsupported_forms_are_refused_naming_the_node(model, message, code):
    with pytest.raises(IrforgeError, match=message) as info:
        import_onnx(model())
    assert info.value.code == code and "ONNX node" in str(info.value)


def test_zero_peepholes_change_nothing_and_are_accepted():
    model = node_with("LSTM", {"P": np.zeros((1, 12), np.float32)})
    feeds = {"X": rand(5, 2, 3, seed=1)}
    check(run(import_onnx(model), feeds), onnxruntime_outputs(model, feeds))


def test_opencl_runs_it_through_the_fallback():
    from irforge.backends.opencl import compile_model as compile_opencl

    model, feeds, want = converted(CASES["gru-linear-before-reset-bidirectional"])
    compiled = compile_opencl(model)
    check(compiled(feeds), want)
    # the CPU backend would run the same reference kernel as a host step: hetero calls it directly
    assert [f.executor for f in compiled.fallbacks] == ["reference"] and "CPU-only op" in compiled.fallbacks[0].reason
