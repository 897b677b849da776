"""Reference kernels of the data movement family: concat, split, reshape, flatten, permute,
squeeze, unsqueeze, slice, tile, pad and gather."""

from __future__ import annotations

import math

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.shape import (
    Concat,
    Flatten,
    Gather,
    Pad,
    Permute,
    Reshape,
    Slice,
    Split,
    Squeeze,
    Tile,
    Unsqueeze,
)
from irforge.errors import IrforgeError


@kernel(Concat)
def concat(op: Concat, *inputs: np.ndarray) -> np.ndarray:
    return np.concatenate(inputs, axis=op.int_prop("axis"))


@kernel(Split)
def split(op: Split, x: np.ndarray) -> list[np.ndarray]:
    offsets = np.cumsum(op.ints("split_lengths"))[:-1]
    return np.split(x, offsets, axis=op.int_prop("axis"))


@kernel(Reshape)
def reshape(op: Reshape, x: np.ndarray) -> np.ndarray:
    return x.reshape(op.target_shape(x.shape))


@kernel(Flatten)
def flatten(op: Flatten, x: np.ndarray) -> np.ndarray:
    axis = op.flatten_axis()
    return x.reshape(math.prod(x.shape[:axis]), math.prod(x.shape[axis:]))


@kernel(Permute)
def permute(op: Permute, x: np.ndarray) -> np.ndarray:
    return np.transpose(x, op.ints("order"))


@kernel(Squeeze)
def squeeze(op: Squeeze, x: np.ndarray) -> np.ndarray:
    return np.squeeze(x, axis=op.squeezed_axes())


@kernel(Unsqueeze)
def unsqueeze(op: Unsqueeze, x: np.ndarray) -> np.ndarray:
    return x.reshape(op.expanded_shape(x.shape))


@kernel(Slice)
def slice_(op: Slice, x: np.ndarray) -> np.ndarray:
    # a stop of -1 (negative step) means "past the first element", which Python spells None
    index = tuple(slice(start, None if stop < 0 else stop, step) for start, stop, step in op.bounds(x.shape))
    return x[index]


@kernel(Tile)
def tile(op: Tile, x: np.ndarray) -> np.ndarray:
    return np.tile(x, op.ints("repeats"))


@kernel(Pad)
def pad(op: Pad, x: np.ndarray) -> np.ndarray:
    widths = list(zip(op.ints("pads_begin"), op.ints("pads_end")))
    mode = op.str_prop("mode")
    if mode == "constant":
        value = np.array(op.float_prop("value")).astype(x.dtype)
        return np.pad(x, widths, mode="constant", constant_values=value)
    return np.pad(x, widths, mode=mode)


@kernel(Gather)
def gather(op: Gather, data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    axis, batch_dims = op.gather_axes()
    size = data.shape[axis]
    index = indices.astype(np.int64)
    if np.any((index < -size) | (index >= size)):
        raise IrforgeError(f"{op.label}: indices must be in [{-size}, {size - 1}] for axis {axis}", code="E858")
    index = np.where(index < 0, index + size, index)
    batch, before, after = data.shape[:batch_dims], data.shape[batch_dims:axis], data.shape[axis + 1 :]
    n_batch, n_before = math.prod(batch), math.prod(before)
    # data as [B, P, size, S] and indices as [B, I]: out[b, p, i] = data[b, p, index[b, i]]
    grid = data.reshape(n_batch, n_before, size, math.prod(after))
    flat = index.reshape(n_batch, math.prod(indices.shape[batch_dims:]))
    out = grid[np.arange(n_batch)[:, None, None], np.arange(n_before)[None, :, None], flat[:, None, :]]
    return out.reshape(batch + before + indices.shape[batch_dims:] + after)
