"""onnxruntime's contrib Attention with a past state and a present output (the KV-cache
form GPT-2 has after onnxruntime's transformer optimizer) against onnxruntime on ref and
cpu and through our IR on OpenVINO: unidirectional with a cache, raw masks over past +
new keys, a past of length 0."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

MS = "com.microsoft"
B, H, HEADS = 2, 16, 2


def past_case(length=3, past=4, mask=False, seed=0, **attrs):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    feeds = {"x": rng.standard_normal((B, length, H)).astype(np.float32),
             "past": rng.standard_normal((2, B, HEADS, past, H // HEADS)).astype(np.float32)}
    names = ["x", "w", "b", "", "past"]
    if mask:
        raw = np.ones((B, past + length), np.int32)
        raw[1, :2] = 0  # left padding of the second sequence
        feeds["mask"] = raw
        names[3] = "mask"
    inits = {"w": (rng.standard_normal((H, 3 * H)) * 0.3).astype(np.float32), "b": rng.standard_normal(3 * H).astype(np.float32)}
    node = helper.make_node("Attention", names, ["y", "present"], domain=MS, num_heads=HEADS, **attrs)
    kinds = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, kinds[a.dtype], list(a.shape)) for n, a in feeds.items()],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "present")],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]), feeds


CASES = {
    "decode": {"length": 1, "unidirectional": 1},
    "prompt-with-cache": {"unidirectional": 1},
    "empty-past": {"past": 0, "unidirectional": 1},
    "raw-mask": {"mask": True, "unidirectional": 1},
    "bidirectional-mask": {"mask": True},
}


@pytest.mark.parametrize("case", list(CASES))
def test_attention_with_past_matches_onnxruntime(case):
    proto, feeds = past_case(**CASES[case])
    want = dict(zip(("y", "present"), ort_session_run(proto, feeds)))
    imported = import_onnx(proto)
    assert sum(isinstance(op, ScaledDotProductAttention) for op in imported.module.walk()) == 1
    for got in (run(imported, feeds), compile_model(imported, cache_dir=False)(feeds)):
        for name, expected in want.items():
            np.testing.assert_allclose(got[name], expected, rtol=1e-5, atol=1e-5, err_msg=f"{case} {name}")


def test_attention_with_past_through_openvino(tmp_path):
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = past_case(**CASES["raw-mask"])
    want = dict(zip(("y", "present"), ort_session_run(proto, feeds)))
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    got = run_openvino(xml, feeds)
    for name, expected in want.items():
        np.testing.assert_allclose(got[name], expected, rtol=1e-4, atol=1e-4, err_msg=name)
