"""com.microsoft RotaryEmbedding and ONNX RotaryEmbedding-23 against onnxruntime on ref and
cpu, and through our IR on OpenVINO: 3-D and 4-D inputs, halves and interleaved pairs,
partial rotation, position ids per token or one start position; the refused forms."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

MS = "com.microsoft"
B, S, N, H = 2, 3, 2, 16


def rotary_case(ms=True, rank=3, interleaved=0, rotary=0, one_position=False, **extra):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(rank * 10 + interleaved + rotary)
    width = (rotary or H) // 2
    feeds = {"x": rng.standard_normal((B, S, N * H) if rank == 3 else (B, N, S, H)).astype(np.float32),
             "pos": np.array([4], np.int64) if one_position else rng.integers(0, 20, (B, S)).astype(np.int64)}
    inits = {"cos": rng.standard_normal((20, width)).astype(np.float32), "sin": rng.standard_normal((20, width)).astype(np.float32)}
    attrs = {"interleaved": interleaved, **extra}
    if rotary:
        attrs["rotary_embedding_dim"] = rotary
    if rotary or (rank == 3 and not ms):
        attrs["num_heads"] = N
    if ms:
        node = helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], domain=MS, **attrs)
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]
    else:
        node = helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], **attrs)
        opsets = [helper.make_opsetid("", 23)]
    kinds = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, kinds[a.dtype], list(a.shape)) for n, a in feeds.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])
    return helper.make_model(graph, opset_imports=opsets), feeds


CASES = [dict(ms=ms, rank=rank, interleaved=il, rotary=rotary, one_position=one)
         for ms in (True, False) for rank in (3, 4) for il in (0, 1) for rotary in (0, 8) for one in ((False, True) if ms else (False,))]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{int(v)}" for k, v in c.items()))
def test_rotary_matches_onnxruntime_on_ref_and_cpu(case):
    proto, feeds = rotary_case(**case)
    (want,) = ort_session_run(proto, feeds)
    imported = import_onnx(proto)
    for got in (run(imported, feeds), compile_model(imported, cache_dir=False)(feeds)):
        np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", [CASES[0], CASES[-1], dict(ms=True, rank=4, interleaved=1, rotary=8, one_position=True)])
def test_rotary_through_openvino(tmp_path, case):
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = rotary_case(**case)
    (want,) = ort_session_run(proto, feeds)
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("extra, match", [({"is_packed_batching": 1}, "is_packed_batching"), ({"scale": 2.0}, "scale")])
def test_rotary_refused_forms(extra, match):
    proto, _ = rotary_case(**extra)
    with pytest.raises(IrforgeError, match=match) as info:
        import_onnx(proto)
    assert info.value.code == "E186"
