"""Findings of session 13 (session 12's open leftovers, and fuzz_session12_ops.py's seeds of
session 12's code, mutated): each input that gave a number other than onnxruntime's, a crash,
an internal error or a multi-line error is now onnxruntime's number or a one-line coded
error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper

from irforge.frontends.onnx import import_onnx

ROOT = Path(__file__).resolve().parents[2]

_CUT_UNDER_A_HIT = """
import os, sys
from pathlib import Path
import numpy as np, onnx
from onnx import TensorProto as T, helper
from irforge.backends.cpu import compile_model
from irforge.frontends.onnx import import_onnx

w = np.random.default_rng(3).standard_normal((64, 64)).astype(np.float32)
graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                          [helper.make_tensor_value_info("x", T.FLOAT, [4, 64])],
                          [helper.make_tensor_value_info("y", T.FLOAT, [4, 64])], [onnx.numpy_helper.from_array(w, "w")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
x = np.ones((4, 64), np.float32)
cache = Path(sys.argv[1])
compile_model(import_onnx(model), threads=1, cache_dir=cache).close()
compiled = compile_model(import_onnx(model), threads=1, cache_dir=cache)
assert compiled.stats.program_cached
bins = list(cache.glob("p*.bin"))
assert bins
for path in bins:
    os.truncate(path, 0)  # another program cuts the entry under this process's hit
got = compiled({"x": x})["y"]
np.testing.assert_allclose(got, x @ w, rtol=1e-5, atol=1e-4)
print("same numbers")
"""


def test_a_cache_entry_cut_under_a_running_process_does_not_crash_it(tmp_path) -> None:
    """A program-cache hit mapped its `.bin` (privately): cut in place by another program
    after the load, the next run died of SIGBUS (truncation unmaps even a private mapping's
    copied pages). A hit now reads the region into its own memory; the run gives the same
    numbers. (In a child process: before the fix the signal would take pytest down.)"""
    done = subprocess.run([sys.executable, "-c", _CUT_UNDER_A_HIT, str(tmp_path / "cache")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert done.returncode == 0 and "same numbers" in done.stdout, (done.returncode, done.stderr[-2000:])


def _runtime_keys_feeds(keys: int, poison: float | None) -> dict:
    """rtkeys.onnx's inputs with `keys` keys, batch 1's keys all masked, `poison` in a query
    of batch 1 (an inf / NaN score at each of its masked keys)."""
    rng = np.random.default_rng(3)
    shapes = {"q": (2, 2, 5, 8), "k": (2, 2, keys, 8), "v": (2, 2, keys, 8), "bias": (2, 1, 5, keys), "qbias": (2, 2, 5, 5)}
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}
    if poison is not None:
        feeds["q"][1, 0, 2, 1] = poison
    keep = np.ones((2, 1, 1, keys), bool)
    keep[1] = False
    return {**feeds, "keep": keep, "lengths": np.array([2, 3], np.int64)}


def _runtime_keys(static: int | None) -> onnx.ModelProto:
    from irforge.testing.fuzz_session10_ops import runtime_keys

    proto = onnx.load_from_string(runtime_keys())
    for value in proto.graph.input:
        for dim in value.type.tensor_type.shape.dim:
            if static is not None and dim.dim_param == "S":
                dim.dim_value = static
    return proto


def _fused(proto: onnx.ModelProto):  # type: ignore[no-untyped-def]
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    assert sum(op.name == "nn.scaled_dot_product_attention" for op in model.func.body.block.ops) == 3
    return model


@pytest.mark.parametrize("keys", [0, 3])
@pytest.mark.parametrize("poison", [None, np.inf, np.nan])
def test_run_time_keys_masked_throughout_are_the_mean_of_v(keys: int, poison: float | None) -> None:
    """rtkeys.onnx (session 12's open finding): a run-time key count S with a padding
    Where(keep, s, float32's min) masking every key of a batch whose scores are inf / NaN:
    onnxruntime's rows are the fill alone (the mean of v), the fused attention's were NaN on
    ref (8 values): `uniform_rows` was left out for a run-time S because S may be 0. It now
    applies (the max of no mask values is -inf, the mean of no values 0: the source's p @ v
    over no keys), at S = 3 and S = 0 alike."""
    from irforge.backends.reference import run
    from tests.helpers import ort_session_run

    proto = _runtime_keys(None)
    feeds = _runtime_keys_feeds(keys, poison)
    want = ort_session_run(proto, feeds)
    with np.errstate(all="ignore"):
        got = run(_fused(proto), feeds)
    for expected, output in zip(want, proto.graph.output):
        np.testing.assert_allclose(got[output.name], expected, rtol=1e-5, atol=1e-6)


def test_cpu_attention_over_no_keys_is_zero() -> None:
    """rtkeys.onnx with S fixed to 0: the CPU backend's blocked attention kernel divided its
    block by S (ZeroDivisionError, an internal error at compile). Over no keys the attention
    now takes the unblocked path, whose p @ v over K = 0 is onnxruntime's 0."""
    from irforge.backends.cpu import compile_model
    from tests.helpers import ort_session_run

    proto = _runtime_keys(0)
    feeds = _runtime_keys_feeds(0, np.inf)
    want = ort_session_run(proto, feeds)
    compiled = compile_model(_fused(proto), threads=1, cache_dir=False)
    try:
        with np.errstate(all="ignore"):
            got = compiled(feeds)
    finally:
        compiled.close()
    for expected, output in zip(want, proto.graph.output):
        np.testing.assert_allclose(got[output.name], expected, rtol=1e-4, atol=1e-5)


FMIN = float(np.finfo(np.float32).min)


def _padded_keys(drop: bool, after: str | None) -> onnx.ModelProto:
    """softmax(Where(pad, q @ k^T * 0.35, float32's min) [+ mask | / 2]) @ v with a run-time
    padding condition [1, 1, 1, 6] (Where(drop, fill, s) when `drop`)."""
    nodes = [helper.make_node("Mul", ["q", "c"], ["qs"]), helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["qs", "kt"], ["s"]),
             helper.make_node("Where", ["pad", "fill", "s"] if drop else ["pad", "s", "fill"], ["w"])]
    inits = [helper.make_tensor("c", T.FLOAT, [], [0.35]), helper.make_tensor("fill", T.FLOAT, [], [FMIN]),
             helper.make_tensor("two", T.FLOAT, [], [2.0])]
    inputs = [helper.make_tensor_value_info(n, T.FLOAT, [1, 2, 4 if n == "q" else 6, 8]) for n in "qkv"]
    inputs.append(helper.make_tensor_value_info("pad", T.BOOL, [1, 1, 1, 6]))
    last = "w"
    if after == "mask":
        nodes.append(helper.make_node("Add", ["w", "mask"], ["x"]))
        inputs.append(helper.make_tensor_value_info("mask", T.FLOAT, [1, 1, 4, 6]))
        last = "x"
    elif after == "halved":  # (the chain pattern's form)
        nodes.append(helper.make_node("Div", ["w", "two"], ["x"]))
        last = "x"
    nodes += [helper.make_node("Softmax", [last], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"])]
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", T.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    return model


@pytest.mark.parametrize(("drop", "after", "poison"), [(False, None, np.inf), (False, None, -np.inf), (True, None, np.nan),
                                                       (False, "mask", 1e38), (False, "halved", np.inf), (True, "halved", np.nan)])
def test_a_padded_key_with_a_non_finite_score_is_masked_exactly(tmp_path, drop: bool, after: str | None, poison: float) -> None:
    """Session 12's open finding: a partly masked row whose masked key has an inf / NaN /
    overflowing score (a padded key holding inf, NaN or 1e38: q . k overflows) and whose
    kept keys do not. onnxruntime's Where puts the
    fill there, the fused s + fill was NaN (or let the key through): every row off, on ref,
    cpu and OpenVINO. With a key-only (padding) condition the keys it masks are now 0 in k
    (`attention_exports.zero_masked_keys`, in the export pattern and the chain pattern), so
    s + fill is the fill exactly; the attention stays fused."""
    from tests.trust.test_session12_findings import _check_fused

    rng = np.random.default_rng(11)
    feeds = {n: rng.standard_normal((1, 2, 4 if n == "q" else 6, 8)).astype(np.float32) for n in "qkv"}
    pad = np.array([True, True, False, True, False, True]).reshape(1, 1, 1, 6)
    feeds["pad"] = ~pad if drop else pad
    feeds["k"][0, :, 2, :] = poison  # a padded key
    if after == "mask":
        feeds["mask"] = rng.uniform(-1, 0, (1, 1, 4, 6)).astype(np.float32)
    _check_fused(_padded_keys(drop, after), feeds, tmp_path)


@pytest.mark.parametrize("factor", [3.0, 0.5])
def test_a_fill_scaled_past_float32_is_not_taken_as_uniform_rows(factor: float) -> None:
    """fuzz_session12_ops' uniformrows.onnx with the 0.5 after Where(keep, s, float32's min)
    mutated to 3 (fuzz_numbers --only session12 --seed 1315 #227): the fill reaches the
    softmax as -inf, so a row the run-time condition masks throughout is NaN in onnxruntime;
    the chain pattern took it from the mean of v (16 values finite where the source's are
    NaN, ref and cpu). The mean of v now stands only for a fill finite at the softmax."""
    from tests.trust.test_session12_findings import _check_fused, _feeds, _where_attention

    proto = _where_attention(0.35, "scaled")
    for init in proto.graph.initializer:
        if init.name == "eighth":
            init.CopyFrom(helper.make_tensor("eighth", T.FLOAT, [], [factor]))
    _check_fused(proto, _feeds(7))


@pytest.mark.parametrize(("first", "op", "second"), [(3.0, "Mul", 0.1), (3.0, "Div", 10.0), (0.1, "Mul", 3.0), (0.5, "Div", 2.0)])
def test_a_fill_overflowing_partway_through_its_factors_is_not_taken_as_uniform_rows(first: float, op: str, second: str) -> None:
    """Session 13's leftover: `uniform_when_masked` checked float32's min times the product of
    the factors after the Where (3 * 0.1 = 0.3: finite), where the source rounds each step
    (min * 3 is -inf, -inf * 0.1 stays -inf): a row the run-time condition masks throughout
    is NaN in onnxruntime, the mean of v fused (ref and cpu). The fill is now followed step
    by step in the scores' dtype (`attention_chains.at_softmax`); 0.1 then 3, or / 2 after
    0.5, stay finite and keep the mean of v."""
    from tests.trust.test_session12_findings import _check_fused, _feeds, _where_attention

    proto = _where_attention(0.35, "scaled")
    for init in proto.graph.initializer:
        if init.name == "eighth":
            init.CopyFrom(helper.make_tensor("eighth", T.FLOAT, [], [first]))
    softmax = next(n for n in proto.graph.node if n.op_type == "Softmax")
    softmax.input[0] = "x2"
    proto.graph.node.insert(list(proto.graph.node).index(softmax), helper.make_node(op, ["x", "second"], ["x2"]))
    proto.graph.initializer.append(helper.make_tensor("second", T.FLOAT, [], [second]))
    feeds = _feeds(7)
    if first == 3.0:  # (the source's masked row is NaN: the test would pass vacuously otherwise)
        from tests.helpers import ort_session_run

        assert np.isnan(ort_session_run(proto, feeds)[0][0, :, 2]).all()
    _check_fused(proto, feeds)
