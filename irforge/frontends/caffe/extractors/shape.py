"""Caffe layers that move, combine or reduce data: Concat, Slice, Eltwise, Flatten, Reshape,
Crop, Permute, Tile, ArgMax, Reduction and Interp."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from irforge.dialects.nn import ArgMax, Concat, Convert, Eltwise, Permute, Power, Reduce, Reshape, Resample, Slice, Split, Tile, TopK
from irforge.dialects.nn.base import product
from irforge.frontends.caffe.registry import LayerContext, caffe_extractor


def legacy_axis(ctx: LayerContext, param: str, legacy: str) -> int:
    """`axis`, or the deprecated `concat_dim`/`slice_dim` when only that is given."""
    p = ctx.param(param)
    axis = p.axis if p.HasField("axis") or not p.HasField(legacy) else getattr(p, legacy)
    return axis % len(ctx.shape(0))


@caffe_extractor("Concat")
def concat(ctx: LayerContext) -> SSAValue:
    if ctx.num_bottoms == 1:
        return ctx.bottom(0)
    return ctx.value(Concat, ctx.bottoms(), axis=legacy_axis(ctx, "concat_param", "concat_dim"))


@caffe_extractor("Slice")
def slice_layer(ctx: LayerContext) -> list[SSAValue]:
    axis = legacy_axis(ctx, "slice_param", "slice_dim")
    size = ctx.shape(0)[axis]
    points = [int(v) for v in ctx.param("slice_param").slice_point]
    if points:
        if len(points) != ctx.num_tops - 1:
            raise ctx.fail(f"{len(points)} slice points for {ctx.num_tops} tops (needs one fewer)")
        bounds = [0, *points, size]
        lengths = [b - a for a, b in zip(bounds, bounds[1:])]
    elif size % ctx.num_tops:
        raise ctx.fail(f"axis {axis} of size {size} does not split evenly into {ctx.num_tops} tops")
    else:
        lengths = [size // ctx.num_tops] * ctx.num_tops
    return ctx.add(Split, [ctx.bottom(0)], num_results=ctx.num_tops, axis=axis, split_lengths=lengths)


@caffe_extractor("Eltwise")
def eltwise(ctx: LayerContext) -> SSAValue:
    p = ctx.param("eltwise_param")
    operation = {0: "mul", 1: "sum", 2: "max"}[p.operation]
    terms = ctx.bottoms()
    coeffs = [float(c) for c in p.coeff]
    if coeffs:
        if operation != "sum" or len(coeffs) != len(terms):
            raise ctx.fail(f"coeff needs one value per bottom ({len(terms)}) and operation SUM")
        terms = [
            t if c == 1.0 else ctx.value(Power, [t], suffix=f"/coeff{i}", scale=c)
            for i, (t, c) in enumerate(zip(terms, coeffs))
        ]
    result = terms[0]
    for i, term in enumerate(terms[1:], start=2):
        suffix = "" if i == len(terms) else f"/{operation}{i - 1}"
        result = ctx.value(Eltwise, [result, term], suffix=suffix, operation=operation)
    return result


def reshape_to(ctx: LayerContext, shape: list[int]) -> SSAValue:
    return ctx.value(Reshape, [ctx.bottom(0)], shape=shape, special_zero=False)


@caffe_extractor("Flatten")
def flatten(ctx: LayerContext) -> SSAValue:
    p, x = ctx.param("flatten_param"), ctx.shape(0)
    first, last = p.axis % len(x), p.end_axis % len(x)
    return reshape_to(ctx, [*x[:first], product(x[first : last + 1]), *x[last + 1 :]])


@caffe_extractor("Reshape")
def reshape(ctx: LayerContext) -> SSAValue:
    p, x = ctx.param("reshape_param"), ctx.shape(0)
    start = p.axis if p.axis >= 0 else len(x) + p.axis + 1
    end = len(x) if p.num_axes == -1 else start + p.num_axes
    if not 0 <= start <= end <= len(x):
        raise ctx.fail(f"axis {p.axis} and num_axes {p.num_axes} do not fit an input of rank {len(x)}")
    # 0 copies the input size at the same position of the replaced range
    spec = [x[start + i] if d == 0 else int(d) for i, d in enumerate(p.shape.dim)]
    if spec.count(-1) > 1:
        raise ctx.fail(f"shape {list(p.shape.dim)} has more than one -1")
    if -1 in spec:
        known_size = product(d for d in spec if d != -1)
        spec[spec.index(-1)] = product(x[start:end]) // known_size if known_size else 0
    return reshape_to(ctx, [*x[:start], *spec, *x[end:]])


@caffe_extractor("Crop")
def crop(ctx: LayerContext) -> SSAValue:
    p, x, reference = ctx.param("crop_param"), ctx.shape(0), ctx.shape(1)
    first = p.axis % len(x)
    axes = list(range(first, len(x)))
    offsets = [int(o) for o in p.offset] or [0]
    if len(offsets) == 1:
        offsets *= len(axes)
    if len(offsets) != len(axes):
        raise ctx.fail(f"{len(offsets)} offsets for {len(axes)} cropped axes")
    ends = [o + reference[a] for o, a in zip(offsets, axes)]
    if any(e > x[a] for e, a in zip(ends, axes)):
        raise ctx.fail(f"cropping {list(reference)} at offsets {offsets} runs past the input {list(x)}")
    return ctx.value(Slice, [ctx.bottom(0)], begins=offsets, ends=ends, axes=axes)


@caffe_extractor("Permute")
def permute(ctx: LayerContext) -> SSAValue:
    order = [int(o) for o in ctx.param("permute_param").order]
    order += [a for a in range(len(ctx.shape(0))) if a not in order]  # SSD lets the tail be implied
    return ctx.value(Permute, [ctx.bottom(0)], order=order)


@caffe_extractor("Tile")
def tile(ctx: LayerContext) -> SSAValue:
    p, x = ctx.param("tile_param"), ctx.shape(0)
    repeats = [1] * len(x)
    repeats[p.axis % len(x)] = int(p.tiles)
    return ctx.value(Tile, [ctx.bottom(0)], repeats=repeats)


@caffe_extractor("ArgMax")
def argmax(ctx: LayerContext) -> SSAValue:
    """Caffe's ArgMax (argmax_layer.cpp): the top_k largest along `axis` (or over all of a
    sample's values), as float indices, their values with out_max_val. Caffe sorts (value,
    index) pairs with std::greater, so of equal values the larger index comes first: the
    selection runs on the input reversed along the axis (TopK prefers the lower index there)."""
    p, x = ctx.param("argmax_param"), ctx.shape(0)
    k, with_values = int(p.top_k), bool(p.out_max_val)
    if p.HasField("axis"):
        axis = p.axis % len(x)
        source, dim = ctx.bottom(0), x[axis]
    else:  # over all of a sample's values
        axis, dim = 1, product(x[1:])
        source = ctx.value(Reshape, [ctx.bottom(0)], suffix="/flatten", shape=[x[0], dim], special_zero=False)
    if not 1 <= k <= dim:
        raise ctx.fail(f"top_k {k} must be in [1, {dim}] (the number of values it chooses from)")
    if k == 1 and not with_values:
        index = ctx.value(ArgMax, [source], suffix="/argmax", axis=axis, keep_dims=True, select_last_index=True)
        values = None
    else:
        backwards = ctx.value(Slice, [source], suffix="/reverse", begins=[-1], ends=[-(2**63)], axes=[axis], steps=[-1])
        top = ctx.add(TopK, [backwards], num_results=2, suffix="/top_k", k=k, axis=axis, mode="max", sort="value")
        last = ctx.importer.constant(np.array(dim - 1, np.int64), ctx.name + "/last")
        index, values = ctx.value(Eltwise, [last, top[1]], suffix="/index", operation="sub"), top[0]
    found = ctx.value(Convert, [index], suffix="/float" if p.HasField("axis") or with_values else "", destination_type=f32)
    if p.HasField("axis"):
        return values if with_values else found  # type: ignore[return-value]
    # [N, 1, top_k] indices, or [N, 2, top_k] indices then values, padded with 1s to the rank
    rows = [found, values] if with_values else [found]
    rows = [ctx.value(Reshape, [r], suffix=f"/row{i}", shape=[x[0], 1, k], special_zero=False) for i, r in enumerate(rows)]
    joined = ctx.value(Concat, rows, suffix="/rows", axis=1) if with_values else rows[0]
    shape = [x[0], len(rows), k, *[1] * (len(x) - 3)]
    return ctx.value(Reshape, [joined], shape=shape, special_zero=False)


REDUCTIONS = {1: "sum", 2: "l1", 3: "sum_square", 4: "mean"}


@caffe_extractor("Reduction")
def reduction(ctx: LayerContext) -> SSAValue:
    p, x = ctx.param("reduction_param"), ctx.shape(0)
    axes = list(range(p.axis % len(x), len(x)))  # Caffe reduces every axis from `axis` on
    reduced = ctx.value(Reduce, [ctx.bottom(0)], suffix="" if p.coeff == 1 else "/reduce", operation=REDUCTIONS[p.operation], axes=axes, keep_dims=False)
    return reduced if p.coeff == 1 else ctx.value(Power, [reduced], scale=float(p.coeff))


def interp_size(ctx: LayerContext, size: int) -> int:
    p = ctx.param("interp_param")
    if p.pad_beg or p.pad_end:
        raise ctx.fail("pad_beg/pad_end are not supported", fix="crop the input with a Crop layer instead")
    if p.shrink_factor != 1:
        size = (size - 1) // p.shrink_factor + 1
    if p.zoom_factor != 1:
        size = size + (size - 1) * (p.zoom_factor - 1)
    return size


@caffe_extractor("Interp")
def interp(ctx: LayerContext) -> SSAValue:
    # bilinear with aligned corners, as DeepLab's and PSPNet's Interp
    p, x = ctx.param("interp_param"), ctx.shape(0)
    if p.use_blob_size and ctx.num_bottoms < 2:  # a fork's flag: the size of bottom[1]
        raise ctx.fail("use_blob_size needs a second bottom giving the output size")
    if ctx.num_bottoms > 1:
        height, width = ctx.shape(1, rank=4)[2:4]
    elif p.height and p.width:
        height, width = p.height, p.width
    else:
        height, width = interp_size(ctx, x[2]), interp_size(ctx, x[3])
    return ctx.value(
        Resample, [ctx.bottom(0)], mode="linear", coordinate_transformation_mode="align_corners", sizes=[x[0], x[1], height, width]
    )
