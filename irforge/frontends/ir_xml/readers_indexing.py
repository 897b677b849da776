"""Readers of the indexing layers: GatherElements, GatherND, ScatterNDUpdate,
ScatterElementsUpdate, OneHot, NonZero, TopK, CumSum, Range, IsNaN and IsInf.

TopK with k = 1 keeps the older reading as a reduction and ArgMax (`readers_shape.top_k`),
which is how nn.argmax is written; other k read into nn.top_k. This module is imported after
`readers_shape`, so its TopK reader is the one registered.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn.boxes import NonMaxSuppression, ROIAlign
from irforge.dialects.nn.elementwise import Convert
from irforge.dialects.nn.shape import Reshape, Tile, Unsqueeze
from irforge.dialects.nn.indexing import (
    BroadcastTo,
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
from irforge.frontends.ir_xml import readers_shape
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader
from irforge.weights.dtypes import to_xdsl

def refuse(ctx: LayerContext, message: str, fix: str | None = None) -> IrforgeError:
    """E680: an attribute value or output of an indexing or box layer nn has no form for."""
    return IrforgeError(message, where=ctx.layer.label, fix=fix, code="E680")


REDUCTIONS = {"none": "none", "sum": "add", "prod": "mul", "max": "max", "min": "min"}


def reduction(ctx: LayerContext) -> str:
    value = ctx.attr("reduction", "none")
    if value not in REDUCTIONS:
        raise refuse(ctx, f"attribute reduction='{value}' is not supported", fix="nn scatters take none, sum, prod, max or min")
    return REDUCTIONS[value]


@ir_layer_reader("GatherElements")
def gather_elements(ctx: LayerContext) -> SSAValue:
    return ctx.value(GatherElements, [ctx.input(0), ctx.input(1)], axis=ctx.int("axis"))


@ir_layer_reader("GatherND")
def gather_nd(ctx: LayerContext) -> SSAValue:
    if ctx.layer.version == "opset5" and ctx.int("batch_dims", "0") > 0:
        raise refuse(ctx, "GatherND-5 with batch_dims > 0 flattens the batch dims, which nn.gather_nd does not", fix="use GatherND-8")
    return ctx.value(GatherND, [ctx.input(0), ctx.input(1)], batch_dims=ctx.int("batch_dims", "0"))


@ir_layer_reader("ScatterNDUpdate")
def scatter_nd(ctx: LayerContext) -> SSAValue:
    return ctx.value(ScatterND, [ctx.input(i) for i in range(3)], reduction=reduction(ctx))


@ir_layer_reader("ScatterElementsUpdate")
def scatter_elements(ctx: LayerContext) -> SSAValue:
    found = reduction(ctx)
    if found != "none" and not ctx.bool("use_init_val", "true"):
        raise refuse(ctx, "use_init_val=false is not supported", fix="nn.scatter_elements combines updates with the data's values")
    axis = int(ctx.scalar(3, "axis"))
    return ctx.value(ScatterElements, [ctx.input(i) for i in range(3)], axis=axis, reduction=found)


@ir_layer_reader("OneHot")
def one_hot(ctx: LayerContext) -> SSAValue:
    if ctx.attr("negative_indices_mode", "ignore_negative") != "normalize":
        raise refuse(ctx, "OneHot ignoring negative indices is not supported", fix="nn.one_hot counts negative indices from the end (negative_indices_mode=normalize)")
    depth = int(ctx.scalar(1, "depth"))
    return ctx.value(OneHot, [ctx.input(0), ctx.input(2), ctx.input(3)], depth=depth, axis=ctx.int("axis"))


@ir_layer_reader("NonZero")
def non_zero(ctx: LayerContext) -> SSAValue:
    found = ctx.value(NonZero, [ctx.input(0)])
    if ctx.attr("output_type", "i64") == "i32":
        found = ctx.value(Convert, [found], suffix="/i32", destination_type=to_xdsl(np.dtype(np.int32)))
    return found


@ir_layer_reader("TopK")
def top_k(ctx: LayerContext) -> Sequence[SSAValue | None]:
    operands, k = [ctx.input(0)], 1
    if ctx.importer.constant_at(ctx.source(1)) is None:  # k computed at run time
        k_value = ctx.input(1)
        operands.append(ctx.value(Reshape, [k_value], suffix="/k", shape=[], special_zero=False) if ctx.shape(1) else k_value)
    else:
        k = int(ctx.scalar(1, "k"))
        if k == 1:
            return readers_shape.top_k(ctx)
    # an unsorted or unstable TopK may order its results and ties as it likes: nn.top_k's
    # order (by value, ties by lower index) is one of those orders
    sort = "value" if ctx.attr("sort", "none") == "none" else ctx.attr("sort")
    values, indices = ctx.add(TopK, operands, num_results=2, k=k, axis=ctx.int("axis"), mode=ctx.attr("mode"), sort=sort)
    if ctx.attr("index_element_type", "i32") == "i32":
        indices = ctx.value(Convert, [indices], suffix="/i32", destination_type=to_xdsl(np.dtype(np.int32)))
    return [values, indices]


@ir_layer_reader("CumSum")
def cum_sum(ctx: LayerContext) -> SSAValue:
    axis = int(ctx.scalar(1, "axis")) if ctx.num_inputs > 1 else 0
    return ctx.value(CumSum, [ctx.input(0)], axis=axis, exclusive=ctx.bool("exclusive", "false"), reverse=ctx.bool("reverse", "false"))


@ir_layer_reader("Range")
def range_(ctx: LayerContext) -> SSAValue:
    return ctx.value(Range, [ctx.input(0), ctx.input(1), ctx.input(2)])


@ir_layer_reader("IsNaN")
def is_nan(ctx: LayerContext) -> SSAValue:
    return ctx.value(IsNaN, [ctx.input(0)])


@ir_layer_reader("IsInf")
def is_inf(ctx: LayerContext) -> SSAValue:
    return ctx.value(IsInf, [ctx.input(0)], detect_negative=ctx.bool("detect_negative", "true"), detect_positive=ctx.bool("detect_positive", "true"))


@ir_layer_reader("ROIAlign")
def roi_align(ctx: LayerContext) -> SSAValue:
    mode, aligned = ctx.attr("mode", "avg"), ctx.attr("aligned_mode", "asymmetric")
    if mode != "avg" or aligned not in ("asymmetric", "half_pixel_for_nn"):
        raise refuse(ctx, f"ROIAlign mode '{mode}' with aligned_mode '{aligned}' is not supported", fix="nn.roi_align averages (avg) with asymmetric or half_pixel_for_nn alignment")
    aligned = "half_pixel" if aligned == "half_pixel_for_nn" else aligned
    return ctx.value(
        ROIAlign, [ctx.input(i) for i in range(3)], pooled_h=ctx.int("pooled_h"), pooled_w=ctx.int("pooled_w"),
        sampling_ratio=ctx.int("sampling_ratio"), spatial_scale=ctx.float("spatial_scale"), aligned_mode=aligned,
    )  # fmt: skip


@ir_layer_reader("NonMaxSuppression")
def non_max_suppression(ctx: LayerContext) -> Sequence[SSAValue | None]:
    if ctx.output_used(1) or ctx.output_used(2):
        raise refuse(ctx, "NonMaxSuppression's selected_scores and valid_outputs are not supported", fix="nn.non_max_suppression gives the selected indices only")
    if ctx.bool("sort_result_descending", "true"):
        raise refuse(ctx, "sort_result_descending=true is not supported", fix="nn.non_max_suppression orders by image, class and score")
    if ctx.num_inputs > 5 and ctx.scalar(5, "soft_nms_sigma") != 0.0:
        raise refuse(ctx, "soft NMS (soft_nms_sigma != 0) is not supported")
    found = ctx.value(
        NonMaxSuppression, [ctx.input(0), ctx.input(1)],
        # an integer read as one: sys.maxsize (torchvision's "no limit") rounds past i64 as a float
        max_output_boxes_per_class=ctx.const_ints(2, "max_output_boxes_per_class")[0] if ctx.num_inputs > 2 else 0,
        iou_threshold=ctx.scalar(3, "iou_threshold") if ctx.num_inputs > 3 else 0.0,
        score_threshold=ctx.scalar(4, "score_threshold") if ctx.num_inputs > 4 else float("-inf"),
        center_point_box=ctx.attr("box_encoding", "corner") == "center",
    )  # fmt: skip
    if ctx.attr("output_type", "i64") == "i32":
        found = ctx.value(Convert, [found], suffix="/i32", destination_type=to_xdsl(np.dtype(np.int32)))
    return [found, None, None]


@ir_layer_reader("Broadcast")
def broadcast(ctx: LayerContext) -> SSAValue:
    """Broadcast-3 in numpy or bidirectional mode (one result for every valid model): a Tile
    where the target and the input's dims are known, else nn.broadcast_to."""
    mode = ctx.attr("mode", "numpy")
    if mode not in ("numpy", "bidirectional"):
        raise refuse(ctx, f"attribute mode='{mode}' is not supported", fix="nn.broadcast_to follows numpy's rules (numpy or bidirectional)")
    shape, target = list(ctx.shape(0)), ctx.importer.constant_at(ctx.source(1))
    if target is None or any(d < 0 for d in shape):
        return ctx.value(BroadcastTo, [ctx.input(0), ctx.input(1)])
    dims = [int(d) for d in np.asarray(target).reshape(-1)]
    x = ctx.input(0)
    if len(dims) > len(shape):
        x = ctx.value(Unsqueeze, [x], suffix="/unsqueeze", axes=list(range(len(dims) - len(shape))))
        shape = [1] * (len(dims) - len(shape)) + shape
    dims = [1] * (len(shape) - len(dims)) + dims
    if any(s != 1 and t not in (1, s) for s, t in zip(shape, dims)):
        raise refuse(ctx, f"shape {shape} does not broadcast to {dims}")
    return ctx.value(Tile, [x], repeats=[t if s == 1 else 1 for s, t in zip(shape, dims)])
