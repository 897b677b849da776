"""ONNX's Attention node (opsets 23-25; what torch's dynamo exporter writes for
scaled_dot_product_attention from opset 23 on) against onnxruntime on ref and cpu and through
our IR on OpenVINO: 3-D and 4-D inputs, grouped-query attention, boolean / additive / short
masks, causal with and without a KV cache (bottom-right aligned), nonpad_kv_seqlen, sliding
windows, softcap, all-masked rows (0, not NaN), present_key / present_value; and the refusals."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

RNG = np.random.default_rng(23)
B, E = 2, 8


def _info(name: str, array: np.ndarray):  # type: ignore[no-untyped-def]
    kind = TensorProto.BOOL if array.dtype == np.bool_ else TensorProto.INT64 if array.dtype == np.int64 else TensorProto.FLOAT
    return helper.make_tensor_value_info(name, kind, list(array.shape))


def attention_case(q_heads=2, kv_heads=2, length=3, total=5, past=0, rank=4, mask=None, nonpad=None, opset=23, outputs=1, **attrs):  # type: ignore[no-untyped-def]
    """An Attention model and its feeds; `total` counts the new keys (the past comes on top)."""
    def heads(h, rows):  # type: ignore[no-untyped-def]
        array = RNG.standard_normal((B, h, rows, E)).astype(np.float32)
        return array if rank == 4 else array.transpose(0, 2, 1, 3).reshape(B, rows, h * E)

    feeds = {"q": heads(q_heads, length), "k": heads(kv_heads, total), "v": heads(kv_heads, total)}
    names = ["q", "k", "v"]
    if mask is not None:
        feeds["mask"] = mask
    names.append("mask" if mask is not None else "")
    if past:
        feeds["past_k"] = RNG.standard_normal((B, kv_heads, past, E)).astype(np.float32)
        feeds["past_v"] = RNG.standard_normal((B, kv_heads, past, E)).astype(np.float32)
        names += ["past_k", "past_v"]
    if nonpad is not None:
        feeds["nonpad"] = np.asarray(nonpad, np.int64)
        names += ["", ""] if not past else []
        names.append("nonpad")
    while names and not names[-1]:
        names.pop()
    if rank == 3:
        attrs = {"q_num_heads": q_heads, "kv_num_heads": kv_heads, **attrs}
    out_names = ["y", "present_k", "present_v"][:outputs]
    node = helper.make_node("Attention", names, out_names, **attrs)
    graph = helper.make_graph([node], "g", [_info(n, a) for n, a in feeds.items()],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in out_names])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), feeds


def _mask(shape, dtype=bool, blocked_row=False):  # type: ignore[no-untyped-def]
    keep = RNG.uniform(size=shape) > 0.3
    keep[..., 0] = True
    if blocked_row:
        keep[..., 1, :] = False
    if dtype is bool:
        return keep
    return np.where(keep, RNG.uniform(-1, 1, shape), -np.inf).astype(np.float32)


CASES = {
    "plain": {},
    "scale": {"scale": 0.3},
    "3d": {"rank": 3},
    "gqa": {"q_heads": 4, "kv_heads": 2},
    "gqa-3d": {"q_heads": 6, "kv_heads": 2, "rank": 3},
    "bool-mask": {"mask": _mask((3, 5))},
    "float-mask-per-head": {"mask": _mask((B, 2, 3, 5), np.float32)},
    "gqa-mask-per-head": {"q_heads": 4, "kv_heads": 1, "mask": _mask((B, 4, 3, 5))},
    "blocked-row": {"mask": _mask((B, 1, 3, 5), blocked_row=True)},
    "blocked-row-float": {"mask": _mask((3, 5), np.float32, blocked_row=True)},
    "causal": {"is_causal": 1, "length": 5},
    "causal-rectangular": {"is_causal": 1, "length": 3, "total": 5},
    "causal-mask": {"is_causal": 1, "length": 5, "mask": _mask((5, 5))},
    "cache": {"past": 4, "length": 1, "total": 1, "outputs": 3},
    "causal-cache": {"past": 4, "length": 3, "total": 3, "is_causal": 1, "outputs": 3},
    "causal-cache-mask-3d": {"past": 2, "length": 3, "total": 3, "is_causal": 1, "rank": 3, "mask": _mask((3, 5)), "outputs": 3},
    "gqa-causal-cache": {"q_heads": 4, "kv_heads": 2, "past": 3, "length": 2, "total": 2, "is_causal": 1, "outputs": 3},
    "softcap": {"softcap": 2.5},
    "softcap-causal-gqa": {"softcap": 1.5, "is_causal": 1, "length": 5, "q_heads": 4, "kv_heads": 2},
    "nonpad": {"nonpad": [5, 3], "opset": 24},
    "nonpad-causal": {"nonpad": [5, 4], "is_causal": 1, "opset": 24},
}


def _want(proto, feeds):  # type: ignore[no-untyped-def]
    try:
        return ort_session_run(proto, feeds)
    except Exception:  # noqa: BLE001  (onnxruntime lacks some forms: the ONNX reference then)
        return ReferenceEvaluator(proto).run(None, feeds)


@pytest.mark.parametrize("case", list(CASES))
def test_attention_matches_onnxruntime_on_ref_and_cpu(case):
    proto, feeds = attention_case(**CASES[case])
    want = _want(proto, feeds)
    model = import_onnx(proto)
    assert sum(isinstance(op, ScaledDotProductAttention) for op in model.module.walk()) == (0 if "softcap" in case else 1)
    names = [o.name for o in proto.graph.output]
    for got in (run(model, feeds), compile_model(model)(feeds)):
        for name, expected in zip(names, want):
            assert not np.isnan(got[name]).any()
            np.testing.assert_allclose(got[name], expected, rtol=1e-5, atol=1e-5, err_msg=f"{case}: {name}")


@pytest.mark.parametrize("case", ["plain", "gqa-3d", "blocked-row", "causal-cache-mask-3d", "gqa-causal-cache", "softcap", "nonpad-causal"])
def test_attention_through_openvino_matches_onnxruntime(tmp_path, case):
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = attention_case(**CASES[case])
    want = _want(proto, feeds)
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    got = run_openvino(xml, feeds)
    for output, expected in zip(proto.graph.output, want):
        np.testing.assert_allclose(got[output.name], expected, rtol=1e-4, atol=1e-4)


def test_attention_sliding_window_matches_the_onnx_reference():
    # opset 25's windows: onnxruntime here has no Attention-25 kernel
    proto, feeds = attention_case(opset=25, length=6, total=6, is_causal=1, left_window_size=2)
    (want,) = ReferenceEvaluator(proto).run(None, feeds)
    model = import_onnx(proto)
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(compile_model(model)(feeds)["y"], want, rtol=1e-5, atol=1e-5)


def test_a_causal_node_without_cache_is_the_fused_ops_causal_flag():
    proto, _ = attention_case(is_causal=1, length=5)
    (op,) = [op for op in import_onnx(proto).module.walk() if isinstance(op, ScaledDotProductAttention)]
    assert op.bool_prop("causal") and len(op.operands) == 3


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"softmax_precision": TensorProto.DOUBLE}, "softmax_precision"),
        ({"is_causal": 2}, "is_causal"),
        ({"softcap": -1.0}, "softcap"),
        ({"q_heads": 3, "kv_heads": 2}, "multiple"),
        ({"rank": 3, "q_num_heads": 0}, "q_num_heads"),
    ],
)
def test_attention_refusals_name_the_problem(kwargs, named):
    with pytest.raises(IrforgeError) as err:
        import_onnx(attention_case(**kwargs)[0])
    assert named in err.value.what and err.value.code == "E041"


def test_attention_qk_output_read_is_refused():
    proto, _ = attention_case()
    node = proto.graph.node[0]
    node.output.extend(["", "", "scores"])
    proto.graph.output.append(helper.make_tensor_value_info("scores", TensorProto.FLOAT, None))
    with pytest.raises(IrforgeError) as err:
        import_onnx(proto)
    assert "qk_matmul_output" in err.value.what
