"""ONNX LinearAttention (opset 27, `extractors/linear_attention.py`, unrolled over T) on ref,
cpu and OpenVINO against ONNX's reference implementation (onnxruntime 1.32 has no opset-27
kernels: checked, so the test switches to onnxruntime once it has them)."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.frontends.test_onnx_causal_conv import expected

B, T, HQ, HKV, DK, DV = 2, 3, 4, 2, 3, 2


def model(rule: str, decay_width: int | None, beta_width: int | None, with_state: bool, t: int = T):  # type: ignore[no-untyped-def]
    def vi(name: str, shape: list[int]):  # type: ignore[no-untyped-def]
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    inputs = [vi("q", [B, t, HQ * DK]), vi("k", [B, t, HKV * DK]), vi("v", [B, t, HKV * DV])]
    names = ["q", "k", "v", "", "", ""]
    if with_state:
        inputs.append(vi("past", [B, HKV, DK, DV]))
        names[3] = "past"
    if decay_width:
        inputs.append(vi("decay", [B, t, decay_width]))
        names[4] = "decay"
    if beta_width:
        inputs.append(vi("beta", [B, t, beta_width]))
        names[5] = "beta"
    while not names[-1]:
        names.pop()
    node = helper.make_node("LinearAttention", names, ["y", "state"], update_rule=rule, q_num_heads=HQ, kv_num_heads=HKV)
    graph = helper.make_graph([node], "g", inputs, [vi("y", None), vi("state", None)])  # type: ignore[arg-type]
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 27)])


def feeds(proto) -> dict[str, np.ndarray]:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(4)
    out = {}
    for vi in proto.graph.input:
        shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        x = rng.standard_normal(shape).astype(np.float32)
        out[vi.name] = {"decay": -0.1 * np.abs(x), "beta": 1 / (1 + np.exp(-x)), "k": x / 2}.get(vi.name, x)
    return out


FORMS = {
    "linear_with_state": ("linear", None, None, True),
    "gated_per_dim": ("gated", HKV * DK, None, False),
    "delta": ("delta", None, HKV, True),
    "gated_delta_per_head_scalar_beta": ("gated_delta", HKV, 1, True),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_linear_attention_matches_the_onnx_reference_on_ref_and_cpu(form):
    proto = model(*FORMS[form])
    inputs = feeds(proto)
    want = expected(proto, inputs)
    model_ir = import_onnx(proto)
    for device, got in (("ref", run(model_ir, inputs)), ("cpu", compile_model(model_ir, threads=1)(inputs))):
        for name, w in zip(("y", "state"), want):
            assert got[name].shape == w.shape, (device, name, got[name].shape)
            np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-5, err_msg=f"{device} {name}")


def test_linear_attention_ir_runs_in_openvino(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import assert_close, run_openvino

    proto = model("gated_delta", HKV * DK, HKV, True)
    inputs = feeds(proto)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", inputs)
    for name, w in zip(("y", "state"), expected(proto, inputs)):
        assert_close(got[name], w, rtol=1e-5, what=name)


def test_long_sequences_and_missing_inputs_are_one_line_errors():
    with pytest.raises(IrforgeError, match="a sequence of 300 steps is over the 256"):
        import_onnx(model("linear", None, None, False, t=300))
    with pytest.raises(IrforgeError, match="update_rule 'gated' needs decay"):
        import_onnx(model("gated", None, None, False))
