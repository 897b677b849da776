"""onnxruntime's contrib Attention and EmbedLayerNormalization (what its transformer optimizer
writes for BERT-like encoders) against onnxruntime on ref and cpu and through our IR on
OpenVINO: every mask_index form its CPU kernel takes, unidirectional, attention_bias,
qkv_hidden_sizes and scale; the refusals of rotary and preallocated-cache forms (the KV cache itself:
test_onnx_ort_attention_past.py)."""

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
RNG = np.random.default_rng(11)
B, S, H, HEADS = 2, 5, 16, 2


def _value(name, array):  # type: ignore[no-untyped-def]
    kind = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}[array.dtype]
    return helper.make_tensor_value_info(name, kind, list(array.shape))


def model(nodes, feeds, inits, outputs):  # type: ignore[no-untyped-def]
    graph = helper.make_graph(nodes, "g", [_value(n, a) for n, a in feeds.items()],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])


def attention_case(mask=None, bias=False, sizes=(H, H, H), **attrs):  # type: ignore[no-untyped-def]
    feeds = {"x": RNG.standard_normal((B, S, H)).astype(np.float32)}
    inits = {"w": (RNG.standard_normal((H, sum(sizes))) * 0.3).astype(np.float32), "b": RNG.standard_normal(sum(sizes)).astype(np.float32)}
    names = ["x", "w", "b", ""]
    if mask is not None:
        feeds["mask"] = mask.astype(np.int32)
        names[3] = "mask"
    if bias:
        feeds["bias"] = RNG.standard_normal((1, HEADS, S, S)).astype(np.float32)
        names += ["", "bias"]
    while not names[-1]:
        names.pop()
    if sizes != (H, H, H):
        attrs["qkv_hidden_sizes"] = list(sizes)
    node = helper.make_node("Attention", names, ["y"], domain=MS, num_heads=HEADS, **attrs)
    return model([node], feeds, inits, ["y"]), feeds


RAW = np.ones((B, S), np.int32)
RAW[0, 3:] = 0
CASES = {
    "no-mask": {},
    "end-positions": {"mask": np.array([3, 5])},
    "end-zero": {"mask": np.array([0, 4])},  # a row with every key masked: mask_filter_value, not -inf
    "start-end": {"mask": np.array([4, 5, 1, 2])},
    "raw-2d": {"mask": RAW},
    "raw-3d": {"mask": (RNG.uniform(size=(B, S, S)) > 0.3)},
    "unidirectional": {"unidirectional": 1},
    "unidirectional-raw": {"unidirectional": 1, "mask": RAW},
    "attention-bias": {"bias": True, "mask": RAW},
    "scale-filter": {"scale": 0.2, "mask_filter_value": -1000.0, "mask": RAW},
    "value-size": {"sizes": (H, H, 8)},
}


@pytest.mark.parametrize("case", list(CASES))
def test_attention_matches_onnxruntime_on_ref_and_cpu(case):
    proto, feeds = attention_case(**CASES[case])
    (want,) = ort_session_run(proto, feeds)
    imported = import_onnx(proto)
    assert sum(isinstance(op, ScaledDotProductAttention) for op in imported.module.walk()) == 1
    for got in (run(imported, feeds), compile_model(imported, cache_dir=False)(feeds)):
        np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-5, err_msg=case)


def embed_case(segments=True, positions=False, outputs=("y", "sum")):  # type: ignore[no-untyped-def]
    feeds = {"ids": RNG.integers(0, 50, (B, S)).astype(np.int32), "mask": RAW}
    inits = {"words": RNG.standard_normal((50, H)).astype(np.float32), "pos": RNG.standard_normal((16, H)).astype(np.float32),
             "gamma": RNG.uniform(0.5, 1.5, H).astype(np.float32), "beta": RNG.standard_normal(H).astype(np.float32)}
    names = ["ids", "", "words", "pos", "", "gamma", "beta", "mask"]
    if segments:
        feeds["seg"] = RNG.integers(0, 2, (B, S)).astype(np.int32)
        inits["segemb"] = RNG.standard_normal((2, H)).astype(np.float32)
        names[1], names[4] = "seg", "segemb"
    if positions:
        feeds["posids"] = np.array([[4, 3, 2, 1, 0]], np.int32).repeat(B, 0)
        names.append("posids")
    node = helper.make_node("EmbedLayerNormalization", names, ["y", "mask_index", "sum" if "sum" in outputs else ""], domain=MS, epsilon=1e-5)
    attention = helper.make_node("Attention", ["y", "w", "b", "mask_index"], ["att"], domain=MS, num_heads=HEADS)
    inits.update(w=(RNG.standard_normal((H, 3 * H)) * 0.3).astype(np.float32), b=RNG.standard_normal(3 * H).astype(np.float32))
    return model([node, attention], feeds, inits, ["att", *outputs]), feeds


@pytest.mark.parametrize("kwargs", [{}, {"segments": False}, {"positions": True}], ids=["segments", "no-segments", "position-ids"])
def test_embed_layer_norm_and_attention_match_onnxruntime(kwargs):
    proto, feeds = embed_case(**kwargs)
    want = dict(zip([o.name for o in proto.graph.output], ort_session_run(proto, feeds)))
    imported = import_onnx(proto)
    for got in (run(imported, feeds), compile_model(imported, cache_dir=False)(feeds)):
        for name, expected in want.items():
            np.testing.assert_allclose(got[name], expected, rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("case", ["raw-2d", "unidirectional-raw", "start-end"])
def test_attention_through_openvino(tmp_path, case):
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = attention_case(**CASES[case])
    (want,) = ort_session_run(proto, feeds)
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, rtol=1e-4, atol=1e-4)


def test_attention_rotary_and_preallocated_cache_are_refused():
    proto, _ = attention_case(do_rotary=1)
    with pytest.raises(IrforgeError, match="do_rotary"):
        import_onnx(proto)
    proto, _ = attention_case(past_present_share_buffer=1)
    with pytest.raises(IrforgeError, match="past_present_share_buffer"):
        import_onnx(proto)
    proto, _ = attention_case(mask=np.ones((B, 1, S, S)))
    with pytest.raises(IrforgeError, match="mask_index of shape"):
        import_onnx(proto)
