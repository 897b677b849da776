"""nn.scaled_dot_product_attention: shape inference, verifier, numerics against an
independent numpy loop and against onnxruntime running the decomposed ONNX graph."""

import math

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import ScaledDotProductAttention as SDPA
from irforge.dialects.nn.base import DYN
from tests.attention_support import attention_feeds, decomposed_attention
from tests.helpers import ort_session_run, rand, run_op


def loop_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float, bias: np.ndarray | None = None) -> np.ndarray:
    """Row by row in float64, batch axes broadcast by hand: an independent formulation."""
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    out = np.zeros((*batch, q.shape[-2], v.shape[-1]))
    for index in np.ndindex(*batch):
        pick = lambda a: a[tuple(i if n > 1 else 0 for i, n in zip(index[len(index) - a.ndim + 2:], a.shape[:-2]))]  # noqa: E731
        qm, km, vm = pick(q).astype(np.float64), pick(k).astype(np.float64), pick(v).astype(np.float64)
        for row in range(qm.shape[0]):
            logits = np.array([qm[row] @ km[col] * scale for col in range(km.shape[0])])
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (*batch, q.shape[-2], k.shape[-2]))[index][row]
            weights = np.exp(logits - logits.max())
            out[index][row] = (weights / weights.sum()) @ vm
    return out.astype(np.float32)


def infer(shapes, dtypes=None, **props) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    dtypes = dtypes or [np.float32] * len(shapes)
    operands = [b.input(f"x{i}", shape, dtype) for i, (shape, dtype) in enumerate(zip(shapes, dtypes))]
    return tuple(b.add(SDPA, operands, name="attn", **props).output.type.get_shape())


# -- numerics ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "q, k, v",
    [((1, 4, 8, 16), (1, 4, 8, 16), (1, 4, 8, 16)), ((2, 3, 5, 6), (2, 3, 7, 6), (2, 3, 7, 4)), ((2, 1, 5, 6), (1, 3, 7, 6), (3, 7, 2))],
    ids=["self", "cross", "broadcast-batch"],
)
def test_default_scale_matches_a_numpy_loop(q, k, v):
    arrays = [rand(*s, seed=i) for i, s in enumerate((q, k, v))]
    (got,) = run_op(SDPA, arrays)
    want = loop_attention(*arrays, scale=1 / math.sqrt(q[-1]))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_float_mask_and_scale_property_match_a_numpy_loop():
    q, k, v, mask = rand(2, 2, 4, 8, seed=1), rand(2, 2, 6, 8, seed=2), rand(2, 2, 6, 3, seed=3), rand(4, 6, seed=4, low=-3, high=0)
    (got,) = run_op(SDPA, [q, k, v, mask], scale=0.7)
    np.testing.assert_allclose(got, loop_attention(q, k, v, 0.7, mask), rtol=1e-5, atol=1e-6)


def test_scale_operand_is_the_scale():
    q, k, v = rand(1, 2, 3, 4, seed=1), rand(1, 2, 5, 4, seed=2), rand(1, 2, 5, 4, seed=3)
    zero, scale = np.zeros((), np.float32), np.array([0.3], np.float32)
    (got,) = run_op(SDPA, [q, k, v, zero, scale])
    (want,) = run_op(SDPA, [q, k, v], scale=0.3)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def run_like_onnx(shapes, factor: float, mask: np.ndarray | None = None, causal: bool = False, **props) -> None:  # type: ignore[no-untyped-def]
    proto = decomposed_attention(shapes, factor, mask=mask, causal=causal)
    feeds = attention_feeds(shapes, mask)
    (want,) = ort_session_run(proto, feeds)
    inputs = [feeds[n] for n in ("q", "k", "v", "mask") if n in feeds]
    (got,) = run_op(SDPA, inputs, causal=causal, **props)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


SHAPES = ((2, 4, 6, 8), (2, 4, 9, 8), (2, 4, 9, 5))


def test_matches_onnxruntime_decomposed():
    run_like_onnx(SHAPES, 1 / math.sqrt(8))


def test_explicit_scale_matches_onnxruntime_decomposed():
    run_like_onnx(SHAPES, 0.125, scale=0.125)


def test_additive_mask_matches_onnxruntime_decomposed():
    mask = np.random.default_rng(5).uniform(-4, 0, (2, 1, 6, 9)).astype(np.float32)
    run_like_onnx(SHAPES, 1 / math.sqrt(8), mask)


def test_boolean_mask_matches_onnxruntime_decomposed():
    mask = np.random.default_rng(6).uniform(size=(6, 9)) < 0.6
    mask[:, 0] = True  # every row attends somewhere (an all-false row is NaN on both sides)
    run_like_onnx(SHAPES, 1 / math.sqrt(8), mask)


def test_causal_matches_onnxruntime_decomposed():
    shapes = ((1, 2, 7, 4), (1, 2, 7, 4), (1, 2, 7, 4))
    run_like_onnx(shapes, 1 / math.sqrt(4), causal=True)


def test_causal_ignores_the_mask():
    q, k, v = rand(1, 1, 4, 4, seed=1), rand(1, 1, 4, 4, seed=2), rand(1, 1, 4, 4, seed=3)
    (with_mask,) = run_op(SDPA, [q, k, v, rand(4, 4, seed=9)], causal=True)
    (without,) = run_op(SDPA, [q, k, v], causal=True)
    np.testing.assert_array_equal(with_mask, without)


def test_fully_masked_row_is_nan_as_in_openvino():
    q = k = v = rand(1, 1, 2, 4, seed=1)
    mask = np.array([[True, True], [False, False]])
    (got,) = run_op(SDPA, [q, k, v, mask])
    assert np.isfinite(got[0, 0, 0]).all() and np.isnan(got[0, 0, 1]).all()


# -- shapes and verifier -------------------------------------------------------------------
def test_infers_shapes():
    assert infer([(2, 4, 6, 8), (2, 4, 9, 8), (2, 4, 9, 5)]) == (2, 4, 6, 5)
    assert infer([(2, 1, 6, 8), (1, 3, 9, 8), (3, 9, 5)]) == (2, 3, 6, 5)
    assert infer([(DYN, 4, DYN, 8), (DYN, 4, DYN, 8), (DYN, 4, DYN, 8)]) == (DYN, 4, DYN, 8)
    assert infer([(1, 6, 8), (1, 9, 8), (1, 9, 5), (2, 6, 9)]) == (2, 6, 5)  # the mask broadcasts
    assert infer([(1, 6, 8), (1, 9, 8), (1, 9, 5), (2, 6, 9)], causal=True) == (1, 6, 5)  # ignored


@pytest.mark.parametrize(
    "shapes, dtypes, props, message",
    [
        ([(6, 8), (9, 8), (9, 5)], None, {}, r"query must have rank >= 3 \(\[N, ..., rows, columns\]\), got 2"),
        ([(1, 6, 8), (1, 9, 7), (1, 9, 5)], None, {}, r"query has 8 features per row but key has 7 \(\[1, 6, 8\] vs \[1, 9, 7\]\)"),
        ([(1, 6, 8), (1, 9, 8), (1, 4, 5)], None, {}, "key has 9 rows but value has 4"),
        ([(1, 6, 8), (1, 9, 8), (1, 9, 5)], [np.float32, np.float16, np.float32], {}, "key has element type f16, query f32"),
        ([(2, 6, 8), (3, 9, 8), (1, 9, 5)], None, {}, r"shapes \[2\] and \[3\] cannot be broadcast"),
        ([(1, 6, 8), (1, 9, 8), (1, 9, 5), (6, 9)], [np.float32] * 3 + [np.int32], {}, "mask must be i1 or f32, got i32"),
        ([(1, 6, 8), (1, 9, 8), (1, 9, 5), (6, 4)], None, {}, r"shapes \[1, 6, 9\] and \[1, 6, 4\] cannot be broadcast"),
        ([(1, 6, 8), (1, 9, 8), (1, 9, 5), (), (2,)], None, {}, r"scale operand must be one f32 value \(rank 0 or \[1\]\)"),
        ([(1, 6, 8), (1, 9, 8), (1, 9, 5), (), ()], None, {"scale": 0.5}, "scale is given both as a property and as an operand"),
        ([(1, 6, 8), (1, 9, 8), (1, 9, 5), (), (), ()], None, {}, r"expected at most 5 operands \(q, k, v, mask, scale\), got 6"),
        ([(1, 6, 8), (1, 9, 8), (1, 9, 5)], None, {"scale": math.inf}, "scale must be finite, got inf"),
    ],
)
def test_rejects(shapes, dtypes, props, message):
    with pytest.raises(VerifyException, match=f"nn.scaled_dot_product_attention 'attn': {message}"):
        infer(shapes, dtypes, **props)
