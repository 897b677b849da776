"""ONNX BitCast (`extractors/bitcast.py`) against onnxruntime: constant inputs fold, run-time
signed <-> unsigned and bool -> byte casts are exact compositions (ref, cpu, OpenVINO), and a
run-time float <-> integer cast is a coded refusal."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError, NotConstantError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

ONNX_TYPE = {np.dtype(t): helper.np_dtype_to_tensor_dtype(np.dtype(t)) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.bool_)}


def model(source: np.dtype, target: np.dtype, constant: np.ndarray | None = None, shape=(2, 4)):  # type: ignore[no-untyped-def]
    inputs = [] if constant is not None else [helper.make_tensor_value_info("x", ONNX_TYPE[source], list(shape))]
    inits = [numpy_helper.from_array(constant, "x")] if constant is not None else []
    graph = helper.make_graph([helper.make_node("BitCast", ["x"], ["y"], to=ONNX_TYPE[target])], "g", inputs,
                              [helper.make_tensor_value_info("y", ONNX_TYPE[target], None)], inits)  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])


def extremes(dtype: np.dtype) -> np.ndarray:
    """Both ends of the type, 0, +-1 and the values either side of the sign bit."""
    if dtype.kind == "b":
        return np.array([[True, False, True, True], [False, False, True, False]])
    info = np.iinfo(dtype)
    half = 1 << (dtype.itemsize * 8 - 1)
    values = [info.min, info.max, 0, 1, half - 1 if dtype.kind == "u" else -1, half if dtype.kind == "u" else -half + 1, 7, 2]
    return np.array(values, dtype).reshape(2, 4)


RUN_TIME = [(np.uint8, np.int8), (np.int8, np.uint8), (np.uint16, np.int16), (np.int16, np.uint16), (np.uint32, np.int32),
            (np.int32, np.uint32), (np.int64, np.uint64), (np.uint64, np.int64), (np.bool_, np.uint8), (np.int32, np.int32)]  # fmt: skip


@pytest.mark.parametrize(("source", "target"), RUN_TIME, ids=lambda t: np.dtype(t).name)
def test_run_time_integer_bitcast_matches_onnxruntime(source, target):
    source, target = np.dtype(source), np.dtype(target)
    proto = model(source, target)
    feeds = {"x": extremes(source)}
    want = feeds["x"].view(target)  # BitCast's definition; onnxruntime 1.32 has no bool kernel of it
    if source.kind != "b":
        np.testing.assert_array_equal(ort_session_run(proto, feeds)[0], want)
    model_ir = import_onnx(proto)
    got = run(model_ir, feeds)["y"]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("source", "target"), [(np.int8, np.uint8), (np.uint8, np.int8), (np.bool_, np.uint8)], ids=lambda t: np.dtype(t).name)
def test_run_time_integer_bitcast_on_cpu_and_openvino(tmp_path, source, target):
    """8-bit types: the IR writer has no u16 / u32 / u64 element type (E851), so wider
    unsigned casts run on ref only."""
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    source, target = np.dtype(source), np.dtype(target)
    proto = model(source, target)
    feeds = {"x": extremes(source)}
    want = feeds["x"].view(target)  # checked against onnxruntime above (but bool, which it lacks)
    model_ir = import_onnx(proto)
    np.testing.assert_array_equal(compile_model(model_ir, threads=1)(feeds)["y"], want, err_msg="cpu")
    write_ir_xml(model_ir, tmp_path / "m.xml")
    np.testing.assert_array_equal(run_openvino(tmp_path / "m.xml", feeds)["y"], want, err_msg="openvino")


def test_constant_float_bitcast_folds_like_onnxruntime():
    x = np.array([1.0, -0.0, np.inf, np.nan, 1e-40, -3.5], np.float32)
    proto = model(np.dtype(np.float32), np.dtype(np.int32), constant=x)
    (want,) = ort_session_run(proto, {})
    np.testing.assert_array_equal(run(import_onnx(proto), {})["y"], want)


def test_run_time_float_bitcast_is_refused_naming_the_input():
    with pytest.raises(NotConstantError, match="BitCast of a run-time float32 tensor to int32 has no exact form") as info:
        import_onnx(model(np.dtype(np.float32), np.dtype(np.int32)))
    assert info.value.code == "E118" and info.value.tensor == "x"


def test_bitcast_between_widths_is_refused():
    with pytest.raises(IrforgeError, match=r"int16 \(16 bits\) and int32 \(32 bits\) differ in width") as info:
        import_onnx(model(np.dtype(np.int16), np.dtype(np.int32)))
    assert info.value.code == "E119"
