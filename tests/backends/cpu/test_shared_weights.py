"""Layers sharing one weight share its packed copy (session 11): ALBERT's 12 layers run one
set of weights, packed 12 times before (339 MiB of packed constants for 42 MiB of weights).
Checked against onnxruntime on ref and cpu (arena NaN-filled), 1 and 2 threads."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import ort_session_run


def _layers(shared: bool, op: str):  # type: ignore[no-untyped-def]
    """x [2, 24, 40] -> 3 layers of (MatMul or Gemm by W: 40 x 40) + tanh; one W for all
    three layers when `shared`, else three."""
    rng = np.random.default_rng(0)
    names = ["w"] * 3 if shared else ["w0", "w1", "w2"]
    inits = [numpy_helper.from_array((rng.standard_normal((40, 40)) * 0.2).astype(np.float32), n) for n in dict.fromkeys(names)]
    nodes, x = [], "x"
    if op == "Gemm":
        nodes.append(helper.make_node("Reshape", ["x", "rows"], ["x2"]))
        inits.append(numpy_helper.from_array(np.array([48, 40], np.int64), "rows"))
        x = "x2"
    for i, w in enumerate(names):
        extra = {"transB": 1} if op == "Gemm" else {}
        nodes += [helper.make_node(op, [x, w], [f"m{i}"], **extra), helper.make_node("Tanh", [f"m{i}"], [f"t{i}"])]
        x = f"t{i}"
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    shape = [2, 24, 40] if op == "MatMul" else [48, 40]
    graph = helper.make_graph(nodes, "shared", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 24, 40])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return proto, {"x": rng.standard_normal((2, 24, 40)).astype(np.float32)}


@pytest.mark.parametrize("op", ["MatMul", "Gemm"])
def test_layers_sharing_a_weight_share_its_packed_copy(op, tmp_path) -> None:  # type: ignore[no-untyped-def]
    constant_bytes = {}
    for shared in (True, False):
        proto, feeds = _layers(shared, op)
        want = ort_session_run(proto, feeds)[0]
        model = import_onnx(proto)
        np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-5, atol=1e-5)
        for threads in (1, 2):
            compiled = compile_model(model, threads=threads, cache_dir=tmp_path)
            np.testing.assert_allclose(compiled(feeds)["y"], want, rtol=1e-5, atol=1e-5)
            packed = {id(p.args[1]) for p in compiled._executable.program.phases if p.function.endswith("_gemm")}
            assert len(packed) == (1 if shared else 3)  # one packed B for the three GEMMs when shared
            constant_bytes[shared] = compiled.stats.constant_bytes
            matches_reference(compiled, model, feeds, rtol=1e-5, atol=1e-5)
    one_copy = (constant_bytes[False] - constant_bytes[True]) / 2  # two copies fewer
    assert one_copy >= 40 * 40 * 4
