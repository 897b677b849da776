"""ONNX CausalConvWithState (opset 27, `extractors/causal_conv.py`) on ref, cpu and OpenVINO
against ONNX's reference implementation (onnxruntime 1.32 has no opset-27 kernels: checked,
so the test switches to onnxruntime once it has them)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

B, C, L = 2, 3, 5


def model(k: int, activation: str, with_bias: bool, with_state: bool):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(k)
    inits = [numpy_helper.from_array(rng.standard_normal((C, 1, k)).astype(np.float32), "w")]
    if with_bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(C).astype(np.float32), "b"))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, C, L])]
    if with_state:
        inputs.append(helper.make_tensor_value_info("past", TensorProto.FLOAT, [B, C, k - 1]))
    names = ["x", "w", "b" if with_bias else "", "past" if with_state else ""]
    while not names[-1]:
        names.pop()
    node = helper.make_node("CausalConvWithState", names, ["y", "state"], activation=activation)
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "state")]
    return helper.make_model(helper.make_graph([node], "g", inputs, outputs, inits), opset_imports=[helper.make_opsetid("", 27)])


def expected(proto, feeds):  # type: ignore[no-untyped-def]
    try:
        return ort_session_run(proto, feeds)
    except Exception as e:  # noqa: BLE001
        assert "onnxruntime" in type(e).__module__, e
        return ReferenceEvaluator(proto).run(None, feeds)


FORMS = {"plain": (4, "none", False, False), "state_bias_silu": (4, "silu", True, True), "k1": (1, "swish", True, False), "k7_short": (7, "none", False, False)}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_causal_conv_matches_the_onnx_reference_on_ref_and_cpu(form):
    k, activation, with_bias, with_state = FORMS[form]
    proto = model(k, activation, with_bias, with_state)
    rng = np.random.default_rng(1)
    feeds = {"x": rng.standard_normal((B, C, L)).astype(np.float32)}
    if with_state:
        feeds["past"] = rng.standard_normal((B, C, k - 1)).astype(np.float32)
    want = expected(proto, feeds)
    model_ir = import_onnx(proto)
    for device, got in (("ref", run(model_ir, feeds)), ("cpu", compile_model(model_ir, threads=1)(feeds))):
        for name, w in zip(("y", "state"), want):
            assert got[name].shape == w.shape, (device, name, got[name].shape)
            np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-5, err_msg=f"{device} {name}")


def test_causal_conv_ir_runs_in_openvino(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import assert_close, run_openvino

    proto = model(4, "silu", True, True)
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((B, C, L)).astype(np.float32), "past": rng.standard_normal((B, C, 3)).astype(np.float32)}
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", feeds)
    for name, w in zip(("y", "state"), expected(proto, feeds)):
        assert_close(got[name], w, rtol=1e-5, what=name)


def test_unknown_activation_is_a_one_line_error():
    proto = model(3, "gelu", False, False)
    with pytest.raises(IrforgeError, match="activation 'gelu' is not one of"):
        import_onnx(proto)
