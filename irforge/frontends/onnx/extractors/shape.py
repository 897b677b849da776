"""ONNX data-movement and shape ops -> nn shape ops (shape-like inputs folded to properties)."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Flatten, Gather, Pad, Permute, Reshape, Slice, Split, Squeeze, Tile, Unsqueeze
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.indexing import BroadcastTo, CumSum, PadBy, ReshapeTo, ShapeOf, SliceTo
from irforge.errors import NotConstantError
from irforge.frontends.onnx.checked_constants import int_list
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl


def ints_input_or_attr(ctx: NodeContext, index: int, attr: str, what: str, since: int) -> list[int] | None:
    """An int list given as attribute before opset `since` and as constant input from it."""
    if ctx.opset < since:
        value = ctx.attr(attr)
        return None if value is None else [int(v) for v in value]
    if not ctx.has_input(index):
        return None
    return int_list(ctx, ctx.required_constant(index, what), what)


@onnx_extractor("Constant")
def constant(ctx: NodeContext) -> SSAValue:
    for attr, dtype in (("value", None), ("value_float", np.float32), ("value_floats", np.float32),
                        ("value_int", np.int64), ("value_ints", np.int64)):
        value = ctx.attr(attr)
        if value is not None:
            return ctx.constant(np.asarray(value, dtype), "")
    raise ctx.fail("only tensor, float and int Constant values are supported")


@onnx_extractor("Shape")
def shape(ctx: NodeContext) -> SSAValue:
    """A constant where the dims are known; else nn.shape_of (dims that depend on the data,
    such as NonZero's count), sliced to [start, end)."""
    full = ctx.input_shape(0)
    start, end = int(ctx.attr("start", 0)), ctx.attr("end")
    dims = full[start:] if end is None else full[start:int(end)]
    if DYN not in dims:
        return ctx.constant(np.array(dims, np.int64), "")
    found = ctx.value(ShapeOf, [ctx.input(0)], suffix="" if len(dims) == len(full) else "/all")
    if len(dims) == len(full):
        return found
    first = range(len(full))[slice(start, None if end is None else int(end))][0]  # start clamped as ONNX does
    return ctx.value(Slice, [found], axes=[0], begins=[first], ends=[first + len(dims)])


@onnx_extractor("ConstantOfShape")
def constant_of_shape(ctx: NodeContext) -> SSAValue:
    """A constant; for a shape computed at run time (torch's full_like of a tensor of
    data-dependent size), the value broadcast to it."""
    value = ctx.attr("value")
    fill = np.zeros(1, np.float32) if value is None else np.asarray(value).reshape(-1)
    dims = ctx.constant_input(0)
    if dims is None:
        return ctx.value(BroadcastTo, [ctx.constant(fill[:1].reshape(()), "/value"), ctx.input(0)])
    return ctx.filled(dims.reshape(-1), fill[:1], "")


@onnx_extractor("Reshape")
def reshape(ctx: NodeContext) -> SSAValue:
    """nn.reshape where the target shape folds at the given input shapes (the usual
    Shape/Gather/Concat of static dims); else nn.reshape_to, the shape read at run time
    (torchvision's detection heads reshape to sizes that NonZero/TopK/NMS decide)."""
    if ctx.opset >= 5 and ctx.has_input(1) and ctx.constant_input(1) is None:
        return ctx.value(ReshapeTo, [ctx.input(0), ctx.input(1)], special_zero=not ctx.attr("allowzero", 0))
    target = ints_input_or_attr(ctx, 1, "shape", "the target shape", since=5)
    if target is None:
        raise ctx.fail("the target shape is missing")
    return ctx.value(Reshape, [ctx.input(0)], shape=target, special_zero=not ctx.attr("allowzero", 0))


@onnx_extractor("Flatten")
def flatten(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.input_shape(0))
    axis = int(ctx.attr("axis", 1))
    if not -rank <= axis <= rank:
        raise ctx.fail(f"axis {axis} is out of range for rank {rank}")
    return ctx.value(Flatten, [ctx.input(0)], axis=axis + rank if axis < 0 else axis)


@onnx_extractor("Transpose")
def transpose(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.input_shape(0))
    perm = ctx.attr("perm") or list(reversed(range(rank)))
    return ctx.value(Permute, [ctx.input(0)], order=[int(p) for p in perm])


@onnx_extractor("Squeeze")
def squeeze(ctx: NodeContext) -> SSAValue:
    axes = ints_input_or_attr(ctx, 1, "axes", "axes", since=13)
    return ctx.value(Squeeze, [ctx.input(0)], axes=axes or None)


@onnx_extractor("Unsqueeze")
def unsqueeze(ctx: NodeContext) -> SSAValue:
    axes = ints_input_or_attr(ctx, 1, "axes", "axes", since=13)
    if not axes:
        raise ctx.fail("axes are required")
    return ctx.value(Unsqueeze, [ctx.input(0)], axes=axes)


@onnx_extractor("Concat")
def concat(ctx: NodeContext) -> SSAValue:
    return ctx.value(Concat, ctx.inputs(), axis=int(ctx.attr("axis", 1)))


@onnx_extractor("Split")
def split(ctx: NodeContext) -> list[SSAValue]:
    shape = ctx.input_shape(0)
    axis = int(ctx.attr("axis", 0))
    if not -len(shape) <= axis < len(shape):  # `% rank` split along another axis (or divided by zero on a scalar)
        raise ctx.fail(f"axis {axis} is out of range for an input of rank {len(shape)}", fix=f"use an axis in [{-len(shape)}, {len(shape) - 1}]")
    axis %= len(shape)
    outputs = len(ctx.node.output)
    if ctx.opset >= 13 and ctx.has_input(1) and ctx.constant_input(1) is None:
        return split_run_time(ctx, axis, outputs)
    lengths = ints_input_or_attr(ctx, 1, "split", "split lengths", since=13)
    if lengths is None:
        size = shape[axis]
        if size == DYN:
            raise ctx.fail("splitting a dynamic axis needs explicit split lengths")
        chunk = -(-size // outputs)
        lengths = [min(chunk, size - i * chunk) for i in range(outputs)]
    return ctx.add(Split, [ctx.input(0)], num_results=len(lengths), axis=axis, split_lengths=lengths)


def split_run_time(ctx: NodeContext, axis: int, outputs: int) -> list[SSAValue]:
    """Split lengths computed at run time (torchvision's `boxes.split(boxes_per_image)`
    through the dynamo exporter): one output is the input itself (ONNX requires the lengths
    to sum to the axis); more are nn.slice_to between the running sums of the lengths."""
    count = ctx.input_shape(1)
    if count != (outputs,) and list(count) != [outputs]:
        raise ctx.fail(f"split lengths must be a 1-D tensor of {outputs} values (one per output), got shape {list(count)}")
    if outputs == 1:
        return [ctx.input(0)]
    lengths = ctx.input(1)
    ends = ctx.value(CumSum, [lengths], suffix="/ends", axis=0)
    begins = ctx.value(CumSum, [lengths], suffix="/begins", axis=0, exclusive=True)
    results = []
    for i in range(outputs):
        index = ctx.constant(np.array([i], np.int64), f"/index{i}")
        bounds = [ctx.value(Gather, [v, index], suffix=f"/{what}{i}", axis=0) for what, v in (("begin", begins), ("end", ends))]
        results.append(ctx.value(SliceTo, [ctx.input(0), *bounds], suffix=f"/{i}", axes=[axis]))
    return results


@onnx_extractor("Slice")
def slice_(ctx: NodeContext) -> SSAValue:
    if ctx.opset < 10:
        starts, ends, axes = ctx.attr("starts"), ctx.attr("ends"), ctx.attr("axes")
        steps = None
    elif ctx.constant_input(1) is None or ctx.constant_input(2) is None:
        return slice_to(ctx)
    else:
        starts = ints_input_or_attr(ctx, 1, "starts", "starts", since=10)
        ends = ints_input_or_attr(ctx, 2, "ends", "ends", since=10)
        axes = ints_input_or_attr(ctx, 3, "axes", "axes", since=10)
        steps = ints_input_or_attr(ctx, 4, "steps", "steps", since=10)
    if starts is None or ends is None:
        raise ctx.fail("starts and ends are required")
    props: dict[str, object] = {"begins": list(starts), "ends": list(ends)}
    if axes is not None:
        props["axes"] = list(axes)
    if steps is not None:
        props["steps"] = list(steps)
    return ctx.value(Slice, [ctx.input(0)], **props)


def slice_to(ctx: NodeContext) -> SSAValue:
    """nn.slice_to: starts or ends computed at run time (torchvision's RoI heads slice the
    first Shape(boxes)[0] rows of a tensor of data-dependent size); axes and steps must be
    constant."""
    count = ctx.input_shape(1)
    if np.dtype(from_xdsl(ctx.input_type(1).element_type)).kind not in "iu":  # a float pads vector is no count
        raise ctx.fail(f"pads (input #1) must be an integer tensor, got {ctx.input_type(1).element_type}", fix="give pads as int64")
    if len(count) != 1 or count[0] == DYN:
        raise ctx.fail(f"starts must be a 1-D tensor of known length, got shape {list(count)}")
    axes = ints_input_or_attr(ctx, 3, "axes", "axes", since=10)
    steps = ints_input_or_attr(ctx, 4, "steps", "steps", since=10)
    props: dict[str, object] = {"axes": list(range(count[0])) if axes is None else list(axes)}
    if steps is not None:
        props["steps"] = list(steps)
    return ctx.value(SliceTo, [ctx.input(0), ctx.input(1), ctx.input(2)], **props)


@onnx_extractor("Gather")
def gather(ctx: NodeContext) -> SSAValue:
    return ctx.value(Gather, [ctx.input(0), ctx.input(1)], axis=int(ctx.attr("axis", 0)))


@onnx_extractor("Pad")
def pad(ctx: NodeContext) -> SSAValue:
    rank = len(ctx.input_shape(0))
    mode = ctx.attr("mode", "constant")
    if ctx.opset < 11:
        if ctx.attr("pads") is None:
            raise ctx.fail("Pad before opset 11 needs its pads attribute", fix="give pads=[begins..., ends...]")
        pads, value = [int(p) for p in ctx.attr("pads")], float(ctx.attr("value", 0.0))
    elif ctx.has_input(1) and ctx.constant_input(1) is None:
        return pad_by(ctx, rank, mode)
    else:
        pads = int_list(ctx, ctx.required_constant(1, "pads"), "pads (input #1)")  # 1-D by the spec; a [1, 2r] one too
        fill = ctx.required_constant(2, "the constant_value") if ctx.has_input(2) else None
        value = float(fill.reshape(-1)[0]) if fill is not None and fill.size else 0.0
        axes = ints_input_or_attr(ctx, 3, "axes", "axes", since=18)
        padded = len(axes) if axes is not None else rank
        if len(pads) != 2 * padded or (axes is not None and any(not -rank <= a < rank for a in axes)):
            raise ctx.fail(f"pads has {len(pads)} values for {padded} axes (axes {axes}, input rank {rank}); "
                           "Pad takes a begin and an end per axis")
        if axes is not None:
            full = [0] * (2 * rank)
            for i, axis in enumerate(axes):
                full[axis % rank], full[rank + axis % rank] = pads[i], pads[len(axes) + i]
            pads = full
    if any(p < 0 for p in pads):
        return _crop_pad(ctx, pads, mode, value)
    if mode == "wrap":
        return _wrap_pad(ctx, pads[:rank], pads[rank:])
    if mode not in ("constant", "edge", "reflect"):
        raise ctx.fail(f"Pad mode '{mode}' is not supported", fix="use constant, edge, reflect or wrap")
    return ctx.value(Pad, [ctx.input(0)], pads_begin=pads[:rank], pads_end=pads[rank:], mode=mode, value=value)


def pad_by(ctx: NodeContext, rank: int, mode: str) -> SSAValue:
    """nn.pad_by: pads computed at run time (Ultralytics YOLO's nms=True export pads its kept
    detections to a fixed count); constant_value and axes must be constant. With axes, the
    run-time pads are spread over a [begins..., ends...] vector of one begin and one end per
    dim (zeros for the others), as nn.pad_by and OpenVINO's Pad take them."""
    if mode == "wrap":  # Tile + Slice by constant counts (_wrap_pad); NotConstantError: freezing can fix the pads
        raise NotConstantError(f"pads (input #1, '{ctx.node.input[1]}') must be known at conversion time for Pad mode 'wrap'",
                               ctx.node.input[1], where=ctx.where, fix="give static input shapes (--input_shape) so shape computations fold", code="E142")
    if mode not in ("constant", "edge", "reflect"):
        raise ctx.fail(f"Pad mode '{mode}' is not supported", fix="use constant, edge, reflect or wrap")
    count = ctx.input_shape(1)
    if np.dtype(from_xdsl(ctx.input_type(1).element_type)).kind not in "iu":  # a float pads vector is no count
        raise ctx.fail(f"pads (input #1) must be an integer tensor, got {ctx.input_type(1).element_type}", fix="give pads as int64")
    if len(count) != 1 or count[0] == DYN:
        raise ctx.fail(f"pads must be a 1-D tensor of known length, got shape {list(count)}")
    fill = ctx.required_constant(2, "the constant_value") if ctx.has_input(2) else None
    value = float(fill.reshape(-1)[0]) if fill is not None and fill.size else 0.0
    axes = ints_input_or_attr(ctx, 3, "axes", "axes", since=18)
    padded = len(axes) if axes is not None else rank
    if count[0] != 2 * padded or (axes is not None and any(not -rank <= a < rank for a in axes)):
        raise ctx.fail(f"pads has {count[0]} values for {padded} axes (axes {axes}, input rank {rank}); "
                       "Pad takes a begin and an end per axis")
    if axes is not None and len({a % rank for a in axes}) != len(axes):
        raise ctx.fail(f"axes {list(axes)} name an axis twice", fix="give each padded axis once")
    pads = ctx.input(1)
    if axes is not None and [a % rank for a in axes] != list(range(rank)):
        where = {a % rank: i for i, a in enumerate(axes)}
        zero = ctx.constant(np.zeros(1, np.dtype(from_xdsl(ctx.input_type(1).element_type))), "/pads/zero")
        parts = []
        for j in range(2 * rank):
            i = where.get(j % rank)
            source = None if i is None else (j // rank) * len(axes) + i
            parts.append(zero if source is None else ctx.value(Slice, [pads], suffix=f"/pads/{j}", begins=[source], ends=[source + 1], axes=[0]))
        pads = ctx.value(Concat, parts, suffix="/pads", axis=0)
    return ctx.value(PadBy, [ctx.input(0), pads], mode=mode, value=value)


def _crop_pad(ctx: NodeContext, pads: list[int], mode: str, value: float) -> SSAValue:
    """Pad with negative pads (NASNet's `pad[:, :, 1:, 1:]` stem cells): a constant Pad of the
    positive parts, then a Slice per cropped axis (its padded size must be known)."""
    shape, rank = list(ctx.input_shape(0)), len(ctx.input_shape(0))
    if mode != "constant":
        raise ctx.fail(f"negative pads (cropping) with Pad mode '{mode}' are not supported", fix="use mode constant, or Slice to crop")
    begin, end = pads[:rank], pads[rank:]
    x = ctx.input(0)
    if any(p > 0 for p in pads):
        x = ctx.value(Pad, [x], suffix="/pad", pads_begin=[max(p, 0) for p in begin], pads_end=[max(p, 0) for p in end], mode=mode, value=value)
    for axis, (b, e) in enumerate(zip(begin, end)):
        if b >= 0 and e >= 0:
            continue
        if shape[axis] == DYN:
            raise ctx.fail(f"negative pads (cropping) need axis {axis} known", fix="give static input shapes")
        size = shape[axis] + max(b, 0) + max(e, 0)
        x = ctx.value(Slice, [x], suffix=f"/crop{axis}", begins=[-min(b, 0)], ends=[size + min(e, 0)], axes=[axis])
    return x


def _wrap_pad(ctx: NodeContext, begin: list[int], end: list[int]) -> SSAValue:
    """Pad mode 'wrap' (periodic, numpy's np.pad 'wrap'; OpenVINO's Pad has no such mode): per
    padded axis of size n, the input tiled 1 + ceil(b/n) + ceil(e/n) times, then sliced to
    b + n + e elements starting b elements before a copy of the input."""
    x, shape = ctx.input(0), list(ctx.input_shape(0))
    for axis, (b, e) in enumerate(zip(begin, end)):
        if b == 0 and e == 0:
            continue
        n = shape[axis]
        if n == DYN or n == 0:
            raise ctx.fail(f"Pad mode 'wrap' needs axis {axis} known and non-empty, got {'?' if n == DYN else n}", fix="give static input shapes")
        before, after = -(-b // n), -(-e // n)
        repeats = [1] * len(shape)
        repeats[axis] = 1 + before + after
        tiled = ctx.value(Tile, [x], suffix=f"/wrap{axis}/tile", repeats=repeats)
        start = before * n - b
        x = ctx.value(Slice, [tiled], suffix=f"/wrap{axis}", begins=[start], ends=[start + b + n + e], axes=[axis])
        shape[axis] = b + n + e
    return x


@onnx_extractor("Tile")
def tile(ctx: NodeContext) -> SSAValue:
    repeats = _vector(ctx, 1, "repeats")
    return ctx.value(Tile, [ctx.input(0)], repeats=repeats)


def _vector(ctx: NodeContext, index: int, what: str) -> list[int]:
    """A constant 1-D integer input (a 0-d one was iterated: TypeError)."""
    array = ctx.required_constant(index, what)
    if array.ndim != 1:
        raise ctx.fail(f"{what} (input #{index}) must be a 1-D tensor, got shape {list(array.shape)}", fix=f"give {what} as a 1-D int64 tensor")
    return int_list(ctx, array, f"{what} (input #{index})")


@onnx_extractor("Expand")
def expand(ctx: NodeContext) -> SSAValue:
    """A Tile where the target shape is known; else nn.broadcast_to (ONNX's Expand is
    numpy's broadcasting both ways, as OpenVINO's bidirectional Broadcast)."""
    if ctx.constant_input(1) is None:
        return ctx.value(BroadcastTo, [ctx.input(0), ctx.input(1)])
    target = _vector(ctx, 1, "the target shape")
    x = ctx.input(0)
    shape = list(ctx.input_shape(0))
    if len(target) > len(shape):
        x = ctx.value(Unsqueeze, [x], suffix="/unsqueeze", axes=list(range(len(target) - len(shape))))
        shape = [1] * (len(target) - len(shape)) + shape
    target = [1] * (len(shape) - len(target)) + target
    if any(s == DYN and t != 1 for s, t in zip(shape, target)):
        # a run-time dim (a MoE's routed token count, JetMoE) that is 1 or the target's:
        # which one, and so whether it repeats, is known only at run time
        return ctx.value(BroadcastTo, [ctx.input(0), ctx.input(1)])
    repeats = [t if s == 1 else 1 for s, t in zip(shape, target)]
    return ctx.value(Tile, [x], repeats=repeats)


def _block_shuffle(ctx: NodeContext, split: list[int], order: list[int], result: list[int]) -> SSAValue:
    x = ctx.value(Reshape, [ctx.input(0)], suffix="/split", shape=split)
    x = ctx.value(Permute, [x], suffix="/permute", order=order)
    return ctx.value(Reshape, [x], shape=result)


@onnx_extractor("DepthToSpace")
def depth_to_space(ctx: NodeContext) -> SSAValue:
    _, c, h, w = ctx.input_shape(0, rank=4)
    bs = int(ctx.attr("blocksize"))
    if DYN in (c, h, w):
        raise ctx.fail("DepthToSpace needs static channel and spatial sizes")
    out = [0, c // (bs * bs), h * bs, w * bs]
    if ctx.attr("mode", "DCR") == "DCR":
        return _block_shuffle(ctx, [0, bs, bs, c // (bs * bs), h, w], [0, 3, 4, 1, 5, 2], out)
    return _block_shuffle(ctx, [0, c // (bs * bs), bs, bs, h, w], [0, 1, 4, 2, 5, 3], out)


@onnx_extractor("SpaceToDepth")
def space_to_depth(ctx: NodeContext) -> SSAValue:
    _, c, h, w = ctx.input_shape(0, rank=4)
    bs = int(ctx.attr("blocksize"))
    if DYN in (c, h, w):
        raise ctx.fail("SpaceToDepth needs static channel and spatial sizes")
    # DCR puts the block offset before the channel in the output channel index, CRD after it
    order = [0, 1, 3, 5, 2, 4] if ctx.attr("mode", "DCR") == "CRD" else [0, 3, 5, 1, 2, 4]
    return _block_shuffle(ctx, [0, c, h // bs, bs, w // bs, bs], order, [0, c * bs * bs, h // bs, w // bs])
