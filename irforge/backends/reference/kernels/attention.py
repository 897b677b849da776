"""Reference kernel of ScaledDotProductAttention, step by step as the opset13 pseudo-code."""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.attention import ScaledDotProductAttention


def attention_bias(op: ScaledDotProductAttention, mask: np.ndarray | None, rows: int, cols: int, dtype: np.dtype) -> np.ndarray:
    """What is added to the scaled scores: the causal triangle, the mask as -inf/0 (i1) or as
    it is (float), else 0."""
    if op.bool_prop("causal"):
        return np.triu(np.full((rows, cols), -np.inf, dtype), k=1)
    if mask is None:
        return np.zeros((), dtype)
    if mask.dtype == np.bool_:
        return np.where(mask, np.zeros((), dtype), np.array(-np.inf, dtype))
    return mask.astype(dtype, copy=False)


def masked_keys(op: ScaledDotProductAttention, mask: np.ndarray | None, rows: int, cols: int) -> np.ndarray:
    """Where the mask masks a key (for the `fill` property): above the causal diagonal, false
    in an i1 mask, at or below the fill in a float one (whose value is then the logit)."""
    if op.bool_prop("causal"):
        return np.triu(np.ones((rows, cols), bool), k=1)
    if mask is None:
        return np.zeros((), bool)
    return ~mask if mask.dtype == np.bool_ else mask <= np.array(op.masked_fill(), mask.dtype)


@kernel(ScaledDotProductAttention)
def scaled_dot_product_attention(
    op: ScaledDotProductAttention,
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    mask: np.ndarray | None = None,
    scale: np.ndarray | None = None,
) -> np.ndarray:
    dtype = q.dtype
    static = op.static_scale()
    if scale is not None:
        factor = np.asarray(scale, dtype).reshape(())
    else:  # E known only at run time: 1 / sqrt(E) of the array (np.asarray(None) was NaN: every row NaN)
        factor = np.asarray(static if static is not None else 1.0 / np.sqrt(q.shape[-1]), dtype)
    scores = np.matmul(q, np.swapaxes(k, -1, -2)) * factor
    scores = scores + attention_bias(op, mask, q.shape[-2], k.shape[-2], dtype)
    fill = op.masked_fill()
    if fill is not None:  # a masked key's logit is the fill, whatever its score (the source's Where)
        masked = masked_keys(op, mask, q.shape[-2], k.shape[-2])
        # a float mask's own value where it masks; the fill for an i1 mask and for the causal
        # triangle (a causal op ignores its mask: the fill, as cpu and the docstring have it)
        floats = mask is not None and mask.dtype != np.bool_ and not op.bool_prop("causal")
        value = mask.astype(dtype, copy=False) if floats else np.array(fill, dtype)
        scores = np.where(masked, value, scores)
    if scores.shape[-1] == 0:
        # no keys (an empty KV cache at run time): softmax over nothing, p @ v = 0, as
        # onnxruntime's unfused graph gives (np.max of the empty rows raised: internal error)
        return np.matmul(scores, v)
    # shift by the row max so exp neither overflows nor underflows to all zeros; a row of
    # -inf only (everything masked) stays NaN, as the opset's Softmax gives
    shift = np.max(scores, axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(shift), shift, 0))
    with np.errstate(invalid="ignore"):
        probs = e / np.sum(e, axis=-1, keepdims=True)
    return np.matmul(probs, v)
