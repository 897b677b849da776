"""ONNX TensorScatter (the opset-24 KV-cache update, `extractors/kv_cache.py`) against
onnxruntime on ref and cpu, and OpenVINO on the written IR (ScatterElementsUpdate-12)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

CACHE, UPDATE = [2, 3, 8, 4], [2, 3, 3, 4]


def model(mode: str, axis: int = -2, with_indices: bool = True, cache=CACHE, update=UPDATE, starts=None):  # type: ignore[no-untyped-def]
    inputs = [helper.make_tensor_value_info("past", TensorProto.FLOAT, cache), helper.make_tensor_value_info("update", TensorProto.FLOAT, update)]
    inits = []
    if with_indices and starts is None:
        inputs.append(helper.make_tensor_value_info("starts", TensorProto.INT64, [cache[0]]))
    elif starts is not None:
        inits.append(numpy_helper.from_array(np.asarray(starts, np.int64), "starts"))
    names = ["past", "update", "starts"] if with_indices else ["past", "update"]
    node = helper.make_node("TensorScatter", names, ["y"], mode=mode, axis=axis)
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])


def feeds(with_indices: bool, starts: list[int], cache=CACHE, update=UPDATE) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    out = {"past": rng.standard_normal(cache).astype(np.float32), "update": rng.standard_normal(update).astype(np.float32)}
    if with_indices:
        out["starts"] = np.array(starts, np.int64)
    return out


FORMS = {
    "linear": ("linear", -2, True, [5, 1]),
    "linear_no_indices": ("linear", -2, False, []),
    "circular_wraps": ("circular", -2, True, [6, 7]),
    "circular_axis1": ("circular", 1, True, [2, 0]),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_tensor_scatter_matches_onnxruntime_on_ref_and_cpu(form):
    mode, axis, with_indices, starts = FORMS[form]
    update = list(UPDATE)
    if axis == 1:
        update = [2, 2, 8, 4]
    proto = model(mode, axis, with_indices, update=update)
    inputs = feeds(with_indices, starts, update=update)
    (want,) = ort_session_run(proto, inputs)
    model_ir = import_onnx(proto)
    for device, got in (("ref", run(model_ir, inputs)), ("cpu", compile_model(model_ir, threads=1)(inputs))):
        np.testing.assert_array_equal(got["y"], want, err_msg=device)


def test_tensor_scatter_ir_runs_in_openvino_like_onnxruntime(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import assert_close, run_openvino

    proto = model("circular")
    inputs = feeds(True, [6, 2])
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    (want,) = ort_session_run(proto, inputs)
    assert_close(run_openvino(tmp_path / "m.xml", inputs)["y"], want, rtol=0, what="TensorScatter")


def test_tensor_scatter_with_a_dynamic_batch_runs_on_ref():
    proto = model("linear", with_indices=False, cache=["b", 3, 8, 4], update=["b", 3, 3, 4])
    inputs = feeds(False, [])
    (want,) = ort_session_run(proto, inputs)
    np.testing.assert_array_equal(run(import_onnx(proto), inputs)["y"], want)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(mode="ring"), "mode 'ring' is not one of"),
        (dict(mode="linear", axis=0), "sequence axis must be a non-batch axis"),
        (dict(mode="linear", update=[2, 3, 9, 4]), "does not fit past_cache"),
        (dict(mode="linear", starts=[6, 0]), r"write_indices \[6, 0\] write 3 positions outside"),
    ],
)
def test_bad_tensor_scatter_forms_are_one_line_errors(kwargs, message):
    with pytest.raises(IrforgeError, match=message) as info:
        import_onnx(model(**kwargs))
    assert info.value.code == "E116"
