"""Reference kernels of the normalisations: softmax, LRN, MVN, Normalize and GRN."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from irforge.backends.reference.kernels.linear import along_axis
from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.normalization import GRN, MVN, Norm, Normalize, SoftMax


def scalar(op: SoftMax | Norm | MVN | Normalize | GRN, prop: str, x: np.ndarray) -> np.ndarray:
    """A float property in the element type of `x` (float64 for non-float `x`)."""
    dtype = x.dtype if np.issubdtype(x.dtype, np.floating) else np.float64
    return np.asarray(op.float_prop(prop), dtype)


@kernel(SoftMax)
def softmax(op: SoftMax, x: np.ndarray) -> np.ndarray:
    axis = op.softmax_axis()
    if x.size == 0:  # an empty tensor (a run-time dim of 0): nothing to normalise, np.max has no identity
        return x.copy()
    # shift by the max so exp neither overflows nor underflows to all zeros; a row of -inf
    # stays 0 / 0 = NaN, and a row holding +inf is NaN throughout (inf - inf), as ONNX's
    # x - max(x) defines it and onnxruntime computes it (a NaN guard after it sees the row)
    shift = np.max(x, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = x - np.where(shift == -np.inf, 0, shift)
        e = np.exp(z)
        total = np.sum(e, axis=axis, keepdims=True)
        return z - np.log(total) if op.bool_prop("log") else e / total


def window_sums(squares: np.ndarray, axes: tuple[int, ...], before: int, after: int) -> np.ndarray:
    """Sums over windows reaching `before` and `after` positions along each of `axes`
    (zeros beyond the edges), of the shape of `squares`."""
    widths = [(before, after) if i in axes else (0, 0) for i in range(squares.ndim)]
    view = sliding_window_view(np.pad(squares, widths), (before + after + 1,) * len(axes), axis=axes)
    return view.sum(axis=tuple(range(-len(axes), 0)))


@kernel(Norm)
def lrn(op: Norm, x: np.ndarray) -> np.ndarray:
    axes = op.window_axes()
    sums = window_sums(np.square(x), axes, *op.window_extent())
    count = op.int_prop("size") ** len(axes)
    alpha = np.asarray(op.float_prop("alpha") / count, x.dtype)
    return x / (scalar(op, "bias", x) + alpha * sums) ** scalar(op, "beta", x)


@kernel(MVN)
def mvn(op: MVN, x: np.ndarray) -> np.ndarray:
    axes = op.reduced_axes()
    centred = x - np.mean(x, axis=axes, keepdims=True)
    if not op.bool_prop("normalize_variance"):
        return centred
    variance = np.mean(np.square(centred), axis=axes, keepdims=True)
    eps = scalar(op, "eps", x)
    if op.str_prop("eps_mode") == "inside_sqrt":
        return centred / np.sqrt(variance + eps)
    return centred / (np.sqrt(variance) + eps)


@kernel(Normalize)
def normalize(op: Normalize, x: np.ndarray, scale: np.ndarray | None = None) -> np.ndarray:
    sums = np.sum(np.square(x), axis=op.norm_axes(), keepdims=True)
    y = x / np.sqrt(sums + scalar(op, "eps", x))
    return y if scale is None else y * along_axis(scale, 1, x.ndim)


@kernel(GRN)
def grn(op: GRN, x: np.ndarray) -> np.ndarray:
    sums = np.sum(np.square(x), axis=1, keepdims=True)
    return x / np.sqrt(sums + scalar(op, "bias", x))
