"""TensorFlow constants, shape and data-movement ops (shape-like inputs folded to properties)."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Gather, Identity, Pad, Permute, Reshape, Slice, Split, Squeeze, Tile, Unsqueeze
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.elementwise import Convert
from irforge.dialects.nn.indexing import ShapeOf
from irforge.weights.dtypes import to_xdsl
from irforge.frontends.tf.loader import numpy_dtype, tensor_to_array
from irforge.frontends.tf.registry import NodeContext, tf_extractor

END = np.iinfo(np.int64).max
START = np.iinfo(np.int64).min


@tf_extractor("Const")
def const(ctx: NodeContext) -> SSAValue:
    return ctx.constant(tensor_to_array(ctx.node.attr["value"].tensor, ctx.where), "")


@tf_extractor("Shape")
def shape(ctx: NodeContext) -> SSAValue:
    """A constant where the dims are known; else nn.shape_of (a while-loop variable whose
    size changes per iteration), converted to out_type."""
    dims = ctx.input_shape(0)
    dtype = numpy_dtype(int(ctx.attr("out_type", 3)), ctx.where)
    if DYN in dims:
        found = ctx.value(ShapeOf, [ctx.input(0)], suffix="/i64")
        return found if dtype == np.int64 else ctx.value(Convert, [found], destination_type=to_xdsl(dtype))
    return ctx.constant(np.array(dims, dtype), "")


@tf_extractor("Fill")
def fill(ctx: NodeContext) -> SSAValue:
    dims = ctx.ints_input(0, "dims")
    value = ctx.required_constant(1, "value")
    return ctx.filled(dims, value, "")


@tf_extractor("Range")
def range_(ctx: NodeContext) -> SSAValue:
    start, limit, delta = (ctx.required_constant(i, "Range bounds").reshape(()) for i in range(3))
    return ctx.constant(np.arange(start, limit, delta).astype(start.dtype), "")


@tf_extractor("Reshape")
def reshape(ctx: NodeContext) -> SSAValue:
    return ctx.value(Reshape, [ctx.input(0)], shape=ctx.ints_input(1, "the target shape"), special_zero=False)


@tf_extractor("Squeeze")
def squeeze(ctx: NodeContext) -> SSAValue:
    axes = [int(a) for a in ctx.attr("squeeze_dims", []) or []]
    return ctx.value(Squeeze, [ctx.input(0)], axes=axes or None)


@tf_extractor("ExpandDims")
def expand_dims(ctx: NodeContext) -> SSAValue:
    axis = ctx.ints_input(1, "axis")[0]
    rank = len(ctx.input_shape(0))
    return ctx.value(Unsqueeze, [ctx.input(0)], axes=[axis + rank + 1 if axis < 0 else axis])


@tf_extractor("Transpose")
def transpose(ctx: NodeContext) -> SSAValue:
    return ctx.value(Permute, [ctx.input(0)], order=ctx.ints_input(1, "perm"))


@tf_extractor("ConcatV2")
def concat(ctx: NodeContext) -> SSAValue:
    axis = ctx.ints_input(ctx.num_inputs - 1, "axis")[0]
    return ctx.value(Concat, [ctx.input(i) for i in range(ctx.num_inputs - 1)], axis=axis)


@tf_extractor("Pack")
def pack(ctx: NodeContext) -> SSAValue:
    axis = int(ctx.attr("axis", 0))
    rank = len(ctx.input_shape(0)) + 1
    axis = axis + rank if axis < 0 else axis
    parts = [ctx.value(Unsqueeze, [ctx.input(i)], suffix=f"/{i}", axes=[axis]) for i in range(ctx.num_inputs)]
    return ctx.value(Concat, parts, axis=axis)


@tf_extractor("Unpack")
def unpack(ctx: NodeContext) -> list[SSAValue]:
    axis = int(ctx.attr("axis", 0)) % len(ctx.input_shape(0))
    count = int(ctx.attr("num"))
    parts = ctx.add(Split, [ctx.input(0)], num_results=count, suffix="/split", axis=axis, split_lengths=[1] * count)
    return [ctx.value(Squeeze, [p], suffix=f":{i}", axes=[axis]) for i, p in enumerate(parts)]


@tf_extractor("Split")
def split(ctx: NodeContext) -> list[SSAValue]:
    x_shape = ctx.input_shape(1)
    axis = ctx.ints_input(0, "axis")[0] % len(x_shape)
    count = int(ctx.attr("num_split"))
    if x_shape[axis] == DYN or x_shape[axis] % count:
        raise ctx.fail(f"cannot split axis {axis} of size {x_shape[axis]} into {count} equal parts")
    return ctx.add(Split, [ctx.input(1)], num_results=count, axis=axis, split_lengths=[x_shape[axis] // count] * count)


@tf_extractor("SplitV")
def split_v(ctx: NodeContext) -> list[SSAValue]:
    x_shape = ctx.input_shape(0)
    axis = ctx.ints_input(2, "axis")[0] % len(x_shape)
    sizes = ctx.ints_input(1, "size_splits")
    if sizes.count(-1) == 1 and x_shape[axis] != DYN:
        sizes[sizes.index(-1)] = x_shape[axis] - (sum(sizes) + 1)
    return ctx.add(Split, [ctx.input(0)], num_results=len(sizes), axis=axis, split_lengths=sizes)


@tf_extractor("Slice")
def slice_(ctx: NodeContext) -> SSAValue:
    begins, sizes = ctx.ints_input(1, "begin"), ctx.ints_input(2, "size")
    ends = [END if s == -1 else b + s for b, s in zip(begins, sizes)]
    return ctx.value(Slice, [ctx.input(0)], begins=begins, ends=ends)


@tf_extractor("StridedSlice")
def strided_slice(ctx: NodeContext) -> SSAValue:
    """Every mask, as TensorFlow's dense spec: one Slice over the input's axes, a Squeeze of
    the shrunk ones, an Unsqueeze of the new ones (at their place in the output)."""
    begins, ends, steps = (ctx.ints_input(i, what) for i, what in ((1, "begin"), (2, "end"), (3, "strides")))
    masks = {m: int(ctx.attr(m, 0)) for m in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")}
    if bin(masks["ellipsis_mask"]).count("1") > 1:
        raise ctx.fail("StridedSlice with more than one ellipsis is invalid", fix="the graph is malformed")
    rank = len(ctx.input_shape(0))
    if not len(begins) == len(ends) == len(steps) or 0 in steps:
        raise ctx.fail(f"begin, end and strides have {len(begins)}, {len(ends)} and {len(steps)} values (strides {steps})",
                       fix="the graph is malformed: one begin, end and non-zero stride per sliced axis")
    spec = dense_spec(len(steps), rank, masks)
    if any(not 0 <= axis < rank for kind, _, axes in spec if kind != "new" for axis in axes):
        raise ctx.fail(f"the slice spec ({len(steps)} entries, masks {masks}) reaches past the input's rank {rank}",
                       fix="the graph is malformed")
    dense_b, dense_e, dense_s, shrunk, new_axes = [0] * rank, [END] * rank, [1] * rank, [], []
    out_axis = 0
    for kind, sparse, axes in spec:
        if kind == "new":
            new_axes.append(out_axis)
            out_axis += 1
            continue
        for axis in axes:
            if kind == "full":
                out_axis += 1
                continue
            b, e, step = begins[sparse], ends[sparse], steps[sparse]
            if kind == "shrink":
                dense_b[axis], dense_e[axis] = b, END if b == -1 else b + 1
                shrunk.append(axis)
                continue
            dense_b[axis] = (0 if step > 0 else END) if masks["begin_mask"] >> sparse & 1 else b
            dense_e[axis] = (END if step > 0 else START) if masks["end_mask"] >> sparse & 1 else e
            dense_s[axis] = step
            out_axis += 1
    sliced = dense_b != [0] * rank or dense_e != [END] * rank or dense_s != [1] * rank
    y = ctx.input(0)
    if sliced:
        y = ctx.value(Slice, [y], suffix="/slice", begins=dense_b, ends=dense_e, steps=dense_s)
    if shrunk:
        y = ctx.value(Squeeze, [y], suffix="/shrink", axes=shrunk)
    if new_axes:
        y = ctx.value(Unsqueeze, [y], suffix="/new_axis", axes=new_axes)
    return ctx.value(Identity, [y])


def dense_spec(count: int, rank: int, masks: dict[str, int]) -> list[tuple[str, int, list[int]]]:
    """(kind, sparse index, input axes) per spec entry: kind is slice, shrink, new (no input
    axis), or full (an ellipsis's axes, and the axes after the last entry)."""
    bit = lambda mask, i: masks[mask] >> i & 1  # noqa: E731
    # an ellipsis covers the input axes the other entries (but new axes) do not consume
    consumed = sum(1 for i in range(count) if not bit("ellipsis_mask", i) and not bit("new_axis_mask", i))
    spec: list[tuple[str, int, list[int]]] = []
    axis = 0
    for i in range(count):
        if bit("ellipsis_mask", i):
            width = rank - consumed
            spec.append(("full", i, list(range(axis, axis + width))))
            axis += width
        elif bit("new_axis_mask", i):
            spec.append(("new", i, []))
        else:
            spec.append(("shrink" if bit("shrink_axis_mask", i) else "slice", i, [axis]))
            axis += 1
    if axis < rank:
        spec.append(("full", count, list(range(axis, rank))))
    return spec


@tf_extractor("Pad", "PadV2", "MirrorPad")
def pad(ctx: NodeContext) -> SSAValue:
    paddings = ctx.required_constant(1, "paddings").reshape(-1, 2).astype(np.int64)
    mode = "constant"
    if ctx.node.op == "MirrorPad":
        if ctx.attr("mode") != "REFLECT":
            raise ctx.fail(f"MirrorPad mode '{ctx.attr('mode')}' is not supported", fix="use REFLECT")
        mode = "reflect"
    value = float(ctx.required_constant(2, "constant_values").reshape(())) if ctx.node.op == "PadV2" else 0.0
    return ctx.value(
        Pad, [ctx.input(0)], pads_begin=paddings[:, 0].tolist(), pads_end=paddings[:, 1].tolist(), mode=mode, value=value
    )


@tf_extractor("Tile")
def tile(ctx: NodeContext) -> SSAValue:
    return ctx.value(Tile, [ctx.input(0)], repeats=ctx.ints_input(1, "multiples"))


@tf_extractor("GatherV2")
def gather(ctx: NodeContext) -> SSAValue:
    axis = ctx.ints_input(2, "axis")[0]
    return ctx.value(Gather, [ctx.input(0), ctx.input(1)], axis=axis, batch_dims=int(ctx.attr("batch_dims", 0)))
