"""onnxruntime's com.microsoft GroupQueryAttention (onnxruntime-genai's decoder attention)
against onnxruntime's CPU kernel on ref and cpu, and through our IR on OpenVINO: packed and
separate QKV, the first prompt with and without a cache buffer (the shared-buffer form's
long past), decoding with different past lengths per batch, a batch-1 follow-up prompt,
rotary (halves, interleaved, partial), grouped heads, local windows, softcap, smooth
softmax; the refused forms."""

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
HEAD = 32


def _info(name, array):  # type: ignore[no-untyped-def]
    kind = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}[array.dtype]
    return helper.make_tensor_value_info(name, kind, list(array.shape))


def gqa_case(batch=2, length=4, total=None, past=0, seqlens=None, heads=4, kv_heads=2, packed=False, rotary=0, seed=0, **attrs):  # type: ignore[no-untyped-def]
    """A one-node model and its feeds; total defaults to past + length (no padding)."""
    rng = np.random.default_rng(seed)
    total = past + length if total is None else total
    seqlens = np.full(batch, total - 1) if seqlens is None else np.asarray(seqlens)
    feeds: dict[str, np.ndarray] = {}
    if packed:
        feeds["qkv"] = rng.standard_normal((batch, length, (heads + 2 * kv_heads) * HEAD)).astype(np.float32)
        names = ["qkv", "", ""]
    else:
        feeds["q"] = rng.standard_normal((batch, length, heads * HEAD)).astype(np.float32)
        feeds["k"] = rng.standard_normal((batch, length, kv_heads * HEAD)).astype(np.float32)
        feeds["v"] = rng.standard_normal((batch, length, kv_heads * HEAD)).astype(np.float32)
        names = ["q", "k", "v"]
    if past:
        feeds["past_k"] = rng.standard_normal((batch, kv_heads, past, HEAD)).astype(np.float32)
        feeds["past_v"] = rng.standard_normal((batch, kv_heads, past, HEAD)).astype(np.float32)
        names += ["past_k", "past_v"]
    else:
        names += ["", ""]
    feeds["seqlens"] = seqlens.astype(np.int32)
    inits = {"total": np.array(total, np.int32)}
    names += ["seqlens", "total"]
    if rotary:
        angles = np.arange(64)[:, None] * (1.0 / 10000 ** (np.arange(rotary // 2) / (rotary // 2)))[None, :]
        inits.update(cos=np.cos(angles).astype(np.float32), sin=np.sin(angles).astype(np.float32))
        names += ["cos", "sin"]
        attrs["do_rotary"] = 1
    node = helper.make_node("GroupQueryAttention", names, ["y", "present_k", "present_v"], domain=MS, num_heads=heads, kv_num_heads=kv_heads,
                            **attrs)
    graph = helper.make_graph([node], "g", [_info(n, a) for n, a in feeds.items()],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "present_k", "present_v")],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]), feeds


CASES = {
    "prompt": {},
    "prompt-packed-rotary": {"packed": True, "rotary": HEAD},
    "prompt-interleaved-partial": {"rotary": 16, "rotary_interleaved": 1},
    "prompt-empty-past": {"past": 0, "rotary": HEAD},
    "prompt-buffer": {"past": 9, "total": 4, "rotary": HEAD},  # the shared-buffer form: a max-length past
    "prompt-padded": {"seqlens": [3, 2], "rotary": HEAD},
    "decode": {"length": 1, "past": 5, "rotary": HEAD, "packed": True},
    "decode-ragged": {"length": 1, "past": 6, "total": 7, "seqlens": [6, 3], "rotary": HEAD},
    "decode-buffer": {"length": 1, "past": 8, "total": 6, "seqlens": [5, 2], "rotary": HEAD},
    "follow-up": {"batch": 1, "length": 3, "past": 4, "rotary": HEAD},
    "mha-heads": {"heads": 2, "kv_heads": 2, "length": 1, "past": 3},
    "window": {"length": 6, "local_window_size": 2},
    "window-decode": {"length": 1, "past": 6, "local_window_size": 3, "rotary": HEAD},
    "softcap": {"softcap": 2.0, "length": 1, "past": 4},
    "softcap-prompt": {"softcap": 2.0, "scale": 0.3},
    "smooth": {"smooth_softmax": 1, "rotary": HEAD},
    "smooth-decode": {"smooth_softmax": 1, "length": 1, "past": 4},
    "scale": {"scale": 0.1, "length": 1, "past": 2},
}


def _valid(name, array, case):  # type: ignore[no-untyped-def]
    """Rows onnxruntime leaves undefined (padding queries of the first prompt) are not compared."""
    seqlens = CASES[case].get("seqlens")
    if name == "y" and seqlens is not None and CASES[case].get("length", 4) > 1:
        return np.concatenate([array[b, : s + 1].ravel() for b, s in enumerate(seqlens)])
    return array


@pytest.mark.parametrize("case", list(CASES))
def test_gqa_matches_onnxruntime_on_ref_and_cpu(case):
    proto, feeds = gqa_case(**CASES[case])
    want = dict(zip(("y", "present_k", "present_v"), ort_session_run(proto, feeds)))
    imported = import_onnx(proto)
    fused = sum(isinstance(op, ScaledDotProductAttention) for op in imported.module.walk())
    assert fused == (0 if "softcap" in CASES[case] else 1)
    for device, got in (("ref", run(imported, feeds)), ("cpu", compile_model(imported, cache_dir=False)(feeds))):
        for name, expected in want.items():
            np.testing.assert_allclose(_valid(name, got[name], case), _valid(name, expected, case), rtol=1e-5, atol=1e-5,
                                       err_msg=f"{case} {device} {name}")


@pytest.mark.parametrize("case", ["prompt-packed-rotary", "decode-ragged", "smooth-decode", "softcap"])
def test_gqa_through_openvino(tmp_path, case):
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = gqa_case(**CASES[case])
    want = dict(zip(("y", "present_k", "present_v"), ort_session_run(proto, feeds)))
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    got = run_openvino(xml, feeds)
    for name, expected in want.items():
        np.testing.assert_allclose(got[name], expected, rtol=1e-4, atol=1e-4, err_msg=name)


@pytest.mark.parametrize("attrs, match", [({"causal": 0}, "causal=0"), ({"qk_output": 1}, "qk_output=1"),
                                          ({"kv_cache_bit_width": 8}, "kv_cache_bit_width"), ({"k_quant_type": "PER_TENSOR"}, "k_quant_type"),
                                          ({"sliding_window_cache": 1}, "sliding_window_cache"), ({"bogus": 1}, "bogus")])
def test_gqa_refused_forms_name_the_attribute(attrs, match):
    proto, _ = gqa_case(**attrs)
    with pytest.raises(IrforgeError, match=match) as info:
        import_onnx(proto)
    assert info.value.code in ("E186", "E179")


def test_gqa_refused_inputs_name_the_input():
    proto, _ = gqa_case()
    node = proto.graph.node[0]
    node.input.extend(["", "", "", "bias"])
    proto.graph.input.append(helper.make_tensor_value_info("bias", TensorProto.FLOAT, [2, 1, 4, 4]))
    with pytest.raises(IrforgeError, match="attention_bias") as info:
        import_onnx(proto)
    assert info.value.code == "E186"
