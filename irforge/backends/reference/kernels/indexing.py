"""Reference kernels of the indexing family: gathers, scatters, OneHot, NonZero, TopK, CumSum,
Range, IsNaN and IsInf."""

from __future__ import annotations

import math

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.indexing import (
    BroadcastTo,
    ReshapeTo,
    CumSum,
    GatherElements,
    GatherND,
    IsInf,
    IsNaN,
    NonZero,
    OneHot,
    Range,
    ScatterElements,
    ScatterND,
    ShapeOf,
    PadBy,
    SliceTo,
    TopK,
)
from irforge.errors import IrforgeError
from irforge.backends.reference.run_time_sizes import check_output_size

REDUCE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def checked(op, indices: np.ndarray, size: int | np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Indices made non-negative; any outside [-size, size) is an error naming the op."""
    indices = np.asarray(indices, np.int64)
    bad = (indices < -size) | (indices >= size)
    if np.any(bad):
        raise IrforgeError(
            f"{op.label}: index {int(indices[bad].flat[0])} is out of range for a dim of size {int(np.broadcast_to(size, bad.shape)[bad].flat[0])}",
            fix="check the indices the model computes",
            code="E880",
        )
    return np.where(indices < 0, indices + size, indices)


@kernel(GatherElements)
def gather_elements(op: GatherElements, data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    axis = op.int_prop("axis") % data.ndim
    # the indices' other dims may be smaller than data's: index with a full coordinate grid
    coords = list(np.indices(indices.shape, sparse=True))
    coords[axis] = checked(op, indices, data.shape[axis])
    return data[tuple(coords)]


def nd_rows(op, data: np.ndarray, indices: np.ndarray, batch_dims: int) -> tuple[np.ndarray, tuple[int, ...]]:  # type: ignore[no-untyped-def]
    """Flat row numbers into data viewed as [prod(batch + indexed dims), rest...], one per index
    tuple, and the shape of the rows."""
    m = indices.shape[-1]
    batch, indexed = data.shape[:batch_dims], data.shape[batch_dims : batch_dims + m]
    idx = checked(op, indices, np.array(indexed, np.int64)) if m else indices.astype(np.int64)
    flat = np.ravel_multi_index(tuple(np.moveaxis(idx, -1, 0)), indexed) if m else np.zeros(indices.shape[:-1], np.int64)
    n_batch = int(np.prod(batch, dtype=np.int64))
    offsets = (np.arange(n_batch, dtype=np.int64) * int(np.prod(indexed, dtype=np.int64))).reshape(batch + (1,) * (indices.ndim - 1 - batch_dims))
    return flat + offsets, data.shape[batch_dims + m :]


@kernel(GatherND)
def gather_nd(op: GatherND, data: np.ndarray, indices: np.ndarray) -> np.ndarray:
    rows, rest = nd_rows(op, data, indices, op.int_prop("batch_dims"))
    # the row count spelled out: -1 is ambiguous when a dim of `rest` is 0
    return data.reshape((math.prod(data.shape[: data.ndim - len(rest)]), *rest))[rows]


@kernel(ScatterND)
def scatter_nd(op: ScatterND, data: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    rows, rest = nd_rows(op, data, indices, 0)
    out = data.copy().reshape((math.prod(data.shape[: data.ndim - len(rest)]), *rest))  # not -1: a dim of rest may be 0
    updates = updates.reshape((math.prod(updates.shape[: updates.ndim - len(rest)]), *rest))
    reduction = op.str_prop("reduction")
    for row, update in zip(rows.reshape(-1), updates):  # in order: later updates win, as ONNX says
        out[row] = update if reduction == "none" else REDUCE[reduction](out[row], update)
    return out.reshape(data.shape)


@kernel(ScatterElements)
def scatter_elements(op: ScatterElements, data: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    axis = op.int_prop("axis") % data.ndim
    idx = checked(op, indices, data.shape[axis])
    coords = list(np.indices(idx.shape, sparse=True))
    coords[axis] = idx
    out = data.copy()
    reduction = op.str_prop("reduction")
    if reduction == "none":
        out[tuple(coords)] = updates  # numpy assigns in order, so the last duplicate wins
    else:
        REDUCE[reduction].at(out, tuple(coords), updates)
    return out


@kernel(OneHot)
def one_hot(op: OneHot, indices: np.ndarray, on: np.ndarray, off: np.ndarray) -> np.ndarray:
    depth = op.int_prop("depth")
    axis = op.int_prop("axis") % (indices.ndim + 1)
    idx = np.asarray(indices, np.int64)
    idx = np.where(idx < 0, idx + depth, idx)
    positions = np.arange(depth).reshape((depth,) + (1,) * idx.ndim)
    hot = np.moveaxis(positions == idx[None], 0, axis)
    return np.where(hot, on, off).astype(on.dtype)


@kernel(NonZero)
def non_zero(op: NonZero, x: np.ndarray) -> np.ndarray:
    return np.array(np.nonzero(x), np.int64).reshape(x.ndim, -1)


@kernel(TopK)
def top_k(op: TopK, x: np.ndarray, k_value: np.ndarray | None = None) -> list[np.ndarray]:
    axis, k = op.int_prop("axis") % x.ndim, op.int_prop("k")
    if k_value is not None:
        k = int(np.asarray(k_value).reshape(-1)[0])
        if not 0 <= k <= x.shape[axis]:
            raise IrforgeError(f"{op.label}: k {k} is outside [0, {x.shape[axis]}] (the size of axis {axis})",
                               fix="check the k the model computes", code="E886")
    floating = np.issubdtype(x.dtype, np.floating)
    # ~x reverses the order of any integer type without overflow (-x wraps unsigned values)
    keys = (-x if floating else ~x) if op.str_prop("mode") == "max" else x
    if floating:
        keys = np.where(np.isnan(x), -np.inf if op.str_prop("mode") == "min" else np.inf, keys)  # NaN last
    order = np.argsort(keys, axis=axis, kind="stable")  # ties by lower index
    chosen = np.take(order, np.arange(k), axis=axis)
    if op.str_prop("sort") == "index":
        chosen = np.sort(chosen, axis=axis)
    return [np.take_along_axis(x, chosen, axis=axis), chosen.astype(np.int64)]


@kernel(CumSum)
def cum_sum(op: CumSum, x: np.ndarray) -> np.ndarray:
    axis = op.int_prop("axis") % x.ndim
    y = np.flip(x, axis) if op.bool_prop("reverse") else x
    sums = np.cumsum(y, axis=axis, dtype=x.dtype)
    if op.bool_prop("exclusive"):
        sums = sums - y
    return np.flip(sums, axis) if op.bool_prop("reverse") else sums


@kernel(Range)
def range_(op: Range, start: np.ndarray, limit: np.ndarray, delta: np.ndarray) -> np.ndarray:
    if delta == 0:
        raise IrforgeError(f"{op.label}: delta is 0", fix="check the range the model computes", code="E881")
    count = max(int(np.ceil((limit - start) / delta)), 0)
    return (start + np.arange(count) * delta).astype(start.dtype)


@kernel(IsNaN)
def is_nan(op: IsNaN, x: np.ndarray) -> np.ndarray:
    return np.isnan(x) if np.issubdtype(x.dtype, np.floating) else np.zeros(x.shape, bool)


@kernel(IsInf)
def is_inf(op: IsInf, x: np.ndarray) -> np.ndarray:
    if not np.issubdtype(x.dtype, np.floating):
        return np.zeros(x.shape, bool)
    return (np.isposinf(x) & op.bool_prop("detect_positive")) | (np.isneginf(x) & op.bool_prop("detect_negative"))


@kernel(ShapeOf)
def shape_of(op: ShapeOf, x: np.ndarray) -> np.ndarray:
    return np.array(x.shape, np.int64)


@kernel(BroadcastTo)
def broadcast_to(op: BroadcastTo, x: np.ndarray, target: np.ndarray) -> np.ndarray:
    dims = tuple(int(d) for d in np.asarray(target).reshape(-1))
    try:
        shape = np.broadcast_shapes(x.shape, dims)
    except ValueError:
        raise IrforgeError(f"{op.label}: shape {list(x.shape)} does not broadcast to {list(dims)}",
                           fix="check the shape the model computes", code="E887") from None
    check_output_size(op.label, shape, x.dtype)
    return np.ascontiguousarray(np.broadcast_to(x, shape))


@kernel(ReshapeTo)
def reshape_to(op: ReshapeTo, x: np.ndarray, target: np.ndarray) -> np.ndarray:
    spec = [int(d) for d in np.asarray(target).reshape(-1)]
    special_zero = op.bool_prop("special_zero")

    def refuse(why: str) -> IrforgeError:
        return IrforgeError(f"{op.label}: shape {spec} {why} (input {list(x.shape)})",
                            fix="check the shape the model computes", code="E885")

    if any(d < -1 for d in spec) or spec.count(-1) > 1:
        raise refuse("holds a value below -1 or more than one -1")
    if special_zero and any(d == 0 and i >= x.ndim for i, d in enumerate(spec)):
        raise refuse("copies a dim (0) beyond the input rank")
    dims = [x.shape[i] if d == 0 and special_zero else d for i, d in enumerate(spec)]
    if -1 in dims:
        rest = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
        if rest == 0 or x.size % rest:
            raise refuse("cannot hold the elements")
        dims[dims.index(-1)] = x.size // rest
    if int(np.prod(dims, dtype=np.int64)) != x.size:
        raise refuse("cannot hold the elements")
    return x.reshape(dims)


@kernel(SliceTo)
def slice_to(op: SliceTo, x: np.ndarray, begins: np.ndarray, ends: np.ndarray) -> np.ndarray:
    from irforge.dialects.nn.shape import slice_bounds

    index = [slice(None)] * x.ndim
    for axis, begin, end, step in zip(op.sliced_axes(), begins.reshape(-1), ends.reshape(-1), op.step_values()):
        start, stop = slice_bounds(x.shape[axis], int(begin), int(end), step)
        # a stop of -1 (negative step) means "past the first element", which Python spells None
        index[axis] = slice(start, None if stop < 0 else stop, step)
    return x[tuple(index)]


@kernel(PadBy)
def pad_by(op: PadBy, x: np.ndarray, pads: np.ndarray) -> np.ndarray:
    """Pads the positive amounts (mirroring or repeating the input's own edges), then crops
    the negative ones off the result, as OpenVINO's Pad-12 and onnxruntime do."""
    values = [int(p) for p in np.asarray(pads).reshape(-1)]
    begin, end, mode = values[: x.ndim], values[x.ndim :], op.str_prop("mode")
    for axis, (size, b, e) in enumerate(zip(x.shape, begin, end)):
        pad = max(b, e, 0)
        if pad and ((mode == "reflect" and pad >= size) or (mode == "symmetric" and pad > size) or (mode == "edge" and size == 0)):
            raise IrforgeError(f"{op.label}: {mode} padding of {pad} does not fit dim {axis} of size {size} (pads {values})",
                               fix="check the pads the model computes", code="E152")
    out_dims = [max(d + b + e, 0) for d, b, e in zip(x.shape, begin, end)]
    check_output_size(op.label, out_dims, x.dtype)
    widths = [(max(b, 0), max(e, 0)) for b, e in zip(begin, end)]
    if mode == "constant":
        out = np.pad(x, widths, mode="constant", constant_values=np.array(op.float_prop("value")).astype(x.dtype))
    else:
        out = np.pad(x, widths, mode=mode)
    crop = []
    for size, b, e in zip(out.shape, begin, end):
        start = max(-b, 0)
        crop.append(slice(start, max(size - max(-e, 0), start)))  # a crop past the other end leaves it empty
    return np.ascontiguousarray(out[tuple(crop)])
