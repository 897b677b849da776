"""ONNX TensorScatter (opset 24): the KV-cache update of LLM exports, as one nn.scatter_elements.

    present = TensorScatter(past_cache, update, write_indices, axis, mode)

writes update[b, ..., s, ...] at position write_indices[b] + s of `axis` in batch row b of
a copy of past_cache (modulo the cache length when mode is "circular"). That is OpenVINO's
ScatterElementsUpdate-12 with indices of the update's shape:

    index[b, ..., s, ...] = write_indices[b] + s            (linear)
                          = (write_indices[b] + s) mod M    (circular, M = past_cache dim)

A negative start (onnxruntime's error) makes its row's indices out of range: an error on ref
and cpu, not a write counted from the cache's end. The update's axis is no longer than the cache's, so no two indices of a row coincide (the
scatter's order does not matter). Write indices may be run-time values; the other dims of
the update are static.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Convert, Eltwise, Reshape, Select
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.indexing import BroadcastTo, ScatterElements, ShapeOf
from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import to_xdsl

MODES = ("linear", "circular")


def _refuse(ctx: NodeContext, message: str, fix: str) -> IrforgeError:
    # E116: a TensorScatter form that is invalid or that irforge cannot express
    return IrforgeError(message, where=ctx.where, fix=fix, code="E116")


def _checked_form(ctx: NodeContext) -> tuple[int, str, tuple[int, ...], tuple[int, ...]]:
    """(axis, mode, cache shape, update shape) after the checks ONNX's definition makes."""
    mode = str(ctx.attr("mode", "linear"))
    if mode not in MODES:
        raise _refuse(ctx, f"mode '{mode}' is not one of {list(MODES)}", "use mode 'linear' or 'circular'")
    cache, update = ctx.input_shape(0), ctx.input_shape(1)
    rank = len(cache)
    axis = int(ctx.attr("axis", -2))
    if len(update) != rank or rank < 2 or not -rank <= axis < rank or axis % rank == 0:
        raise _refuse(
            ctx, f"axis {axis} with past_cache {list(cache)} and update {list(update)}: the sequence axis must be a non-batch "
            "axis of two inputs of one rank >= 2", "give past_cache and update the same rank and axis in [1, rank)",
        )  # fmt: skip
    axis %= rank
    if DYN in update[1:]:
        raise _refuse(ctx, f"update {list(update)} has dims unknown at conversion besides the batch", "give static input shapes (--input_shape)")
    for i, (c, u) in enumerate(zip(cache, update)):
        mismatch = (c < u) if i == axis else (c != u)
        if c != DYN and u != DYN and mismatch:
            raise _refuse(
                ctx, f"update {list(update)} does not fit past_cache {list(cache)} at dim {i}",
                "the update must match the cache but along axis, where it is no longer",
            )  # fmt: skip
    if cache[axis] == DYN and mode == "circular":
        raise _refuse(ctx, "circular mode with a cache length unknown at conversion", "give static input shapes (--input_shape)")
    return axis, mode, cache, update


@onnx_extractor("TensorScatter")
def tensor_scatter(ctx: NodeContext) -> SSAValue:
    axis, mode, cache, update = _checked_form(ctx)
    rank = len(cache)
    positions_shape = [1] * rank
    positions_shape[axis] = update[axis]
    positions = np.arange(update[axis], dtype=np.int64).reshape(positions_shape)
    # the update's shape with the batch dim 1: the positions broadcast over it
    indices: SSAValue = ctx.constant(np.broadcast_to(positions, (1, *update[1:])).copy(), "/positions")
    if ctx.has_input(2):
        _check_constant_starts(ctx, mode, cache[axis], update[axis])
        starts = ctx.input(2)
        if ctx.input_type(2).element_type != to_xdsl(np.dtype(np.int64)):
            starts = ctx.value(Convert, [starts], suffix="/starts_i64", destination_type=to_xdsl(np.dtype(np.int64)))
        starts = ctx.value(Reshape, [starts], suffix="/starts", shape=[-1] + [1] * (rank - 1))
        indices = ctx.value(Eltwise, [starts, indices], suffix="/indices", operation="sum")
        if mode == "circular":
            length = ctx.constant(np.array(cache[axis], np.int64), "/length")
            indices = ctx.value(Eltwise, [indices, length], suffix="/wrapped", operation="floor_mod")
        # a negative start is an error in onnxruntime; the scatter would count it from the end
        # (or the modulo wrap it): its row's indices are made out of range, an error on ref / cpu
        negative = ctx.value(Eltwise, [starts, ctx.constant(np.array(0, np.int64), "/zero")], suffix="/negative_start", operation="less")
        outside = ctx.constant(np.array(cache[axis] if cache[axis] != DYN else np.iinfo(np.int32).max, np.int64), "/outside")
        indices = ctx.value(Select, [negative, outside, indices], suffix="/checked_indices")
    elif update[0] == DYN:  # no write indices: every row starts at 0, as many rows as the update has
        indices = ctx.value(BroadcastTo, [indices, ctx.value(ShapeOf, [ctx.input(1)], suffix="/shape")], suffix="/full_indices")
    else:
        indices = ctx.constant(np.broadcast_to(positions, update).copy(), "/positions")
    return ctx.value(ScatterElements, [ctx.input(0), indices, ctx.input(1)], axis=axis)



def _check_constant_starts(ctx: NodeContext, mode: str, length: int, count: int) -> None:
    """Constant write indices are checked as onnxruntime does at run time: a linear write past
    the cache's end, or a negative start, is an error (a scatter would count from the end)."""
    starts = ctx.constant_input(2)
    if starts is None:
        return
    if starts.ndim != 1 or starts.dtype.kind not in "iu":
        raise _refuse(ctx, f"write_indices must be a 1-D integer tensor, got {starts.dtype}{list(starts.shape)}", "give one int64 start per batch row")
    if (starts < 0).any():
        raise _refuse(ctx, f"write_indices {starts.tolist()} hold a negative start", "give starts in [0, cache length)")
    if mode == "linear" and length != DYN and (starts + count > length).any():
        raise _refuse(
            ctx, f"write_indices {starts.tolist()} write {count} positions outside the cache's {length} in linear mode",
            "give starts in [0, cache length - update length], or use mode 'circular'",
        )  # fmt: skip
