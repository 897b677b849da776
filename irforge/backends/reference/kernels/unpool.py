"""Reference kernels of max pooling's indices and max unpooling."""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.kernels.conv import lowest, pooling_windows
from irforge.backends.reference.kernels.indexing import checked
from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.unpool import MaxPoolIndices, MaxUnpool


@kernel(MaxPoolIndices)
def max_pool_indices(op: MaxPoolIndices, x: np.ndarray) -> np.ndarray:
    # the same windows over the values and over their flat positions (padding: -1, never
    # chosen over a real element since it pads the values with the lowest value, and argmax
    # takes the first of equal maxima, as Caffe's strict `>` scan does)
    spatial = x.shape[2:]
    plane = int(np.prod(spatial))
    positions = np.arange(plane, dtype=np.int64).reshape((1, 1, *spatial))
    axis = op.int_prop("axis")
    if axis < 2:  # flat over channels (axis 1) or the whole tensor (axis 0)
        channels = np.arange(x.shape[1], dtype=np.int64).reshape(1, -1, *(1,) * len(spatial)) * plane
        positions = positions + channels
        if axis == 0:
            positions = positions + np.arange(x.shape[0], dtype=np.int64).reshape(-1, *(1,) * (x.ndim - 1)) * plane * x.shape[1]
    positions = np.broadcast_to(positions, x.shape)
    values = pooling_windows(op, x, lowest(x.dtype), lowest(x.dtype))  # type: ignore[arg-type]
    where = pooling_windows(op, positions, -1, -1)  # type: ignore[arg-type]
    rank = len(op.ints("kernel"))
    flat_values = values.reshape(*values.shape[: values.ndim - rank], -1)
    flat_where = where.reshape(*where.shape[: where.ndim - rank], -1)
    best = np.argmax(flat_values, axis=-1)[..., None]
    return np.take_along_axis(flat_where, best, axis=-1)[..., 0].astype(np.int64)


@kernel(MaxUnpool)
def max_unpool(op: MaxUnpool, x: np.ndarray, indices: np.ndarray) -> np.ndarray:
    n, c = x.shape[:2]
    spatial = op.ints("spatial")
    plane = int(np.prod(spatial))
    out = np.zeros((n, c, plane), x.dtype)
    idx = checked(op, indices.reshape(n, c, -1), plane)
    # numpy assigns in order, so of two equal indices the later write wins (Caffe's loop)
    np.put_along_axis(out, idx, x.reshape(n, c, -1), axis=2)
    return out.reshape(n, c, *spatial)
