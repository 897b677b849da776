"""The blocked attention kernel's packed keys and whole-vector rows (`attention.PACK_KEYS`,
`attention.WHOLE_ROWS`) against the reference interpreter and onnxruntime, the arena
NaN-filled: S short of a whole vector, one vector or less, and whole; several blocks of
rows per batch (the keys packed once per batch, by each thread for the batches it starts
in); a float mask with -inf entries, or none; 1 and 2 threads; every knob combination. A gather
offset or a panel slot off, a pad lane left at its zero score (not -inf), or keys reused
from another batch fails it."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.codegen import attention
from irforge.dialects.nn import ScaledDotProductAttention as SDPA
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.backends.cpu.conftest import matches_reference
from tests.helpers import one_op_model, ort_session_run, rand

KNOBS = [(True, True), (True, False), (False, True), (False, False)]


def _phases(compiled) -> list[str]:  # type: ignore[no-untyped-def]
    return [p.function for p in compiled._executable.program.phases]


CASES = [(45, True, 1), (7, False, 1), (48, True, 1)]
"""(S, a mask, threads) run under every knob combination"""
DEFAULT_CASES = [(45, True, 2), (45, False, 2), (7, True, 2), (48, False, 2)]
"""and under the defaults alone"""


@pytest.mark.parametrize(
    "s, masked, threads, pack, whole",
    [case + knobs for case in CASES for knobs in KNOBS] + [case + KNOBS[0] for case in DEFAULT_CASES],
)
def test_keys_and_rows_match_the_reference(s, masked, threads, pack, whole, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(attention, "PACK_KEYS", pack)
    monkeypatch.setattr(attention, "WHOLE_ROWS", whole)
    monkeypatch.setattr(attention, "BLOCK_FLOATS", 12 * attention.row_stride(s))  # 12 rows a block: 3 per batch
    mask = rand(2, 3, 29, s, seed=11, low=-4.0, high=1.0)
    mask.reshape(-1)[3::7] = -np.inf  # no row all -inf
    inputs = [rand(2, 3, 29, 16, seed=1), rand(2, 3, s, 16, seed=2, low=-3.0, high=3.0), rand(2, 3, s, 8, seed=3)] + [mask] * masked
    model = one_op_model(SDPA, inputs, [])
    compiled = compile_model(model, threads=threads, cache_dir=False)
    kernels = _phases(compiled)
    assert any(k.endswith("_attention") for k in kernels)
    assert len(kernels) == (1 if pack else 2)  # packed keys: no kT copy phase
    matches_reference(compiled, model, {f"x{i}": x for i, x in enumerate(inputs)})


def _onnx_attention(heads: int, length: int, d: int) -> onnx.ModelProto:
    """Transpose, MatMul, Mul, Softmax, MatMul: the exported form the pipeline fuses."""
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "scale"], ["s2"]), helper.make_node("Softmax", ["s2"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    shape = [1, heads, length, d]
    graph = helper.make_graph(
        nodes, "attention", [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "qkv"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], [helper.make_tensor("scale", TensorProto.FLOAT, [], [d ** -0.5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("threads", [1, 2])
def test_vit_like_rows_match_onnxruntime(threads) -> None:  # type: ignore[no-untyped-def]
    proto = _onnx_attention(3, 37, 64)  # 37 keys: two whole vectors and 5 of a third
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    compiled = compile_model(model, threads=threads, cache_dir=False)
    assert len(_phases(compiled)) == 1 and _phases(compiled)[0].endswith("_attention")
    rng = np.random.default_rng(0)
    feeds = {n: (4 * rng.standard_normal((1, 3, 37, 64))).astype(np.float32) for n in "qkv"}
    compiled._executable.arena[:] = np.nan
    try:
        got = next(iter(compiled(feeds).values()))
    finally:
        compiled.close()
    np.testing.assert_allclose(got, ort_session_run(proto, feeds)[0], rtol=1e-4, atol=1e-5)


def test_long_keys_packed_in_the_kernel() -> None:
    """1500 keys of D = 64 (Whisper's encoder): packed on the kernel's stack (`PACKED_KEYS_MAX`),
    no kT copy phase; 2 threads, a mask, equal to the reference."""
    mask = rand(1, 2, 7, 1500, seed=11, low=-4.0, high=1.0)
    inputs = [rand(1, 2, 7, 64, seed=1), rand(1, 2, 1500, 64, seed=2, low=-3.0, high=3.0), rand(1, 2, 1500, 16, seed=3), mask]
    model = one_op_model(SDPA, inputs, [])
    compiled = compile_model(model, threads=2, cache_dir=False)
    assert len(_phases(compiled)) == 1 and _phases(compiled)[0].endswith("_attention")
    matches_reference(compiled, model, {f"x{i}": x for i, x in enumerate(inputs)})
