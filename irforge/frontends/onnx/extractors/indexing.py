"""ONNX indexing ops -> nn.gather_elements / gather_nd / scatter_nd / scatter_elements /
one_hot / non_zero / top_k / cum_sum / range / is_nan / is_inf; Trilu as a Select with a
constant mask, GroupNormalization as Reshape -> MVN -> Reshape -> per-channel scale and bias."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import i32, i64
from xdsl.ir import SSAValue

from irforge.dialects.nn import MVN, Convert, Eltwise, Gather, Reshape, Select, Slice
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.boxes import NonMaxSuppression, ROIAlign
from irforge.frontends.onnx.checked_constants import one_float, one_int
from irforge.dialects.nn.indexing import (
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
    TopK,
)
from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl


def refuse(ctx: NodeContext, message: str, code: str, fix: str | None = None) -> IrforgeError:
    """A one-line error naming the node, with its code (E180: an attribute value irforge does
    not support; E181: dims that must be known are not)."""
    return IrforgeError(message, where=ctx.where, fix=fix, code=code)


def reduction(ctx: NodeContext) -> str:
    value = ctx.attr("reduction", "none")
    if value not in ("none", "add", "mul", "max", "min"):
        raise refuse(ctx, f"attribute reduction='{value}' is not supported", "E180", fix="use none, add, mul, max or min")
    return value


@onnx_extractor("GatherElements")
def gather_elements(ctx: NodeContext) -> SSAValue:
    """ONNX lets the indices be smaller than data in the other dims; OpenVINO wants them
    equal, so data is sliced to the indices' dims first."""
    data, axis = ctx.input(0), int(ctx.attr("axis", 0))
    shape, indices = ctx.input_shape(0), ctx.input_shape(1)
    if len(shape) == len(indices):
        cut = [a for a, (d, i) in enumerate(zip(shape, indices)) if a != axis % len(shape) and d != i and DYN not in (d, i)]
        if cut:
            data = ctx.value(Slice, [data], suffix="/data", axes=cut, begins=[0] * len(cut), ends=[indices[a] for a in cut])
    return ctx.value(GatherElements, [data, ctx.input(1)], axis=axis)


@onnx_extractor("GatherND")
def gather_nd(ctx: NodeContext) -> SSAValue:
    """With constant indices, no batch dims and static data (torch.export writes mask
    expansions so), a Gather of rows of the data viewed as [rows, rest...]: an op every
    backend runs. Otherwise nn.gather_nd."""
    batch_dims, indices, shape = int(ctx.attr("batch_dims", 0)), ctx.constant_input(1), ctx.input_shape(0)
    if batch_dims or indices is None or DYN in shape or ctx.constant_input(0) is not None or indices.shape[-1] == 0:
        return ctx.value(GatherND, [ctx.input(0), ctx.input(1)], batch_dims=batch_dims)
    depth = indices.shape[-1]
    indexed, rest = shape[:depth], list(shape[depth:])
    idx = np.asarray(indices, np.int64)
    if np.any((idx < -np.array(indexed)) | (idx >= np.array(indexed))):
        raise refuse(ctx, f"GatherND indices out of range for data dims {list(indexed)}", "E183", fix="check the model's constant indices")
    idx = np.where(idx < 0, idx + np.array(indexed), idx)
    rows = np.ravel_multi_index(tuple(np.moveaxis(idx, -1, 0)), indexed).astype(np.int64)
    table = ctx.value(Reshape, [ctx.input(0)], suffix="/rows", shape=[int(np.prod(indexed)), *rest], special_zero=False)
    return ctx.value(Gather, [table, ctx.constant(rows, "/row_indices")], axis=0)


@onnx_extractor("ScatterND")
def scatter_nd(ctx: NodeContext) -> SSAValue:
    return ctx.value(ScatterND, [ctx.input(0), ctx.input(1), ctx.input(2)], reduction=reduction(ctx))


@onnx_extractor("ScatterElements", "Scatter")
def scatter_elements(ctx: NodeContext) -> SSAValue:
    axis = int(ctx.attr("axis", 0))
    return ctx.value(ScatterElements, [ctx.input(0), ctx.input(1), ctx.input(2)], axis=axis, reduction=reduction(ctx))


@onnx_extractor("OneHot")
def one_hot(ctx: NodeContext) -> SSAValue:
    depth = ctx.required_constant(1, "OneHot's depth").reshape(-1)
    values = ctx.required_constant(2, "OneHot's values").reshape(-1)
    indices = ctx.input(0)
    if ctx.input_type(0).element_type not in (i32, i64):  # ONNX allows any numeric indices
        indices = ctx.value(Convert, [indices], suffix="/indices", destination_type=i64)
    off, on = ctx.constant(values[0], "/off"), ctx.constant(values[1], "/on")
    return ctx.value(OneHot, [indices, on, off], depth=int(depth[0]), axis=int(ctx.attr("axis", -1)))


@onnx_extractor("NonZero")
def non_zero(ctx: NodeContext) -> SSAValue:
    if not ctx.input_shape(0):  # onnxruntime returns [1, n] for a scalar, ONNX's shape inference [0, n]
        raise ctx.fail("NonZero of a scalar (rank 0) input: onnxruntime and ONNX's shape inference disagree on its result",
                       fix="give NonZero a 1-D input (Unsqueeze the scalar)")
    return ctx.value(NonZero, [ctx.input(0)])


@onnx_extractor("TopK")
def top_k(ctx: NodeContext) -> list[SSAValue]:
    """A k known at conversion time is a property; a k computed at run time (torchvision's
    `min(k, boxes.size(0))` after a data-dependent filter) is an operand, reshaped to the
    scalar OpenVINO's TopK-11 takes, and the results' axis is dynamic."""
    operands, k = [ctx.input(0)], 1
    if ctx.opset < 10:
        k = int(ctx.attr("k"))
    elif (constant := ctx.constant_input(1)) is not None:
        k = one_int(ctx, constant, "TopK's k")
    elif ctx.input_shape(1) not in ((), (1,)):
        raise refuse(ctx, f"TopK's k must hold one value, got shape {list(ctx.input_shape(1))}", "E182", fix="give k as a 1-element tensor")
    else:
        operands.append(ctx.value(Reshape, [ctx.input(1)], suffix="/k", shape=[], special_zero=False))
    largest, ordered = int(ctx.attr("largest", 1)), int(ctx.attr("sorted", 1))
    return ctx.add(
        TopK, operands, num_results=2, k=k, axis=int(ctx.attr("axis", -1)),
        mode="max" if largest else "min", sort="value" if ordered else "index",
    )  # fmt: skip


@onnx_extractor("CumSum")
def cum_sum(ctx: NodeContext) -> SSAValue:
    axis = one_int(ctx, ctx.required_constant(1, "CumSum's axis"), "CumSum's axis")
    exclusive, reverse = bool(ctx.attr("exclusive", 0)), bool(ctx.attr("reverse", 0))
    return ctx.value(CumSum, [ctx.input(0)], axis=axis, exclusive=exclusive, reverse=reverse)


@onnx_extractor("Range")
def range_(ctx: NodeContext) -> SSAValue:
    return ctx.value(Range, [ctx.input(0), ctx.input(1), ctx.input(2)])


@onnx_extractor("IsNaN")
def is_nan(ctx: NodeContext) -> SSAValue:
    return ctx.value(IsNaN, [ctx.input(0)])


@onnx_extractor("IsInf")
def is_inf(ctx: NodeContext) -> SSAValue:
    negative, positive = bool(ctx.attr("detect_negative", 1)), bool(ctx.attr("detect_positive", 1))
    return ctx.value(IsInf, [ctx.input(0)], detect_negative=negative, detect_positive=positive)


@onnx_extractor("Trilu")
def trilu(ctx: NodeContext) -> SSAValue:
    """Trilu keeps the elements on and below (lower) or above (upper) diagonal k of the last
    two dims: a Select of x and 0 by a constant mask, which needs those two dims known."""
    shape = ctx.input_shape(0)
    if len(shape) < 2 or DYN in shape[-2:]:
        raise refuse(ctx, f"Trilu needs the last two dims known, got {[d if d != DYN else '?' for d in shape]}", "E181", fix="give static input shapes")
    k = one_int(ctx, ctx.required_constant(1, "Trilu's k"), "Trilu's k") if ctx.has_input(1) else 0
    rows, cols = np.indices(shape[-2:])
    mask = cols - rows >= k if int(ctx.attr("upper", 1)) else cols - rows <= k
    zero = ctx.constant(np.zeros((), from_xdsl(ctx.input_type(0).element_type)), "/zero")
    return ctx.value(Select, [ctx.constant(mask, "/mask"), ctx.input(0), zero])


@onnx_extractor("GroupNormalization")
def group_normalization(ctx: NodeContext) -> SSAValue:
    """Per sample and group of channels: (x - mean) / sqrt(var + eps) * scale + bias, with
    scale and bias per channel (opset 21) or, before, per group (opset 18)."""
    shape = ctx.input_shape(0)
    groups, channels = int(ctx.attr("num_groups")), shape[1]
    if DYN in shape[1:] or channels % groups:
        raise refuse(ctx, f"GroupNormalization needs known dims after the batch and channels {channels} divisible by num_groups {groups}", "E181", fix="give static input shapes")
    if int(ctx.attr("stash_type", 1)) != 1:
        raise refuse(ctx, f"attribute stash_type={ctx.attr('stash_type')} is not supported", "E180", fix="use stash_type=1 (float32 statistics)")
    grouped = ctx.value(Reshape, [ctx.input(0)], suffix="/groups", shape=[0, groups, -1], special_zero=True)
    normed = ctx.value(MVN, [grouped], suffix="/mvn", axes=[2], eps=float(ctx.attr("epsilon", 1e-5)))
    y = ctx.value(Reshape, [normed], suffix="/back", shape=[0, *shape[1:]], special_zero=True)
    scale, bias = ctx.required_constant(1, "scale"), ctx.required_constant(2, "bias")
    if scale.size == groups and groups != channels:  # opset 18: one value per group
        scale, bias = np.repeat(scale, channels // groups), np.repeat(bias, channels // groups)
    per_channel = (channels,) + (1,) * (len(shape) - 2)
    y = ctx.value(Eltwise, [y, ctx.constant(scale.reshape(per_channel), "/scale")], suffix="/mul", operation="mul")
    return ctx.value(Eltwise, [y, ctx.constant(bias.reshape(per_channel), "/bias")], operation="sum")


@onnx_extractor("RoiAlign")
def roi_align(ctx: NodeContext) -> SSAValue:
    mode = ctx.attr("mode", "avg")
    if mode not in ("avg", "max"):
        raise refuse(ctx, f"attribute mode='{mode}' is not supported", "E180", fix="use mode='avg' or 'max'")
    default = "half_pixel" if ctx.opset >= 16 else "output_half_pixel"
    transform = ctx.attr("coordinate_transformation_mode", default)
    if transform not in ("half_pixel", "output_half_pixel"):
        raise refuse(ctx, f"attribute coordinate_transformation_mode='{transform}' is not supported", "E180", fix="use half_pixel or output_half_pixel")
    return ctx.value(
        ROIAlign, [ctx.input(0), ctx.input(1), ctx.input(2)],
        pooled_h=int(ctx.attr("output_height", 1)), pooled_w=int(ctx.attr("output_width", 1)),
        spatial_scale=float(ctx.attr("spatial_scale", 1.0)), sampling_ratio=int(ctx.attr("sampling_ratio", 0)),
        aligned_mode="half_pixel" if transform == "half_pixel" else "asymmetric", mode=mode,
    )  # fmt: skip


@onnx_extractor("NonMaxSuppression")
def non_max_suppression(ctx: NodeContext) -> SSAValue:
    """The limits must be constants: they are properties (OpenVINO takes them as inputs, which
    irforge writes as Consts)."""

    def scalar(index: int, what: str, default: float) -> float:
        return one_float(ctx, ctx.required_constant(index, what), what) if ctx.has_input(index) else default

    # an integer, read as one: torchvision writes sys.maxsize, which a float rounds past i64
    limit = one_int(ctx, ctx.required_constant(2, "max_output_boxes_per_class"), "max_output_boxes_per_class") if ctx.has_input(2) else 0
    return ctx.value(
        NonMaxSuppression, [ctx.input(0), ctx.input(1)],
        max_output_boxes_per_class=limit,
        iou_threshold=scalar(3, "iou_threshold", 0.0), score_threshold=scalar(4, "score_threshold", float("-inf")),
        center_point_box=bool(ctx.attr("center_point_box", 0)),
    )  # fmt: skip
