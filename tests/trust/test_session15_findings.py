"""Findings of session 15 (session 14's open trust items, and session 14's code fuzzed): each
input that gave a number other than the source's (onnxruntime's, or the reference's where
onnxruntime's own answer is not numpy's), a crash or an internal error is now the source's
number or a one-line coded error."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper
from xdsl.dialects.builtin import DYNAMIC_INDEX

from irforge.builder import ModelBuilder
from irforge.dialects import nn
from irforge.frontends.onnx import import_onnx
from tests.trust.test_session14_findings import FMIN, _model, _row_masked_where, two_where_chain


def _written_ir_matches(tmp_path, proto: onnx.ModelProto, feeds: dict, data_type: str = "FP32") -> None:  # type: ignore[no-untyped-def]
    """The default pipeline fuses the source's attention into one op with `fill`; the IR
    written from it gives onnxruntime's numbers on the source in OpenVINO."""
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
    from tests.backends.ir_xml_support import run_openvino
    from tests.helpers import ort_session_run

    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    fused = [op for op in model.func.body.block.ops if op.name == "nn.scaled_dot_product_attention"]
    assert fused and all(op.masked_fill() is not None for op in fused)
    xml, _ = write_ir_xml(model, tmp_path / "m.xml", data_type)
    tolerance = 2e-3 if data_type == "FP16" else 1e-4  # (an FP16 IR rounds the source's constants: 0.35)
    np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, rtol=tolerance, atol=tolerance / 10)


def _qkv(seed: int) -> dict:
    rng = np.random.default_rng(seed)
    return {n: rng.standard_normal((1, 2, 4 if n == "q" else 6, 8)).astype(np.float32) for n in "qkv"}


@pytest.mark.parametrize(("fill", "constant", "drop", "poison"), [(FMIN, True, False, np.inf), (FMIN, False, True, np.nan),
                                                                  (-np.inf, True, False, np.nan), (-np.inf, False, False, np.inf),
                                                                  (-1e9, True, True, np.inf), (-1e9, False, False, np.nan)])
def test_the_written_ir_keeps_a_non_finite_score_at_a_masked_key_out(tmp_path, fill: float, constant: bool, drop: bool, poison: float) -> None:  # type: ignore[no-untyped-def]
    """Session 14's leftover: the fused op's `fill` (a masked key's logit is the Where's fill,
    whatever its score) was left out of the IR, whose ScaledDotProductAttention adds its mask:
    with an inf / NaN score at a key masked in some rows only, OpenVINO's rows were NaN where
    the source's are finite (32 of 64 values off). The writer now spells such an op out as
    MatMul / Select / SoftMax / MatMul (`ir_xml.emitters.attention.EXACT_FILL`)."""
    proto = _row_masked_where(fill, constant, drop)
    feeds = _qkv(3)
    feeds["k"][0, :, 3, :] = poison
    if not constant:
        keep = np.tril(np.ones((4, 6), bool), 1).reshape(1, 1, 4, 6)
        feeds["keep"] = ~keep if drop else keep
    _written_ir_matches(tmp_path, proto, feeds)


@pytest.mark.parametrize("constant", [True, False])
@pytest.mark.parametrize("data_type", ["FP32", "FP16"])
def test_the_written_ir_keeps_a_large_finite_score_at_a_masked_key_out(tmp_path, constant: bool, data_type: str) -> None:  # type: ignore[no-untyped-def]
    """Finite inputs: Where(keep, s, -1e4) with a masked key scoring ~1.4e4 (q > 0, that
    key's k 5000). The source's logit there is -1e4 (the key gets nothing); the opset layer's
    s + -1e4 is ~4e3 and took every masked row's weight (24 of 64 values off in OpenVINO)."""
    proto = _row_masked_where(-1e4, constant, False)
    feeds = _qkv(3)
    feeds["q"] = np.abs(feeds["q"])
    feeds["k"][0, :, 3, :] = 5000.0
    if not constant:
        feeds["keep"] = np.tril(np.ones((4, 6), bool), 1).reshape(1, 1, 4, 6)
    _written_ir_matches(tmp_path, proto, feeds, data_type)


@pytest.mark.parametrize("poison", [np.nan, np.inf])
def test_the_written_ir_takes_the_nearest_of_two_fills(tmp_path, poison: float) -> None:  # type: ignore[no-untyped-def]
    """Two Wheres (fills float32's min, then -1e30 after * 0.125): the fused op's float mask
    holds each key's nearest fill and `fill` selects it (session 14's nested fills); in the
    IR the mask was added, NaN where the poisoned key is masked (session 14's
    test_two_wheres_in_a_chain_take_the_nearest_fill, written as IR)."""
    proto, feeds = two_where_chain(poison)
    _written_ir_matches(tmp_path, proto, feeds)


Q = np.random.default_rng(0).standard_normal((1, 2, 4, 8)).astype(np.float32)
K = np.random.default_rng(1).standard_normal((1, 2, 6, 8)).astype(np.float32)
K[0, :, 3] = np.inf  # a +inf score at key 3 (masked in rows 0 and 1 by the masks below)
V = np.random.default_rng(2).standard_normal((1, 2, 6, 5)).astype(np.float32)
KEEP = np.tril(np.ones((4, 6), bool), 1).reshape(1, 1, 4, 6)
FLOAT_MASK = np.where(KEEP, np.float32(0), np.float32(FMIN)).astype(np.float32)
FLOAT_MASK[..., 0, 0] = -1e30  # a second, nested fill
OP_CASES = {
    "causal": ([Q, K, V], {"causal": True, "fill": -1e9}),
    "causal-ignores-its-mask": ([Q, K, V, FLOAT_MASK], {"causal": True, "fill": -1e9}),
    "i1-mask": ([Q, K, V, KEEP], {"fill": -np.inf}),
    "i1-mask-scale": ([Q, K, V, KEEP], {"fill": FMIN, "scale": 0.2}),
    "float-mask": ([Q, K, V, FLOAT_MASK], {"fill": -1e30}),
    "float-mask-scale-operand": ([Q, K, V, FLOAT_MASK, np.array(0.3, np.float32)], {"fill": -1e30}),
    "rank-3-query": ([Q[0], K, V, KEEP], {"fill": FMIN}),
    "f16": ([Q.astype(np.float16), K.astype(np.float16), V.astype(np.float16), KEEP], {"fill": FMIN}),
}


def _attention_model(arrays: list, dynamic: bool, **props: object):  # type: ignore[no-untyped-def]
    """One attention op; with `dynamic`, q / k / v's last two dims known only at run time."""
    b = ModelBuilder()
    args = []
    for i, a in enumerate(arrays):
        shape = [DYNAMIC_INDEX if dynamic and i < 3 and d >= a.ndim - 2 else s for d, s in enumerate(a.shape)]
        args.append(b.input(f"x{i}", shape, a.dtype))
    op = b.add(nn.ScaledDotProductAttention, args, **props)
    b.output(op.results[0], "y")
    return b.finish()


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("data_type", ["FP32", "FP16"])
@pytest.mark.parametrize("case", sorted(OP_CASES))
def test_an_attention_with_fill_runs_in_openvino_like_the_reference(tmp_path, case: str, data_type: str, dynamic: bool) -> None:  # type: ignore[no-untyped-def]
    """Each form of the op's `fill` (causal, i1 mask, float mask with nested fills, scale as
    property / operand / 1 / sqrt(E), E and the sizes known only at run time, an f16 model,
    an FP16 IR) with a +inf score at a masked key: OpenVINO on the written IR gives the
    reference's numbers (the opset layer gave NaN rows: 20-30 of 40 values off)."""
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from tests.backends.ir_xml_support import run_openvino

    arrays, props = OP_CASES[case]
    model = _attention_model(arrays, dynamic, **props)
    feeds = {f"x{i}": a for i, a in enumerate(arrays)}
    with np.errstate(all="ignore"):
        want = run(model, feeds)["y"]
    assert np.isfinite(want[..., :2, :]).all()  # (the masked rows are finite: the test can fail)
    xml, _ = write_ir_xml(model, tmp_path / "m.xml", data_type)
    rtol = 1e-2 if arrays[0].dtype == np.float16 else 1e-4
    np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, rtol=rtol, atol=rtol)


def test_a_causal_attention_with_fill_ignores_its_float_mask_on_ref() -> None:
    """A causal op ignores its mask (the dialect's docstring; cpu so): the reference took a
    float mask's values as the logits of the keys the triangle masks (0 at key 1 of row 0, a
    key that then got weight), where cpu takes the fill."""
    from irforge.backends.cpu import compile_model
    from irforge.backends.reference import run

    q, k, v = Q, np.random.default_rng(4).standard_normal((1, 2, 6, 8)).astype(np.float32), V
    model = _attention_model([q, k, v, FLOAT_MASK], False, causal=True, fill=-1e9)
    feeds = {"x0": q, "x1": k, "x2": v, "x3": FLOAT_MASK}
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(8)
    logits = np.where(np.triu(np.ones((4, 6), bool), 1), np.float32(-1e9), scores)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-5, atol=1e-6)
    compiled = compile_model(model, threads=1, cache_dir=False)
    try:
        np.testing.assert_allclose(compiled(feeds)["y"], want, rtol=1e-5, atol=1e-6)
    finally:
        compiled.close()


def test_the_reference_scales_by_the_run_time_head_size() -> None:
    """An attention without a scale whose E is known only at run time: the reference took
    np.asarray(None) (NaN) as the factor and every output was NaN; the scale is now
    1 / sqrt(E) of the array, as the opset says."""
    from irforge.backends.reference import run

    rng = np.random.default_rng(6)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2, 3, 8), (1, 2, 5, 8), (1, 2, 5, 4)))
    model = _attention_model([q, k, v], True)
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(8)
    p = np.exp(s - s.max(-1, keepdims=True))
    np.testing.assert_allclose(run(model, {"x0": q, "x1": k, "x2": v})["y"], (p / p.sum(-1, keepdims=True)) @ v, rtol=1e-5, atol=1e-6)


SMALL_STACK_CHILD = """
import sys, threading
import numpy as np
import onnx
from onnx import TensorProto as T, helper
from irforge.backends.cpu import compile_model
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

kind, threads, kib = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
if kind == "attention":  # [1, 2, 128, 64] x 512 keys: a 256 KiB scores block, 128 KiB of packed keys
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), helper.make_node("MatMul", ["q", "kt"], ["s"]),
             helper.make_node("Mul", ["s", "c"], ["x"]), helper.make_node("Softmax", ["x"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"])]
    inputs = [helper.make_tensor_value_info(n, T.FLOAT, [1, 2, 128 if n == "q" else 512, 64]) for n in "qkv"]
    inits = [helper.make_tensor("c", T.FLOAT, [], [0.125])]
    feeds = {n: rng.standard_normal((1, 2, 128 if n == "q" else 512, 64)).astype(np.float32) for n in "qkv"}
    s = feeds["q"] @ np.swapaxes(feeds["k"], -1, -2) * 0.125
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ feeds["v"]
    op = "nn.scaled_dot_product_attention"
else:  # a 1x1 layer over 32 x 32 (rows 4 KiB apart): B copied per block (`b_blocks`), 192 KiB
    w = (rng.standard_normal((40, 400, 1, 1)) / 20).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], kernel_shape=[1, 1])]
    inputs = [helper.make_tensor_value_info("x", T.FLOAT, [1, 400, 32, 32])]
    inits = [onnx.numpy_helper.from_array(w, "w")]
    feeds = {"x": rng.standard_normal((1, 400, 32, 32)).astype(np.float32)}
    want = np.einsum("oc,chw->ohw", w[:, :, 0, 0], feeds["x"][0])[None]
    op = "nn.convolution"
graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
proto.ir_version = 8
model = import_onnx(proto)
apply_pipeline(model.module, DEFAULT_PIPELINE)
assert op in [o.name for o in model.func.body.block.ops]
threading.stack_size(kib * 1024)  # the caller's thread, and the team's worker the compile makes
compiled = compile_model(model, threads=threads, cache_dir=False)
out = {}
worker = threading.Thread(target=lambda: out.update(compiled(feeds)))
worker.start()
worker.join()
np.testing.assert_allclose(out["y"], want, rtol=1e-4, atol=1e-4)
print("ok")
"""


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("kind", ["attention", "b_blocks"])
def test_kernels_run_on_a_small_stack_thread(kind: str, threads: int) -> None:
    """The blocked attention kernel kept its scores block (up to 256 KiB), staged rows and
    packed keys (up to 384 KiB) in its stack frame (~640 KiB for Whisper's 1500 keys), a
    GEMM copying B per block (`b_blocks`: EfficientNetV2-S's 1x1 layers) 192 KiB: a caller
    running the model on a thread of a 128 KiB stack (musl's default; threading.stack_size)
    died of SIGSEGV, or wrote past its stack unseen. Those blocks now lie in the executable's
    per-chunk workspace after the arena (`attention.WORKSPACE`, `gemm.B_WORKSPACE`). Run in
    a child process (a stack overflow kills it)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in [os.getcwd(), os.environ.get("PYTHONPATH", "")] if p)}
    child = subprocess.run([sys.executable, "-c", SMALL_STACK_CHILD, kind, str(threads), "128"], capture_output=True, text=True, timeout=600, env=env)
    assert child.returncode == 0 and child.stdout.strip() == "ok", (child.returncode, child.stderr[-2000:])
