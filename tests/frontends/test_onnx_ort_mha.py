"""onnxruntime's com.microsoft MultiHeadAttention against its CPU kernel on ref and cpu, and
through our IR on OpenVINO: separate Q/K/V with and without the packed bias, cross-attention
with other key lengths and with [B, N, L, H] keys, key_padding_mask as end positions and raw
2-D / 3-D masks, attention_bias, unidirectional with a past, present outputs; the refused
forms."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

MS = "com.microsoft"
B, S, HEADS, HEAD = 2, 3, 2, 8
D = HEADS * HEAD


def mha_case(kv_len=S, past=0, bias=False, mask=None, attention_bias=False, heads_first=False, outputs=("y",), seed=0, **attrs):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    total = past + kv_len
    feeds = {"q": rng.standard_normal((B, S, D)).astype(np.float32)}
    if heads_first:
        feeds["k"] = rng.standard_normal((B, HEADS, kv_len, HEAD)).astype(np.float32)
        feeds["v"] = rng.standard_normal((B, HEADS, kv_len, HEAD)).astype(np.float32)
    else:
        feeds["k"] = rng.standard_normal((B, kv_len, D)).astype(np.float32)
        feeds["v"] = rng.standard_normal((B, kv_len, D)).astype(np.float32)
    names = ["q", "k", "v", "", "", "", "", ""]
    inits = {}
    if bias:
        inits["bias"] = rng.standard_normal(3 * D).astype(np.float32)
        names[3] = "bias"
    if mask == "end":
        feeds["mask"] = np.array([total - 1, total], np.int32)
    elif mask == "raw":
        raw = np.ones((B, total), np.int32)
        raw[0, -1] = 0
        raw[1, 0] = 0
        feeds["mask"] = raw
    elif mask == "raw3":
        feeds["mask"] = (rng.uniform(size=(B, S, total)) > 0.3).astype(np.int32)
    if mask:
        names[4] = "mask"
    if attention_bias:
        feeds["attn_bias"] = rng.standard_normal((1, HEADS, S, total)).astype(np.float32)
        names[5] = "attn_bias"
    if past:
        feeds["past_k"] = rng.standard_normal((B, HEADS, past, HEAD)).astype(np.float32)
        feeds["past_v"] = rng.standard_normal((B, HEADS, past, HEAD)).astype(np.float32)
        names[6], names[7] = "past_k", "past_v"
    while not names[-1]:
        names.pop()
    out_names = ["y", "present_k" if "present" in outputs else "", "present_v" if "present" in outputs else ""]
    while not out_names[-1]:
        out_names.pop()
    node = helper.make_node("MultiHeadAttention", names, out_names, domain=MS, num_heads=HEADS, **attrs)
    kinds = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, kinds[a.dtype], list(a.shape)) for n, a in feeds.items()],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in out_names],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]), feeds


CASES = {
    "self": {},
    "bias": {"bias": True},
    "cross": {"kv_len": 5, "bias": True},
    "cross-heads-first": {"kv_len": 5, "heads_first": True, "outputs": ("y", "present")},
    "end-positions": {"mask": "end"},
    "raw-mask": {"mask": "raw", "mask_filter_value": -1000.0},
    "raw-3d": {"mask": "raw3"},
    "attention-bias": {"attention_bias": True, "scale": 0.3},
    "unidirectional": {"unidirectional": 1},
    "past": {"past": 4, "unidirectional": 1, "outputs": ("y", "present"), "bias": True},
    "past-mask": {"past": 4, "kv_len": 1, "mask": "raw", "outputs": ("y", "present")},
}


@pytest.mark.parametrize("case", list(CASES))
def test_mha_matches_onnxruntime_on_ref_and_cpu(case):
    proto, feeds = mha_case(**CASES[case])
    want = dict(zip([o.name for o in proto.graph.output], ort_session_run(proto, feeds)))
    imported = import_onnx(proto)
    assert sum(isinstance(op, ScaledDotProductAttention) for op in imported.module.walk()) == 1
    for device, got in (("ref", run(imported, feeds)), ("cpu", compile_model(imported, cache_dir=False)(feeds))):
        for name, expected in want.items():
            np.testing.assert_allclose(got[name], expected, rtol=1e-5, atol=1e-5, err_msg=f"{case} {device} {name}")


@pytest.mark.parametrize("case", ["cross", "past", "raw-3d"])
def test_mha_through_openvino(tmp_path, case):
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = mha_case(**CASES[case])
    want = dict(zip([o.name for o in proto.graph.output], ort_session_run(proto, feeds)))
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    got = run_openvino(xml, feeds)
    for name, expected in want.items():
        np.testing.assert_allclose(got[name], expected, rtol=1e-4, atol=1e-4, err_msg=name)


def test_mha_refused_forms():
    proto, _ = mha_case(heads_first=True, bias=True)
    with pytest.raises(IrforgeError, match="bias with key") as info:
        import_onnx(proto)
    assert info.value.code == "E186"
    proto, _ = mha_case()
    proto.graph.node[0].input[:] = ["q"]
    proto.graph.input[0].type.tensor_type.shape.Clear()
    for dim in (B, S, HEADS, 3, HEAD):
        proto.graph.input[0].type.tensor_type.shape.dim.add().dim_value = dim
    with pytest.raises(IrforgeError, match="packed QKV") as info:
        import_onnx(proto)
    assert info.value.code == "E186"
