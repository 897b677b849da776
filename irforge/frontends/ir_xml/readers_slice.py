"""Readers of the slicing and padding operations: Slice, StridedSlice and Pad.

StridedSlice's masks become up to three `nn` ops: an `nn.slice` of the input axes, an
`nn.squeeze` of the shrunk ones and an `nn.unsqueeze` of the new ones. A Pad with negative
pads crops: the positive pads go to an `nn.pad`, then an `nn.slice` cuts the negative ones
off its result (OpenVINO reflects and replicates the original input's edges, which padding
first and cropping after keeps). Pads computed at run time are one `nn.pad_by`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import TensorType, i32, i64
from xdsl.ir import SSAValue

from irforge.dialects.nn.elementwise import Convert
from irforge.dialects.nn.indexing import PadBy, SliceTo
from irforge.dialects.nn.shape import Concat, Pad, Slice, Squeeze, Unsqueeze
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader

INT64_MAX, INT64_MIN = int(np.iinfo(np.int64).max), int(np.iinfo(np.int64).min)
"""Slice bounds that `nn.slice` clamps to the ends of an axis of any size."""


@ir_layer_reader("Slice")
def slice_(ctx: LayerContext) -> SSAValue:
    if any(ctx.importer.constant_at(ctx.source(i)) is None for i in (1, 2)):  # bounds computed at run time
        count = ctx.shape(1)
        if ctx.num_inputs <= 4 and (len(count) != 1 or count[0] < 0):  # one bound per axis, the axes 0..n-1
            raise ctx.fail(f"Slice without axes needs a start of known length, got shape {list(count)}", fix="give the axes input")
        axes = ctx.const_ints(4, "axes") if ctx.num_inputs > 4 else list(range(count[0]))
        return ctx.value(SliceTo, [ctx.input(0), ctx.input(1), ctx.input(2)], axes=axes, steps=ctx.const_ints(3, "step"))
    begins, ends, steps = (ctx.const_ints(i, what) for i, what in ((1, "start"), (2, "stop"), (3, "step")))
    axes = ctx.const_ints(4, "axes") if ctx.num_inputs > 4 else None
    return ctx.value(Slice, [ctx.input(0)], begins=begins, ends=ends, steps=steps, axes=axes)


@dataclass
class SlicePlan:
    """StridedSlice as `nn` sees it: (axis, begin, end, step) per sliced input axis, the
    input axes shrunk away, the positions of new axes in the output."""

    slices: list[tuple[int, int, int, int]] = field(default_factory=list)
    shrunk: list[int] = field(default_factory=list)
    new: list[int] = field(default_factory=list)


def mask(ctx: LayerContext, name: str, length: int) -> list[bool]:
    """A mask attribute as `length` flags (missing trailing ones are 0)."""
    bits = [bool(b) for b in ctx.ints(name, "")]
    return (bits + [False] * length)[:length]


def plan_strided_slice(ctx: LayerContext) -> SlicePlan:
    begin, end = ctx.const_ints(1, "begin"), ctx.const_ints(2, "end")
    strides = ctx.const_ints(3, "strides") if ctx.num_inputs > 3 else [1] * len(begin)
    n, rank = len(begin), ctx.rank(0)
    if len(end) != n or len(strides) != n or 0 in strides:
        raise ctx.fail(f"begin, end and strides need the same length and non-zero strides, got {begin}, {end}, {strides}")
    masks = {name: mask(ctx, name, n) for name in ("begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask")}
    new, ellipsis = masks["new_axis_mask"], masks["ellipsis_mask"]
    if sum(ellipsis) > 1:
        raise ctx.fail("StridedSlice with more than one ellipsis is not supported")
    plan, axis, position = SlicePlan(), 0, 0
    for i in range(n):
        if ellipsis[i]:  # the input axes no other entry takes
            skipped = rank - sum(1 for j in range(n) if not new[j] and not ellipsis[j])
            axis, position = axis + skipped, position + skipped
        elif new[i]:
            plan.new.append(position)
            position += 1
        elif masks["shrink_axis_mask"][i]:
            plan.slices.append((axis, begin[i], begin[i] + 1 if begin[i] != -1 else INT64_MAX, 1))
            plan.shrunk.append(axis)
            axis += 1
        else:
            step = strides[i]
            first = begin[i] if not masks["begin_mask"][i] else 0 if step > 0 else INT64_MAX
            last = end[i] if not masks["end_mask"][i] else INT64_MAX if step > 0 else INT64_MIN
            if (first, last, step) != (0, INT64_MAX, 1):
                plan.slices.append((axis, first, last, step))
            axis, position = axis + 1, position + 1
    if axis > rank:
        raise ctx.fail(f"StridedSlice takes {axis} axes of a rank-{rank} input")
    return plan


@ir_layer_reader("StridedSlice")
def strided_slice(ctx: LayerContext) -> SSAValue:
    plan, x = plan_strided_slice(ctx), ctx.input(0)
    steps = [("slice", bool(plan.slices)), ("squeeze", bool(plan.shrunk)), ("unsqueeze", bool(plan.new))]
    last = max((i for i, (_, used) in enumerate(steps) if used), default=-1)
    suffix = {what: "" if i == last else f"/{what}" for i, (what, _) in enumerate(steps)}
    if plan.slices:
        axes, begins, ends, strides = (list(column) for column in zip(*plan.slices))
        x = ctx.value(Slice, [x], suffix=suffix["slice"], begins=begins, ends=ends, steps=strides, axes=axes)
    if plan.shrunk:
        x = ctx.value(Squeeze, [x], suffix=suffix["squeeze"], axes=plan.shrunk)
    if plan.new:
        x = ctx.value(Unsqueeze, [x], suffix=suffix["unsqueeze"], axes=plan.new)
    return x


@ir_layer_reader("Pad")
def pad(ctx: LayerContext) -> SSAValue:
    if any(ctx.importer.constant_at(ctx.source(i)) is None for i in (1, 2)):
        return pad_by(ctx)
    begin, end = ctx.const_ints(1, "pads_begin"), ctx.const_ints(2, "pads_end")
    if len(begin) != len(end):
        raise ctx.fail(f"pads_begin and pads_end differ in length: {len(begin)} vs {len(end)}")
    cropped = [a for a, (b, e) in enumerate(zip(begin, end)) if min(b, e) < 0]
    x = ctx.input(0)
    if any(p > 0 for p in begin + end) or not cropped:
        value = ctx.scalar(3, "pad_value") if ctx.num_inputs > 3 else 0.0
        props = {"pads_begin": [max(p, 0) for p in begin], "pads_end": [max(p, 0) for p in end], "mode": ctx.attr("pad_mode", "constant"), "value": value}
        x = ctx.value(Pad, [x], suffix="/pad" if cropped else "", **props)
    if cropped:
        begins = [max(-begin[a], 0) for a in cropped]
        ends = [end[a] if end[a] < 0 else INT64_MAX for a in cropped]
        x = ctx.value(Slice, [x], begins=begins, ends=ends, axes=cropped)
    return x


def pad_by(ctx: LayerContext) -> SSAValue:
    """Pad with pads_begin or pads_end computed at run time: nn.pad_by of the two joined
    (as i64) into its [begins..., ends...] vector."""
    rank = ctx.rank(0)
    whole = written_pads(ctx.input(1), ctx.input(2), rank)
    if whole is not None:  # irforge's own Slice [0, r) / [r, 2r) of one vector: that vector
        value = ctx.scalar(3, "pad_value") if ctx.num_inputs > 3 else 0.0
        return ctx.value(PadBy, [ctx.input(0), whole], mode=ctx.attr("pad_mode", "constant"), value=value)
    halves = []
    for index, what in ((1, "pads_begin"), (2, "pads_end")):
        if ctx.shape(index) != (rank,):
            raise ctx.fail(f"{what} (input #{index}) must hold {rank} values (one per dim), got shape {list(ctx.shape(index))}")
        half = ctx.input(index)
        assert isinstance(half.type, TensorType)
        if half.type.element_type != i64:
            half = ctx.value(Convert, [half], suffix=f"/{what}/i64", destination_type=i64)
        halves.append(half)
    pads = ctx.value(Concat, halves, suffix="/pads", axis=0)
    value = ctx.scalar(3, "pad_value") if ctx.num_inputs > 3 else 0.0
    return ctx.value(PadBy, [ctx.input(0), pads], mode=ctx.attr("pad_mode", "constant"), value=value)


def written_pads(begin: SSAValue, end: SSAValue, rank: int) -> SSAValue | None:
    """The [begins..., ends...] vector both halves were cut from, as irforge writes
    nn.pad_by (Slice-8 of [0, r) and [r, 2r) on axis 0, each maybe converted to i64), so
    that a written file reads back into the op that wrote it; else None."""
    sources = []
    for half, start in ((begin, 0), (end, rank)):
        if isinstance(half.owner, Convert):
            half = half.owner.operands[0]
        op = half.owner
        if not isinstance(op, Slice) or op.slice_specs() != {0: (start, start + rank, 1)}:
            return None
        sources.append(op.operands[0])
    whole = sources[0]
    if sources[1] is not whole or not isinstance(whole.type, TensorType) or tuple(whole.type.get_shape()) != (2 * rank,):
        return None
    if whole.type.element_type not in (i32, i64):
        return None
    return whole
