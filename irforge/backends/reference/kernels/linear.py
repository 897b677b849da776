"""Reference kernels of the linear ops: fully connected, matmul, scale-shift, batch
normalization and power."""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.linear import BatchNormalization, FullyConnected, MatMul, Power, ScaleShift


def along_axis(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """A 1-D array reshaped to broadcast along `axis` of an `ndim`-D array."""
    return values.reshape((1,) * axis + (-1,) + (1,) * (ndim - axis - 1))


@kernel(FullyConnected)
def fully_connected(op: FullyConnected, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    y = np.matmul(x, w.T)
    return y if b is None else y + b


def transposed(x: np.ndarray, flag: bool) -> np.ndarray:
    """`x` with its last two axes swapped when `flag` (1-D arrays are left as they are)."""
    return np.swapaxes(x, -1, -2) if flag and x.ndim >= 2 else x


@kernel(MatMul)
def matmul(op: MatMul, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.matmul(transposed(a, op.bool_prop("transpose_a")), transposed(b, op.bool_prop("transpose_b")))


@kernel(ScaleShift)
def scale_shift(op: ScaleShift, x: np.ndarray, scale: np.ndarray, shift: np.ndarray) -> np.ndarray:
    axis = op.channel_axis()
    return x * along_axis(scale, axis, x.ndim) + along_axis(shift, axis, x.ndim)


@kernel(BatchNormalization)
def batch_norm(
    op: BatchNormalization,
    x: np.ndarray,
    gamma: np.ndarray,
    beta: np.ndarray,
    mean: np.ndarray,
    variance: np.ndarray,
) -> np.ndarray:
    factor = gamma / np.sqrt(variance + np.asarray(op.float_prop("epsilon"), variance.dtype))
    return (x - along_axis(mean, 1, x.ndim)) * along_axis(factor, 1, x.ndim) + along_axis(beta, 1, x.ndim)


@kernel(Power)
def power(op: Power, x: np.ndarray) -> np.ndarray:
    # integers are raised in float64 (a fractional or negative power leaves the integers)
    base = x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float64)
    exponent, scale, shift = (np.asarray(op.float_prop(p), base.dtype) for p in ("power", "scale", "shift"))
    with np.errstate(all="ignore"):
        return scale * np.power(base, exponent) + shift
