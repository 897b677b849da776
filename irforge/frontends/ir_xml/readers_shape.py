"""Readers of the windowed, normalisation, reduction and data movement operations.

Their shape-like inputs (axes, shapes, pads, sizes) must be constants: `nn` holds them as
properties. Group* weights carry the group as a leading axis, which `nn` folds into the
channel axis.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import SSAValue

from irforge.dialects.nn.activation import Activation
from irforge.dialects.nn.conv import Convolution, Deconvolution, Pooling
from irforge.dialects.nn.elementwise import Convert, Eltwise
from irforge.dialects.nn.indexing import ReshapeTo, ShapeOf
from irforge.dialects.nn.normalization import GRN, MVN, Norm, Normalize, SoftMax
from irforge.dialects.nn.reduce import ArgMax, Reduce
from irforge.dialects.nn.resample import Resample, ResampleBy, ResampleTo
from irforge.dialects.nn.unpool import MaxPoolIndices
from irforge.dialects.nn.shape import Concat, Gather, Pad, Permute, Reshape, Split, Squeeze, Tile, Unsqueeze
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader
from irforge.weights.dtypes import to_xdsl


def window(ctx: LayerContext) -> dict[str, object]:
    auto_pad = ctx.attr("auto_pad", "explicit").lower()
    props: dict[str, object] = {"auto_pad": "explicit" if auto_pad == "notset" else auto_pad}
    for name in ("strides", "pads_begin", "pads_end", "dilations"):
        if name in ctx.layer.data:
            props[name] = ctx.ints(name)
    return props


@ir_layer_reader("Convolution", "GroupConvolution")
def convolution(ctx: LayerContext) -> SSAValue:
    if ctx.layer.type == "GroupConvolution":
        g, o, i, *k = ctx.shape(1)
        w, group = ctx.reshaped(1, (g * o, i, *k), "/weights"), g
    else:
        w, group = ctx.input(1), 1
    return ctx.value(Convolution, [ctx.input(0), w], group=group, **window(ctx))


def output_shape_window(ctx: LayerContext, kernel: Sequence[int]) -> tuple[dict[str, object], list[int]]:
    """Explicit pads giving the spatial dims of the output_shape input, and the zeros to
    append where the output is larger than the transposed convolution. OpenVINO crops
    pads_begin (explicit) or a share of the total crop (same_upper: the larger half,
    same_lower: the smaller) from the start, the rest from the end."""
    out, dims = ctx.const_ints(2, "output_shape"), ctx.shape(0)[2:]
    if len(out) != len(dims) or min(dims, default=0) < 0:
        raise ctx.fail(f"output_shape {out} needs {len(dims)} values and static input dims, got input {list(dims)}", fix="give static input shapes")
    ones, zeros = ",".join("1" * len(dims)), ",".join("0" * len(dims))
    strides, dilations = ctx.ints("strides", ones), ctx.ints("dilations", ones)
    auto_pad = ctx.attr("auto_pad", "explicit").lower()
    given = ctx.ints("pads_begin", zeros) if auto_pad in ("explicit", "notset") else [0] * len(dims)
    begin, end, appended = [], [], []
    for size, k, s, d, o, b, p in zip(dims, kernel, strides, dilations, out, given, ctx.ints("output_padding", zeros)):
        full = s * (size - 1) + d * (k - 1) + 1
        if auto_pad in ("same_upper", "same_lower"):
            total = max(full + p - o, 0)
            b = total - total // 2 if auto_pad == "same_upper" else total // 2
        begin.append(b)
        end.append(max(full - b - o, 0))
        appended.append(max(o - (full - b), 0))
    return {"auto_pad": "explicit", "strides": strides, "dilations": dilations, "pads_begin": begin, "pads_end": end}, appended


@ir_layer_reader("ConvolutionBackpropData", "GroupConvolutionBackpropData")
def deconvolution(ctx: LayerContext) -> SSAValue:
    if ctx.layer.type == "GroupConvolutionBackpropData":
        g, i, o, *k = ctx.shape(1)
        w, group = ctx.reshaped(1, (g * i, o, *k), "/weights"), g
    else:
        w, group = ctx.input(1), 1
        k = list(ctx.shape(1)[2:])
    if ctx.num_inputs < 3:
        props = window(ctx)
        if "output_padding" in ctx.layer.data:
            props["output_padding"] = ctx.ints("output_padding")
        return ctx.value(Deconvolution, [ctx.input(0), w], group=group, **props)
    props, appended = output_shape_window(ctx, k)
    y = ctx.value(Deconvolution, [ctx.input(0), w], suffix="/deconv" if any(appended) else "", group=group, **props)
    if any(appended):
        y = ctx.value(Pad, [y], pads_begin=[0] * (len(k) + 2), pads_end=[0, 0, *appended], mode="constant", value=0.0)
    return y


@ir_layer_reader("MaxPool", "AvgPool")
def pooling(ctx: LayerContext) -> SSAValue | Sequence[SSAValue | None]:
    props = window(ctx)
    rounding = ctx.attr("rounding_type", "floor").lower()
    props["rounding_type"] = "ceil" if rounding == "ceil_torch" else rounding
    if ctx.layer.type == "AvgPool":
        props["exclude_pad"] = ctx.bool("exclude-pad", "false")
        props.pop("dilations", None)
    if ctx.layer.type == "MaxPool" and ctx.output_used(1):
        return max_pool_with_indices(ctx, props)
    return ctx.value(Pooling, [ctx.input(0)], method="max" if ctx.layer.type == "MaxPool" else "avg", kernel=ctx.ints("kernel"), **props)


def max_pool_with_indices(ctx: LayerContext, props: dict[str, object]) -> Sequence[SSAValue | None]:
    """MaxPool-8/14 with its indices output used: nn.pooling for the values (if used) and
    nn.max_pool_indices for the indices (flat from `axis`, i64 or i32)."""
    values = None
    if ctx.output_used(0):
        values = ctx.value(Pooling, [ctx.input(0)], suffix="/values", method="max", kernel=ctx.ints("kernel"), **props)
    axis = ctx.int("axis") if "axis" in ctx.layer.data else 0
    rank = len(ctx.shape(0))
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for rank {rank}")
    index = ctx.value(MaxPoolIndices, [ctx.input(0)], kernel=ctx.ints("kernel"), axis=axis % rank, **props)
    if ctx.attr("index_element_type", "i64") == "i32":
        index = ctx.value(Convert, [index], suffix="/i32", destination_type=to_xdsl(np.dtype(np.int32)))
    return [values, index]


REDUCTIONS = {"ReduceMean": "mean", "ReduceSum": "sum", "ReduceMax": "max", "ReduceMin": "min", "ReduceProd": "prod", "ReduceL1": "l1", "ReduceL2": "l2"}


@ir_layer_reader(*REDUCTIONS)
def reduce(ctx: LayerContext) -> SSAValue:
    axes = ctx.const_ints(1, "axes")
    if not axes:  # reducing over no axis changes nothing
        return ctx.input(0)
    return ctx.value(Reduce, [ctx.input(0)], operation=REDUCTIONS[ctx.layer.type], axes=axes, keep_dims=ctx.bool("keep_dims", "false"))


@ir_layer_reader("SoftMax", "LogSoftmax")
def softmax(ctx: LayerContext) -> SSAValue:
    return ctx.value(SoftMax, [ctx.input(0)], axis=ctx.int("axis", "1"), log=ctx.layer.type == "LogSoftmax")


def normalized_axes(ctx: LayerContext, index: int) -> list[int]:
    rank = ctx.rank(0)
    return sorted(a % rank for a in ctx.const_ints(index, "axes")) if rank else []


@ir_layer_reader("LRN")
def lrn(ctx: LayerContext) -> SSAValue:
    axes, rank = normalized_axes(ctx, 1), ctx.rank(0)
    if axes == [1]:
        region = "across"
    elif axes == list(range(2, rank)) and axes:
        region = "same"
    else:
        raise ctx.fail(f"LRN over axes {axes} is not supported", fix="nn.lrn covers the channels [1] or all spatial axes")
    props = {p: ctx.float(p) for p in ("alpha", "beta", "bias")}
    return ctx.value(Norm, [ctx.input(0)], size=ctx.int("size"), region=region, **props)


@ir_layer_reader("MVN")
def mvn(ctx: LayerContext) -> SSAValue:
    props = {"normalize_variance": ctx.bool("normalize_variance", "true"), "eps": ctx.float("eps")}
    if ctx.num_inputs > 1:  # MVN-6: axes as an input
        axes, eps_mode = normalized_axes(ctx, 1), ctx.attr("eps_mode", "inside_sqrt").lower()
    else:  # MVN-1: OpenVINO adds its eps to the variance
        rank, eps_mode = ctx.rank(0), "inside_sqrt"
        if ctx.attr("reduction_axes", "").strip():
            axes = sorted(a % rank for a in ctx.ints("reduction_axes"))
        else:
            axes = list(range(1 if ctx.bool("across_channels", "false") else 2, rank))
    return ctx.value(MVN, [ctx.input(0)], axes=axes, eps_mode=eps_mode, **props)


@ir_layer_reader("NormalizeL2")
def normalize_l2(ctx: LayerContext) -> SSAValue:
    """nn.normalize where it fits (eps added, over [1] or [1..rank-1]), else the formula:
    x / sqrt(sum of x^2 over axes, plus or at least eps)."""
    axes, rank, mode = normalized_axes(ctx, 1), ctx.rank(0), ctx.attr("eps_mode", "add").lower()
    if mode not in ("add", "max"):
        raise ctx.fail(f"NormalizeL2 eps_mode '{mode}' is not supported", fix="use add or max")
    x, eps = ctx.input(0), ctx.float("eps")
    if mode == "add" and rank >= 2 and axes in ([1], list(range(1, rank))):
        return ctx.value(Normalize, [x], across_spatial=axes != [1], eps=eps)
    if axes:
        squares = ctx.value(Reduce, [x], suffix="/sum_square", operation="sum_square", axes=axes, keep_dims=True)
    else:
        squares = ctx.value(Eltwise, [x, x], suffix="/square", operation="mul")
    dtype = ctx.layer.inputs[0].dtype or np.dtype(np.float32)
    bounded = ctx.value(Eltwise, [squares, ctx.constant(np.array(eps, dtype), "/eps")], suffix="/bounded", operation="sum" if mode == "add" else "max")
    norm = ctx.value(Activation, [bounded], suffix="/norm", kind="sqrt")
    return ctx.value(Eltwise, [x, norm], operation="div")


@ir_layer_reader("GRN")
def grn(ctx: LayerContext) -> SSAValue:
    return ctx.value(GRN, [ctx.input(0)], bias=ctx.float("bias"))


@ir_layer_reader("TopK")
def top_k(ctx: LayerContext) -> Sequence[SSAValue | None]:
    """TopK with k = 1: its values a max (min) reduction, its indices an ArgMax (ties give
    the first index)."""
    k, mode, axis = ctx.scalar(1, "k"), ctx.attr("mode"), ctx.int("axis")
    if k != 1 or mode not in ("max", "min"):
        raise ctx.fail(f"TopK with k = {k:g} and mode '{mode}' has no nn equivalent", fix="nn.argmax and nn.reduce give k = 1 (max or min) only")
    values = None
    if ctx.output_used(0):
        suffix = "/values" if ctx.output_used(1) else ""
        values = ctx.value(Reduce, [ctx.input(0)], suffix=suffix, operation=mode, axes=[axis], keep_dims=True)
    if not ctx.output_used(1):
        return [values, None]
    index = ctx.value(ArgMax, [ctx.input(0)], axis=axis, mode=mode, keep_dims=True)
    if ctx.attr("index_element_type", "i32") == "i32":
        index = ctx.value(Convert, [index], suffix="/i32", destination_type=to_xdsl(np.dtype(np.int32)))
    return [values, index]


INTERPOLATE_MODES = {"nearest": "nearest", "linear_onnx": "linear", "cubic": "cubic"}


@ir_layer_reader("Interpolate")
def interpolate(ctx: LayerContext) -> SSAValue:
    mode, rank = ctx.attr("mode"), ctx.rank(0)
    if mode not in INTERPOLATE_MODES or ctx.bool("antialias", "false"):
        raise ctx.fail(f"Interpolate mode '{mode}' with antialias {ctx.attr('antialias', 'false')} is not supported", fix="nn.resample has nearest, linear_onnx and cubic, without antialias")
    x, dims = interpolate_padded(ctx)
    by_scales = ctx.attr("shape_calculation_mode") == "scales"
    target_index = (2 if by_scales else 1) if ctx.layer.version == "opset4" else 1
    axes_index = 3 if ctx.layer.version == "opset4" else 2
    axes = ctx.const_ints(axes_index, "axes") if ctx.num_inputs > axes_index else list(range(rank))
    props: dict[str, object] = {
        "mode": INTERPOLATE_MODES[mode],
        "coordinate_transformation_mode": ctx.attr("coordinate_transformation_mode", "half_pixel"),
        "nearest_mode": ctx.attr("nearest_mode", "round_prefer_floor"),
        "cubic_coeff_a": ctx.float("cube_coeff", "-0.75"),
    }
    if ctx.importer.constant_at(ctx.source(target_index)) is None:  # sizes or scales computed at run time
        if x is not ctx.input(0):
            raise ctx.fail("Interpolate with pads and sizes or scales computed at run time is not supported", fix="pad with a Pad layer first")
        return ctx.value(ResampleBy if by_scales else ResampleTo, [x, ctx.input(target_index)], axes=axes, **props)
    target = ctx.const(target_index, ("scales" if by_scales else "sizes") if ctx.layer.version == "opset4" else "scales_or_sizes")
    full: list[float | int] = [1.0] * rank if by_scales else list(dims)
    values = np.asarray(target).reshape(-1)
    if len(values) != len(axes) or any(not -rank <= a < rank for a in axes) or (not by_scales and values.dtype.kind not in "iu"):
        # zip cut the longer list, `% rank` resized another axis, int() of a NaN size raised
        raise ctx.fail(f"Interpolate {'scales' if by_scales else 'sizes'} {values[:8].tolist()} ({values.dtype}) do not fit axes {axes} of a rank-{rank} input",
                       fix="give one integer size (or scale) per axis, axes within the rank")
    for axis, v in zip(axes, values):
        full[axis % rank] = float(v) if by_scales else int(v)
    props["scales" if by_scales else "sizes"] = full
    return ctx.value(Resample, [x], **props)


def interpolate_padded(ctx: LayerContext) -> tuple[SSAValue, tuple[int, ...]]:
    """The input with Interpolate's zero pads (applied before resampling), and its dims."""
    rank, dims = ctx.rank(0), ctx.shape(0)
    begin, end = ((ctx.ints(name, "0") + [0] * rank)[:rank] for name in ("pads_begin", "pads_end"))
    if not any(begin + end):
        return ctx.input(0), dims
    x = ctx.value(Pad, [ctx.input(0)], suffix="/pad", pads_begin=begin, pads_end=end, mode="constant", value=0.0)
    return x, tuple(d + b + e if d >= 0 else d for d, b, e in zip(dims, begin, end))


@ir_layer_reader("Concat")
def concat(ctx: LayerContext) -> SSAValue:
    return ctx.value(Concat, [ctx.input(i) for i in range(ctx.num_inputs)], axis=ctx.int("axis"))


@ir_layer_reader("VariadicSplit", "Split")
def split(ctx: LayerContext) -> Sequence[SSAValue]:
    axis, rank = int(ctx.scalar(1, "axis")), ctx.rank(0)
    if not -rank <= axis < rank:
        raise ctx.fail(f"{ctx.layer.type} axis {axis} is out of range for an input of rank {rank}", fix="give an axis in [-rank, rank)")
    size = ctx.shape(0)[axis]
    if ctx.layer.type == "Split":
        if ctx.int("num_splits") < 1:
            raise ctx.fail(f"Split num_splits {ctx.int('num_splits')} must be at least 1", fix="give a positive num_splits")
        lengths = [size // ctx.int("num_splits")] * ctx.int("num_splits")
    else:
        lengths = ctx.const_ints(2, "split_lengths")
        if -1 in lengths:
            lengths[lengths.index(-1)] = size - sum(n for n in lengths if n != -1)
    return ctx.add(Split, [ctx.input(0)], num_results=len(lengths), axis=axis, split_lengths=lengths)


@ir_layer_reader("Reshape")
def reshape(ctx: LayerContext) -> SSAValue:
    if ctx.importer.constant_at(ctx.source(1)) is None:  # a shape computed at run time
        return ctx.value(ReshapeTo, [ctx.input(0), ctx.input(1)], special_zero=ctx.bool("special_zero"))
    return ctx.value(Reshape, [ctx.input(0)], shape=ctx.const_ints(1, "shape"), special_zero=ctx.bool("special_zero"))


@ir_layer_reader("Transpose")
def transpose(ctx: LayerContext) -> SSAValue:
    order = ctx.const_ints(1, "order") or list(reversed(range(ctx.rank(0))))
    return ctx.value(Permute, [ctx.input(0)], order=order)


@ir_layer_reader("Squeeze")
def squeeze(ctx: LayerContext) -> SSAValue:
    axes = ctx.const_ints(1, "axes") if ctx.num_inputs > 1 else []
    return ctx.value(Squeeze, [ctx.input(0)], axes=axes or None)


@ir_layer_reader("Unsqueeze")
def unsqueeze(ctx: LayerContext) -> SSAValue:
    axes = ctx.const_ints(1, "axes")
    squeezed = ctx.importer.squeezed.get(ctx.input(0))
    if squeezed is not None and squeezed[1] == axes:
        # the value before a reader's squeeze: the op giving it now gives this layer's value
        value = squeezed[0]
        value.owner.properties["name"] = StringAttr(ctx.layer.name)  # type: ignore[union-attr]
        return value
    return ctx.value(Unsqueeze, [ctx.input(0)], axes=axes)


@ir_layer_reader("Tile")
def tile(ctx: LayerContext) -> SSAValue:
    repeats, rank = ctx.const_ints(1, "repeats"), ctx.rank(0)
    if len(repeats) > rank:
        raise ctx.fail(f"{len(repeats)} repeats for a rank-{rank} input is not supported", fix="unsqueeze the input first")
    return ctx.value(Tile, [ctx.input(0)], repeats=[1] * (rank - len(repeats)) + repeats)


@ir_layer_reader("Gather")
def gather(ctx: LayerContext) -> SSAValue:
    return ctx.value(Gather, [ctx.input(0), ctx.input(1)], axis=int(ctx.scalar(2, "axis")), batch_dims=ctx.int("batch_dims", "0"))


@ir_layer_reader("ShapeOf")
def shape_of(ctx: LayerContext) -> SSAValue:
    """Folded to a constant where the dims are known; else nn.shape_of (dims that depend on
    the data)."""
    dims = ctx.shape(0)
    dtype = np.int32 if ctx.attr("output_type", "i64") == "i32" else np.int64
    if any(d < 0 for d in dims):
        found = ctx.value(ShapeOf, [ctx.input(0)])
        return found if dtype == np.int64 else ctx.value(Convert, [found], suffix="/i32", destination_type=to_xdsl(np.dtype(dtype)))
    return ctx.constant(np.asarray(dims, dtype), "")
