"""Resample (nearest: a copy through index tables; linear/cubic: `codegen.taps`, one pass
per resized axis) and LRN (squares, window sums along the window axes, then the normalisation), f32.

The tap tables come from the reference interpreter's own coordinate functions, evaluated
here at compile time, so both agree on every mode's rounding.
"""

from __future__ import annotations

import math

import numpy as np

from irforge.backends.cpu.codegen.depthwise import host_lanes
from irforge.backends.cpu.codegen.taps import TapSpec, taps_kernel
from irforge.backends.cpu.lower import Buffer, Lowering, lowering, shape_of
from irforge.backends.cpu.ops.elementwise import pointwise_phase
from irforge.backends.cpu.codegen.copy import Move, contiguous_strides
from irforge.backends.cpu.ops.fusion import require_f32
from irforge.backends.cpu.ops.movement import emit_moves
from irforge.backends.reference.kernels.resample import cubic_taps, linear_taps, nearest_taps, source_coordinates
from irforge.backends.cpu.host_steps import host_step_op
from irforge.dialects.nn import DeformableConvolution, GridSample, Norm, Resample

# GridSample gathers at data-dependent coordinates (a grid computed by the model): its
# reference kernel runs as a host step
host_step_op(GridSample)
# DeformableConvolution samples at data-dependent offsets too (bilinear im2col, then a GEMM)
host_step_op(DeformableConvolution)


def emit_taps(ctx: Lowering, shape: tuple[int, ...], axis: int, n_out: int, index: np.ndarray, weight: np.ndarray, src: Buffer, dst: Buffer) -> None:
    """dst = the taps ([n_out, taps] tables) applied along `axis` of src (of `shape`)."""
    spec = TapSpec(
        math.prod(shape[:axis]), shape[axis], n_out, math.prod(shape[axis + 1:]),
        tuple(tuple(int(v) for v in column) for column in index.T),
        tuple(tuple(float(np.float32(v)) for v in column) for column in weight.T),
        host_lanes(),
    )
    name = ctx.kernel(("taps", spec), lambda m, n: taps_kernel(m, spec, n))
    ctx.phase(name, [src, dst])


def emit_axis_passes(ctx: Lowering, shape: tuple[int, ...], passes: list[tuple[int, int, np.ndarray, np.ndarray]], src: Buffer, dst: Buffer) -> None:
    """Apply (axis, n_out, index, weight) passes in order; intermediates go to scratch."""
    current, buf = list(shape), src
    for k, (axis, n_out, index, weight) in enumerate(passes):
        before = tuple(current)
        current[axis] = n_out
        target = dst if k == len(passes) - 1 else ctx.scratch(4 * math.prod(current))
        emit_taps(ctx, before, axis, n_out, index, weight, buf, target)
        buf = target


def resample_taps(ctx: Lowering, op: Resample) -> None:
    """Linear or cubic: one taps pass per resized axis, in axis order as the reference."""
    require_f32(op)
    x = shape_of(op.input)
    out = shape_of(op.output)
    passes = []
    for axis, (n_in, n_out, scale) in enumerate(zip(x, out, op.axis_scales(x))):
        if n_in == n_out and scale == 1:
            continue
        coords = source_coordinates(op.str_prop("coordinate_transformation_mode"), scale, n_in, n_out)
        if op.str_prop("mode") == "linear":
            index, weight = linear_taps(coords, n_in)
        else:
            index, weight = cubic_taps(coords, n_in, op.float_prop("cubic_coeff_a"))
        passes.append((axis, n_out, index, weight))
    if not passes:  # every axis keeps its size at scale 1: the values are the input's
        ctx.alias(op.output, ctx.input(op, 0))
        return
    emit_axis_passes(ctx, x, passes, ctx.input(op, 0), ctx.output(op))


def window_taps(size: int, before: int, after: int) -> tuple[np.ndarray, np.ndarray]:
    """Every position's window [i - before, i + after] as taps; -1 past the edges."""
    offsets = np.arange(-before, after + 1)
    index = np.arange(size)[:, None] + offsets[None, :]
    inside = (index >= 0) & (index < size)
    return np.where(inside, index, -1), inside.astype(np.float32)


@lowering(Norm)
def lrn(ctx: Lowering, op: Norm) -> None:
    """y = x / (bias + alpha / count * window sum of x^2) ^ beta."""
    require_f32(op)
    x = shape_of(op.input)
    before, after = op.window_extent()
    squares, sums = ctx.scratch(4 * math.prod(x)), ctx.scratch(4 * math.prod(x))
    pointwise_phase(ctx, x, [ctx.input(op, 0)], [x], "power", (2.0, 1.0, 0.0), squares)
    passes = [(a, x[a], *window_taps(x[a], before, after)) for a in op.window_axes()]
    emit_axis_passes(ctx, x, passes, squares, sums)
    count = op.int_prop("size") ** len(op.window_axes())
    params = (op.float_prop("alpha") / count, op.float_prop("beta"), op.float_prop("bias"))
    pointwise_phase(ctx, x, [ctx.input(op, 0), sums], [x, x], "lrn", params, ctx.output(op))


@lowering(Resample)
def resample(ctx: Lowering, op: Resample) -> None:
    """Nearest: a copy through index tables (any element type); linear and cubic: taps."""
    if op.str_prop("mode") != "nearest":
        resample_taps(ctx, op)
        return
    in_shape, out_shape = shape_of(op.input), shape_of(op.output)
    strides = contiguous_strides(in_shape)
    maps = []
    mode = op.str_prop("coordinate_transformation_mode")
    for n_in, n_out, scale, stride in zip(in_shape, out_shape, op.axis_scales(in_shape), strides):
        if n_in == n_out and scale == 1:
            maps.append(stride)
            continue
        index, _ = nearest_taps(source_coordinates(mode, scale, n_in, n_out), n_in, op.str_prop("nearest_mode"))
        maps.append(tuple(int(i) * stride for i in index[:, 0]))
    move = Move(0, 1, out_shape, tuple(maps), contiguous_strides(out_shape))
    emit_moves(ctx, op, [ctx.input(op, 0), ctx.output(op)], [move])
