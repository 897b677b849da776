"""ONNX audio front-end ops (`extractors/audio_frontend.py`): Hann/Hamming/Blackman windows
(periodic and symmetric, output_datatype) and MelWeightMatrix fold to constants; STFT is
frames gathered from the signal times the window, then DFT. Against onnxruntime on ref and
cpu, and a log-mel front-end as Whisper exports carry it."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.helpers import ort_session_run


def _model(nodes, inputs, inits, out=TensorProto.FLOAT, opset=17):
    graph = helper.make_graph(nodes, "audio", inputs, [helper.make_tensor_value_info("y", out, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(proto, feeds, rtol=1e-4, atol=2e-5, cpu=True):
    """ref and cpu (cpu needs static shapes) against onnxruntime."""
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    for got in (run(model, feeds), *([compile_model(model)(feeds)] if cpu else [])):
        value = next(iter(got.values()))
        assert value.shape == want.shape and value.dtype == want.dtype
        np.testing.assert_allclose(value, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
@pytest.mark.parametrize("size,dtype", [(10, TensorProto.FLOAT), (7, TensorProto.DOUBLE)])
def test_window_matches_onnxruntime(op, periodic, size, dtype):
    # x + window: the window alone is a constant model output, x keeps the model's input
    node = helper.make_node(op, ["size"], ["w"], periodic=periodic, output_datatype=dtype)
    add = helper.make_node("Add", ["x", "w"], ["y"])
    proto = _model([node, add], [helper.make_tensor_value_info("x", dtype, [size])],
                   [numpy_helper.from_array(np.array(size, np.int64), "size")], out=dtype)
    np_dtype = np.float32 if dtype == TensorProto.FLOAT else np.float64
    _check(proto, {"x": np.linspace(-1, 1, size).astype(np_dtype)}, rtol=1e-6, atol=1e-7)


def _mel_inputs(bins, dft_length, rate, low, high):
    return [numpy_helper.from_array(np.array(v, t), n) for v, t, n in (
        (bins, np.int64, "bins"), (dft_length, np.int64, "n"), (rate, np.int64, "rate"),
        (low, np.float32, "low"), (high, np.float32, "high"))]


def test_mel_weight_matrix_matches_onnxruntime():
    mel = helper.make_node("MelWeightMatrix", ["bins", "n", "rate", "low", "high"], ["m"])
    matmul = helper.make_node("MatMul", ["x", "m"], ["y"])
    proto = _model([mel, matmul], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 201])],
                   _mel_inputs(16, 400, 16000, 0.0, 8000.0))
    _check(proto, {"x": np.random.default_rng(1).random((3, 201), np.float32)})


@pytest.mark.parametrize("shape,step,frame_length,window,onesided", [
    ([2, 64, 1], 8, 16, True, 1),
    ([1, 50, 1], 5, 12, False, 0),
    ([1, 40, 2], 7, 10, True, 0),
    ([1, 40, 2], 7, 10, True, None),  # ONNX's default onesided=1 on a complex signal: the first half of the full DFT
    ([2, 33, 1], 4, None, True, 1),  # frame_length from the window
])
def test_stft_matches_onnxruntime(shape, step, frame_length, window, onesided):
    _stft_case(shape, shape, step, frame_length, window, onesided)


def test_stft_with_a_dynamic_batch(tmp_path):
    """A batch unknown at conversion: ref and OpenVINO (the CPU backend needs static shapes)."""
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = _stft_case(["batch", 48, 1], [3, 48, 1], 6, 12, True, 1, cpu=False)
    (want,) = ort_session_run(proto, feeds)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = next(iter(run_openvino(tmp_path / "m.xml", feeds).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _stft_case(declared, shape, step, frame_length, window, onesided, cpu=True):
    size = frame_length or 10
    inits = [numpy_helper.from_array(np.array(step, np.int64), "step")]
    inputs = ["x", "step", "", ""]
    if window:
        inits.append(numpy_helper.from_array(np.hanning(size + 1)[:size].astype(np.float32), "window"))
        inputs[2] = "window"
    if frame_length:
        inits.append(numpy_helper.from_array(np.array(frame_length, np.int64), "frame_length"))
        inputs[3] = "frame_length"
    node = helper.make_node("STFT", inputs, ["y"], **({} if onesided is None else dict(onesided=onesided)))
    proto = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, declared)], inits)
    feeds = {"x": np.random.default_rng(2).normal(0, 1, shape).astype(np.float32)}
    _check(proto, feeds, rtol=1e-4, atol=1e-4, cpu=cpu)
    return proto, feeds


def log_mel_model():
    """HannWindow -> STFT -> |X|^2 -> MelWeightMatrix -> log, as exported feature extractors do."""
    n_fft, hop, bins = 64, 16, 8
    nodes = [
        helper.make_node("HannWindow", ["n"], ["window"]),
        helper.make_node("STFT", ["x", "hop", "window", "n"], ["spec"], onesided=1),
        helper.make_node("Mul", ["spec", "spec"], ["square"]),
        helper.make_node("ReduceSum", ["square", "last"], ["power"], keepdims=0),
        helper.make_node("MelWeightMatrix", ["bins", "n", "rate", "low", "high"], ["mel"]),
        helper.make_node("MatMul", ["power", "mel"], ["mel_power"]),
        helper.make_node("Add", ["mel_power", "eps"], ["floored"]),
        helper.make_node("Log", ["floored"], ["y"]),
    ]
    inits = _mel_inputs(bins, n_fft, 16000, 0.0, 8000.0)
    inits += [numpy_helper.from_array(np.array(v, t), n) for v, t, n in (
        (hop, np.int64, "hop"), ([-1], np.int64, "last"), (1e-6, np.float32, "eps"))]
    inits = [i for i in inits if i.name != "n"] + [numpy_helper.from_array(np.array(n_fft, np.int64), "n")]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 400, 1])], inits)


SIGNAL = np.random.default_rng(3).normal(0, 1, [1, 400, 1]).astype(np.float32)


def test_log_mel_front_end_like_whisper():
    _check(log_mel_model(), {"x": SIGNAL}, rtol=1e-3, atol=1e-3)


def test_log_mel_front_end_runs_in_openvino(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto = log_mel_model()
    (want,) = ort_session_run(proto, {"x": SIGNAL})
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    write_ir_xml(model, tmp_path / "m.xml")
    got = next(iter(run_openvino(tmp_path / "m.xml", {"x": SIGNAL}).values()))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3)


def test_window_size_at_run_time_names_the_input():
    node = helper.make_node("HannWindow", ["size"], ["y"])
    proto = _model([node], [helper.make_tensor_value_info("size", TensorProto.INT64, [])], [])
    with pytest.raises(IrforgeError) as err:
        import_onnx(proto)
    assert err.value.code == "E131" and "'size'" in err.value.what


def test_stft_window_and_frame_length_disagree():
    inits = [numpy_helper.from_array(np.array(4, np.int64), "step"), numpy_helper.from_array(np.ones(8, np.float32), "w"),
             numpy_helper.from_array(np.array(6, np.int64), "fl")]
    proto = _model([helper.make_node("STFT", ["x", "step", "w", "fl"], ["y"])],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 1])], inits)
    with pytest.raises(IrforgeError) as err:
        import_onnx(proto)
    assert err.value.code == "E132" and "frame_length" in err.value.what


def test_mel_filter_past_the_nyquist_bin_is_refused():
    # onnxruntime refuses it at run time as well ("out of range given the dft_length and the sample_rate")
    mel = helper.make_node("MelWeightMatrix", ["bins", "n", "rate", "low", "high"], ["y"])
    proto = _model([mel], [], _mel_inputs(10, 64, 16000, 0.0, 12000.0))
    with pytest.raises(IrforgeError) as err:
        import_onnx(proto)
    assert err.value.code == "E132" and "upper_edge_hertz" in err.value.what


def test_stft_with_a_run_time_window():
    """The window is a model input (not folded): the frames are multiplied at run time."""
    inits = [numpy_helper.from_array(np.array(4, np.int64), "step")]
    node = helper.make_node("STFT", ["x", "step", "w"], ["y"])
    proto = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 30, 1]),
                            helper.make_tensor_value_info("w", TensorProto.FLOAT, [8])], inits)
    rng = np.random.default_rng(4)
    _check(proto, {"x": rng.normal(0, 1, [2, 30, 1]).astype(np.float32), "w": rng.random(8, np.float32)}, rtol=1e-4, atol=1e-4)
