"""Lowerings of the data movement ops onto `codegen.copy`, for every element type.

Concat, Split, Slice, Pad, Tile, Permute (non-f32; f32 keeps its vectorised gather kernel
in `elementwise`), Gather and GatherElements (DeBERTa's relative-position scores: a numpy
host step per layer before); nearest Resample (`interpolate`) is a move too. Index tables
(Pad borders, Tile wrap) are computed here at compile time and compiled into the kernel.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from irforge.backends.cpu.codegen.blocks import block_table, blocks_kernel
from irforge.backends.cpu.codegen.copy import (
    FILL,
    CopySpec,
    ElementsSpec,
    GatherSpec,
    Move,
    contiguous_strides,
    copy_kernel,
    gather_elements_kernel,
    gather_kernel,
    simplify,
)
from irforge.backends.cpu.lower import Buffer, Lowering, dtype_of, lowering, nbytes_of, shape_of
from irforge.dialects.nn import Concat, Gather, Pad, Permute, Slice, Split, Tile
from irforge.dialects.nn.indexing import GatherElements


def emit_moves(ctx: Lowering, op: Operation, args: list[Buffer], moves: list[Move], fill: float = 0.0) -> None:
    """One copy kernel doing `moves` over `args` (slot indices refer to `args`)."""
    dtype = dtype_of(op.operands[0])
    with np.errstate(all="ignore"):
        bits = int(np.array(fill).astype(dtype).view(f"u{dtype.itemsize}"))
    spec = CopySpec(dtype.itemsize, tuple(simplify(m) for m in moves), bits)
    table = block_table(list(spec.moves))
    if table is not None:  # contiguous blocks: one kernel per element size (`codegen.blocks`)
        name = ctx.kernel(("blocks", dtype.itemsize), lambda m, n: blocks_kernel(m, dtype.itemsize, n))
        ctx.phase(name, [ctx.const(table), *args])
        return
    name = ctx.kernel(("copy", spec), lambda m, n: copy_kernel(m, spec, n))
    ctx.phase(name, args)


def relayout(ctx: Lowering, op: Operation, src: Buffer, shape: tuple[int, ...], order: tuple[int, ...], dst: Buffer) -> None:
    """dst = src (of `shape`) transposed by `order` (a copy kernel; any element type)."""
    strides = contiguous_strides(shape)
    out_shape = tuple(shape[a] for a in order)
    move = Move(0, 1, out_shape, tuple(strides[a] for a in order), contiguous_strides(out_shape))
    emit_moves(ctx, op, [src, dst], [move])


CONCAT_IN_PLACE = True
"""A Concat's input whose slice of the output is contiguous (the axes before the Concat's are
all 1: NCHW channels of one image, a sequence's tokens) is stored in that slice by its
producer (`in_place_input`): no copy (SegFormer-B0's decode head copied 64 MiB)."""


@lowering(Concat)
def concat(ctx: Lowering, op: Concat) -> None:
    out_shape = shape_of(op.output)
    axis = op.int_prop("axis") % len(out_shape)
    dst_strides = contiguous_strides(out_shape)
    out = ctx.output(op)
    contiguous = CONCAT_IN_PLACE and all(d == 1 for d in out_shape[:axis])
    itemsize = dtype_of(op.output).itemsize
    args, moves, start, taken = [], [], 0, set()
    for i, value in enumerate(op.inputs):
        shape = shape_of(value)
        buf = ctx.input(op, i)
        at = start * dst_strides[axis]
        start += shape[axis]
        if contiguous and id(buf) not in taken and in_place_input(ctx, op, value, buf):
            taken.add(id(buf))
            buf.parent, buf.within = out, at * itemsize
            continue
        args.append(buf)
        moves.append((shape, at))
    if moves:
        slots = len(args)
        emit_moves(ctx, op, [*args, out], [Move(i, slots, shape, contiguous_strides(shape), dst_strides, 0, at)
                                           for i, (shape, at) in enumerate(moves)])


def in_place_input(ctx: Lowering, op: Concat, value: SSAValue, buf: Buffer) -> bool:
    """Whether the Concat `op`'s input `value` (in `buf`) may be stored in its slice of the
    output: an arena tensor of exactly that size, in no other buffer yet, whose readers (of
    every value `buf` holds: views of it, results stored over it) are all lowered already
    or are `op`. Nothing after `op` reads the buffer then, so nothing can store a result
    over it (`fusion.residual_in_place`, element-wise ops in place) while the output lives."""
    if buf.kind != "arena" or buf.parent is not None or buf.nbytes != nbytes_of(value):
        return False
    here = ctx.order[op]
    for held, other in ctx.values.items():
        if other is buf and any(ctx.order.get(use.operation, here + 1) > here for use in held.uses):
            return False
    return True


@lowering(Split)
def split(ctx: Lowering, op: Split) -> None:
    in_shape = shape_of(op.input)
    axis = op.int_prop("axis") % len(in_shape)
    strides = contiguous_strides(in_shape)
    moves, start = [], 0
    for i, value in enumerate(op.outputs):
        shape = shape_of(value)
        moves.append(Move(0, i + 1, shape, strides, contiguous_strides(shape), start * strides[axis]))
        start += shape[axis]
    emit_moves(ctx, op, [ctx.input(op, 0)] + [ctx.output(op, i) for i in range(len(op.outputs))], moves)


@lowering(Slice)
def slice_(ctx: Lowering, op: Slice) -> None:
    in_shape, out_shape = shape_of(op.input), shape_of(op.output)
    strides = contiguous_strides(in_shape)
    bounds = op.bounds(in_shape)
    offset = sum(start * s for (start, _, _), s in zip(bounds, strides) if start >= 0)
    maps = tuple(step * s for (_, _, step), s in zip(bounds, strides))
    move = Move(0, 1, out_shape, maps, contiguous_strides(out_shape), offset)
    emit_moves(ctx, op, [ctx.input(op, 0), ctx.output(op)], [move])


def _pad_index(i: int, size: int, mode: str) -> int:
    """The source index of padded position i (i may be out of [0, size)); -1: constant."""
    if 0 <= i < size:
        return i
    if mode == "constant":
        return -1
    if mode == "edge":
        return min(max(i, 0), size - 1)
    period = 2 * size - 2 if mode == "reflect" else 2 * size
    if period == 0:
        return 0
    i %= period
    if i >= size:
        i = period - i - (0 if mode == "reflect" else 1)
    return i


@lowering(Pad)
def pad(ctx: Lowering, op: Pad) -> None:
    in_shape, out_shape = shape_of(op.input), shape_of(op.output)
    strides = contiguous_strides(in_shape)
    mode = op.str_prop("mode")
    maps = []
    for size, out, begin, stride in zip(in_shape, out_shape, op.ints("pads_begin"), strides):
        indices = (_pad_index(i - begin, size, mode) for i in range(out))
        maps.append(tuple(FILL if j < 0 else j * stride for j in indices))
    move = Move(0, 1, out_shape, tuple(maps), contiguous_strides(out_shape))
    emit_moves(ctx, op, [ctx.input(op, 0), ctx.output(op)], [move], op.float_prop("value"))


@lowering(Tile)
def tile(ctx: Lowering, op: Tile) -> None:
    in_shape, out_shape = shape_of(op.input), shape_of(op.output)
    strides = contiguous_strides(in_shape)
    maps = tuple(tuple((i % size) * s for i in range(out)) if out != size else s
                 for size, out, s in zip(in_shape, out_shape, strides))
    move = Move(0, 1, out_shape, maps, contiguous_strides(out_shape))
    emit_moves(ctx, op, [ctx.input(op, 0), ctx.output(op)], [move])


def permute_any(ctx: Lowering, op: Permute) -> None:
    x = shape_of(op.input)
    order = op.ints("order") or tuple(reversed(range(len(x))))
    relayout(ctx, op, ctx.input(op, 0), x, tuple(order), ctx.output(op))


@lowering(Gather)
def gather(ctx: Lowering, op: Gather) -> None:
    data, indices = shape_of(op.data), shape_of(op.indices)
    axis, batch_dims = op.gather_axes()
    spec = GatherSpec(
        dtype_of(op.data).itemsize, 8 * dtype_of(op.indices).itemsize,
        int(np.prod(data[:batch_dims])), int(np.prod(data[batch_dims:axis])), data[axis],
        int(np.prod(indices[batch_dims:])), int(np.prod(data[axis + 1:])),
    )
    name = ctx.kernel(("gather", spec), lambda m, n: gather_kernel(m, spec, n))
    # the reference's error (`reference/kernels/shape.gather`), with the index
    size = data[axis]
    check = ctx.check_word("E858", f"{op.label}: indices must be in [{-size}, {size - 1}] for axis {axis} (index {{}})")
    ctx.phase(name, [ctx.input(op, 0), ctx.input(op, 1), ctx.output(op), check])


NATIVE_GATHER_ELEMENTS = True
"""GatherElements through `gather_elements_kernel`; False: its numpy reference kernel as a
host step (as before session 11; kept for `bench/cpu_knob_ab.py`'s same-process A/B)."""


@lowering(GatherElements)
def gather_elements(ctx: Lowering, op: GatherElements) -> None:
    if not NATIVE_GATHER_ELEMENTS:
        from irforge.backends.cpu.host_steps import lower_reference

        lower_reference(ctx, op)
        return
    data, indices = shape_of(op.data), shape_of(op.indices)
    axis = op.int_prop("axis") % len(data)
    spec = ElementsSpec(dtype_of(op.data).itemsize, 8 * dtype_of(op.indices).itemsize, int(np.prod(indices[:axis])),
                        data[axis], indices[axis], int(np.prod(indices[axis + 1:])))
    name = ctx.kernel(("gather_elements", spec), lambda m, n: gather_elements_kernel(m, spec, n))
    # the reference's error (`reference/kernels/indexing.checked`)
    check = ctx.check_word("E880", f"{op.label}: index {{}} is out of range for a dim of size {data[axis]}")
    ctx.phase(name, [ctx.input(op, 0), ctx.input(op, 1), ctx.output(op), check])
