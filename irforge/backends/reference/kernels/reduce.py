"""Reference kernels of the reductions: nn.reduce and nn.argmax."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.reduce import ArgMax, Reduce


def _lowest(dtype: np.dtype) -> object:
    """The identity of max: what the max of an empty set is (ONNX: -inf, or the type's minimum)."""
    if dtype == np.bool_:
        return False
    return -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def _highest(dtype: np.dtype) -> object:
    if dtype == np.bool_:
        return True
    return np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).max


def _log_sum_exp(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    # shift by the max so exp neither overflows nor underflows to all zeros
    shift = np.max(x, axis=axes, keepdims=True, initial=_lowest(x.dtype))
    shift = np.where(np.isfinite(shift), shift, 0)
    return np.log(np.sum(np.exp(x - shift), axis=axes, keepdims=True)) + shift


def _mean(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    # over no elements onnxruntime gives 0 (numpy: nan with a warning)
    if x.size == 0 or any(x.shape[a] == 0 for a in axes):
        return np.sum(x, axis=axes, keepdims=True)
    return np.mean(x, axis=axes, keepdims=True)


_REDUCTIONS: dict[str, Callable[[np.ndarray, tuple[int, ...]], np.ndarray]] = {
    "mean": _mean,
    "sum": lambda x, axes: np.sum(x, axis=axes, keepdims=True),
    "max": lambda x, axes: np.max(x, axis=axes, keepdims=True, initial=_lowest(x.dtype)),
    "min": lambda x, axes: np.min(x, axis=axes, keepdims=True, initial=_highest(x.dtype)),
    "prod": lambda x, axes: np.prod(x, axis=axes, keepdims=True),
    "l1": lambda x, axes: np.sum(np.abs(x), axis=axes, keepdims=True),
    "l2": lambda x, axes: np.sqrt(np.sum(np.square(x), axis=axes, keepdims=True)),
    "sum_square": lambda x, axes: np.sum(np.square(x), axis=axes, keepdims=True),
    "log_sum": lambda x, axes: np.log(np.sum(x, axis=axes, keepdims=True)),
    "log_sum_exp": _log_sum_exp,
}


@kernel(Reduce)
def reduce(op: Reduce, x: np.ndarray) -> np.ndarray:
    axes = op.reduced_axes()
    out = _REDUCTIONS[op.str_prop("operation")](x, axes)
    return out if op.bool_prop("keep_dims") else np.squeeze(out, axis=axes)


@kernel(ArgMax)
def argmax(op: ArgMax, x: np.ndarray) -> np.ndarray:
    axis = op.reduced_axis()
    pick = np.argmax if op.str_prop("mode") == "max" else np.argmin
    if op.bool_prop("select_last_index"):
        index = x.shape[axis] - 1 - pick(np.flip(x, axis=axis), axis=axis)
    else:
        index = pick(x, axis=axis)
    return np.expand_dims(index, axis) if op.bool_prop("keep_dims") else index
