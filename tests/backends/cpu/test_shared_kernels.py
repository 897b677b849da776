"""Kernels shared across layers (session 10): depthwise layers that differ in their channel
count only run one kernel (the count read at run time), and FC / MatMul GEMMs cut K into
equal blocks of at most `linear.FC_KC`. Checked against onnxruntime on ref and cpu."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import depthwise
from irforge.backends.cpu.ops import linear
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def _depthwise_pair(n: int, size: int, k: int):  # type: ignore[no-untyped-def]
    """x [n, 5, size, size] -> depthwise (5 channels) -> 1x1 to 9 -> depthwise (9 channels,
    the same window, plane and bias) -> y."""
    rng = np.random.default_rng(0)
    pad = k // 2
    weights = [
        numpy_helper.from_array(rng.standard_normal((5, 1, k, k)).astype(np.float32), "w1"),
        numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "b1"),
        numpy_helper.from_array(rng.standard_normal((9, 5, 1, 1)).astype(np.float32), "w2"),
        numpy_helper.from_array(rng.standard_normal((9, 1, k, k)).astype(np.float32), "w3"),
        numpy_helper.from_array(rng.standard_normal(9).astype(np.float32), "b3"),
    ]
    window = dict(kernel_shape=[k, k], pads=[pad] * 4)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["a"], group=5, **window),
        helper.make_node("Conv", ["a", "w2"], ["b"]),
        helper.make_node("Conv", ["b", "w3", "b3"], ["y"], group=9, **window),
    ]
    graph = helper.make_graph(nodes, "dw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, 5, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), {"x": rng.standard_normal((n, 5, size, size)).astype(np.float32)}


@pytest.mark.parametrize("share", [True, False])
@pytest.mark.parametrize("n,size,k", [(1, 14, 3), (2, 14, 5), (1, 40, 3), (2, 36, 7)])  # padded-plane and cut kernels
def test_depthwise_layers_differing_in_channels_share_one_kernel(n, size, k, share, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(depthwise, "SHARE_CHANNELS", share)
    monkeypatch.setattr(depthwise, "PANEL_OUTPUT", False)  # else the first layer writes the 1x1's B panels: another kernel
    proto, feeds = _depthwise_pair(n, size, k)
    want = ort_session_run(proto, feeds)[0]
    model = import_onnx(proto)
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-4, atol=1e-4)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=tmp_path)
        try:
            np.testing.assert_allclose(compiled(feeds)["y"], want, rtol=1e-4, atol=1e-4)
            kernels = {p.function for p in compiled._executable.program.phases if p.function.endswith("_dwconv")}
        finally:
            compiled.close()
        assert len(kernels) == (1 if share else 2)


def test_fc_k_blocks(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(linear, "FC_KC", 512)
    assert [linear.fc_kc(k) for k in (1, 64, 512, 513, 768, 2048, 3072, 1030)] == [1, 64, 512, 257, 384, 512, 512, 344]


@pytest.mark.parametrize("fc_kc", [512, 100, None])
@pytest.mark.parametrize("m,k,n", [(7, 1030, 40), (13, 512, 33)])
def test_fc_gemm_in_equal_k_blocks(m, k, n, fc_kc, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """K = 1030 in 3 blocks of 344 (the last 342), or 11 of 94 (the last 90) at FC_KC = 100;
    a MatMul with a constant B and a bias Add (the FC GEMM with its epilogue), 1 and 2 threads."""
    monkeypatch.setattr(linear, "FC_KC", fc_kc)
    rng = np.random.default_rng(1)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["p"]), helper.make_node("Add", ["p", "b"], ["y"])], "fc",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, m, k])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "w"),
         numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    feeds = {"x": rng.standard_normal((1, m, k)).astype(np.float32)}
    want = ort_session_run(proto, feeds)[0]
    model = import_onnx(proto)
    for threads in (1, 2):
        compiled = compile_model(model, threads=threads, cache_dir=tmp_path / str(fc_kc))
        try:
            np.testing.assert_allclose(compiled(feeds)["y"], want, rtol=1e-4, atol=1e-4)
        finally:
            compiled.close()
