"""Emitters of the indexing family, each one opset layer: GatherElements-6, GatherND-8,
ScatterNDUpdate-4/-15, ScatterElementsUpdate-12, OneHot-16, NonZero-3, TopK-11, CumSum-3,
Range-4, IsNaN-10 and IsInf-10; the box ops ROIAlign-9 and NonMaxSuppression-9. Dims known only at run time are written as -1."""

from __future__ import annotations

import numpy as np

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.graph import PortType, element_name, fmt_bool, fmt_float
from irforge.dialects.nn.boxes import NonMaxSuppression, ROIAlign
from irforge.errors import IrforgeError
from irforge.dialects.nn.indexing import (
    BroadcastTo,
    ReshapeTo,
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
    ShapeOf,
    PadBy,
    SliceTo,
    TopK,
)

SCATTER_ND_REDUCTIONS = {"none": "none", "add": "sum", "mul": "prod", "max": "max", "min": "min"}
SCATTER_ELEMENTS_REDUCTIONS = {"none": "none", "add": "sum", "mul": "prod", "max": "max", "min": "min"}


def out_type(op, index: int = 0) -> PortType:  # type: ignore[no-untyped-def]
    return PortType.of(op.results[index].type)


@ir_xml_emitter(GatherElements)
def gather_elements(ctx: EmitContext, op: GatherElements, inputs: list[Port]) -> list[Port]:
    data = {"axis": str(op.int_prop("axis"))}
    return [ctx.single("GatherElements", inputs, out_type(op), name=ctx.name(op), data=data, version="opset6")]


@ir_xml_emitter(GatherND)
def gather_nd(ctx: EmitContext, op: GatherND, inputs: list[Port]) -> list[Port]:
    data = {"batch_dims": str(op.int_prop("batch_dims"))}
    return [ctx.single("GatherND", inputs, out_type(op), name=ctx.name(op), data=data, version="opset8")]


@ir_xml_emitter(ScatterND)
def scatter_nd(ctx: EmitContext, op: ScatterND, inputs: list[Port]) -> list[Port]:
    reduction = op.str_prop("reduction")
    if reduction == "none":  # the form ovc writes for plain updates
        return [ctx.single("ScatterNDUpdate", inputs, out_type(op), name=ctx.name(op), version="opset4")]
    data = {"reduction": SCATTER_ND_REDUCTIONS[reduction]}
    return [ctx.single("ScatterNDUpdate", inputs, out_type(op), name=ctx.name(op), data=data, version="opset15")]


@ir_xml_emitter(ScatterElements)
def scatter_elements(ctx: EmitContext, op: ScatterElements, inputs: list[Port]) -> list[Port]:
    axis = ctx.const(np.array(op.int_prop("axis"), np.int64), ctx.name(op, "axis"))
    data = {"reduction": SCATTER_ELEMENTS_REDUCTIONS[op.str_prop("reduction")], "use_init_val": "true"}
    return [ctx.single("ScatterElementsUpdate", [*inputs, axis], out_type(op), name=ctx.name(op), data=data, version="opset12")]


@ir_xml_emitter(OneHot)
def one_hot(ctx: EmitContext, op: OneHot, inputs: list[Port]) -> list[Port]:
    indices, on, off = inputs
    depth = ctx.const(np.array(op.int_prop("depth"), np.int64), ctx.name(op, "depth"))
    # ONNX counts negative indices from the end: OneHot-16's "normalize" mode, not OneHot-1's
    data = {"axis": str(op.int_prop("axis")), "negative_indices_mode": "normalize"}
    return [ctx.single("OneHot", [indices, depth, on, off], out_type(op), name=ctx.name(op), data=data, version="opset16")]


@ir_xml_emitter(NonZero)
def non_zero(ctx: EmitContext, op: NonZero, inputs: list[Port]) -> list[Port]:
    return [ctx.single("NonZero", inputs, out_type(op), name=ctx.name(op), data={"output_type": "i64"}, version="opset3")]


@ir_xml_emitter(TopK)
def top_k(ctx: EmitContext, op: TopK, inputs: list[Port]) -> list[Port]:
    k = inputs[1] if len(inputs) > 1 else ctx.const(np.array(op.int_prop("k"), np.int64), ctx.name(op, "k"))
    axis = op.int_prop("axis") % len(inputs[0].dims)
    data = {"axis": str(axis), "mode": op.str_prop("mode"), "sort": op.str_prop("sort"), "index_element_type": "i64", "stable": "true"}
    return ctx.layer("TopK", [inputs[0], k], [out_type(op, 0), out_type(op, 1)], name=ctx.name(op), data=data, version="opset11")


@ir_xml_emitter(CumSum)
def cum_sum(ctx: EmitContext, op: CumSum, inputs: list[Port]) -> list[Port]:
    axis = ctx.const(np.array(op.int_prop("axis"), np.int64), ctx.name(op, "axis"))
    data = {"exclusive": fmt_bool(op.bool_prop("exclusive")), "reverse": fmt_bool(op.bool_prop("reverse"))}
    return [ctx.single("CumSum", [inputs[0], axis], out_type(op), name=ctx.name(op), data=data, version="opset3")]


@ir_xml_emitter(Range)
def range_(ctx: EmitContext, op: Range, inputs: list[Port]) -> list[Port]:
    out = out_type(op)
    data = {"output_type": element_name(out.dtype)}
    return [ctx.single("Range", inputs, out, name=ctx.name(op), data=data, version="opset4")]


@ir_xml_emitter(IsNaN)
def is_nan(ctx: EmitContext, op: IsNaN, inputs: list[Port]) -> list[Port]:
    return [ctx.single("IsNaN", inputs, out_type(op), name=ctx.name(op), version="opset10")]


@ir_xml_emitter(IsInf)
def is_inf(ctx: EmitContext, op: IsInf, inputs: list[Port]) -> list[Port]:
    data = {"detect_negative": fmt_bool(op.bool_prop("detect_negative")), "detect_positive": fmt_bool(op.bool_prop("detect_positive"))}
    return [ctx.single("IsInf", inputs, out_type(op), name=ctx.name(op), data=data, version="opset10")]


@ir_xml_emitter(ROIAlign)
def roi_align(ctx: EmitContext, op: ROIAlign, inputs: list[Port]) -> list[Port]:
    if op.str_prop("mode") == "max":
        # OpenVINO's ROIAlign-9 max mode gives other numbers than onnxruntime's (measured: up to
        # 1.0 apart on unit-normal maps, at every sampling_ratio): writing it would be silently wrong
        raise IrforgeError(
            "nn.roi_align mode 'max' (onnxruntime's max of weighted corner terms) has no OpenVINO equivalent",
            where=op.label, code="E680",
            fix="OpenVINO's ROIAlign max mode computes different numbers; run the model with ir-run --device ref or cpu, or use mode='avg'",
        )
    data = {
        "pooled_h": str(op.int_prop("pooled_h")), "pooled_w": str(op.int_prop("pooled_w")),
        "sampling_ratio": str(op.int_prop("sampling_ratio")), "spatial_scale": fmt_float(op.float_prop("spatial_scale")),
        # OpenVINO's half_pixel_for_nn is ONNX's half_pixel (as its ONNX frontend maps it)
        "mode": "avg", "aligned_mode": "half_pixel_for_nn" if op.str_prop("aligned_mode") == "half_pixel" else "asymmetric",
    }  # fmt: skip
    return [ctx.single("ROIAlign", inputs, out_type(op), name=ctx.name(op), data=data, version="opset9")]


@ir_xml_emitter(NonMaxSuppression)
def non_max_suppression(ctx: EmitContext, op: NonMaxSuppression, inputs: list[Port]) -> list[Port]:
    """NonMaxSuppression-9 without sorting across images (ONNX's order: image, class, score);
    its selected_scores and valid_outputs ports are left unread."""
    limits = [
        ctx.const(np.array(op.int_prop("max_output_boxes_per_class"), np.int64), ctx.name(op, "max_boxes")),
        ctx.const(np.array(op.float_prop("iou_threshold"), np.float32), ctx.name(op, "iou_threshold")),
        ctx.const(np.array(op.float_prop("score_threshold"), np.float32), ctx.name(op, "score_threshold")),
        ctx.const(np.array(0.0, np.float32), ctx.name(op, "soft_nms_sigma")),
    ]
    data = {"box_encoding": "center" if op.bool_prop("center_point_box") else "corner", "sort_result_descending": "false", "output_type": "i64"}
    indices = out_type(op)
    outputs = [indices, PortType(np.dtype(np.float32), (-1, 3)), PortType(np.dtype(np.int64), (1,))]
    return ctx.layer("NonMaxSuppression", [*inputs, *limits], outputs, name=ctx.name(op), data=data, version="opset9")[:1]


@ir_xml_emitter(ShapeOf)
def shape_of(ctx: EmitContext, op: ShapeOf, inputs: list[Port]) -> list[Port]:
    return [ctx.single("ShapeOf", inputs, out_type(op), name=ctx.name(op), data={"output_type": "i64"}, version="opset3")]


@ir_xml_emitter(BroadcastTo)
def broadcast_to(ctx: EmitContext, op: BroadcastTo, inputs: list[Port]) -> list[Port]:
    return [ctx.single("Broadcast", inputs, out_type(op), name=ctx.name(op), data={"mode": "bidirectional"}, version="opset3")]


@ir_xml_emitter(ReshapeTo)
def reshape_to(ctx: EmitContext, op: ReshapeTo, inputs: list[Port]) -> list[Port]:
    special_zero = "true" if op.bool_prop("special_zero") else "false"
    return [ctx.single("Reshape", inputs, out_type(op), name=ctx.name(op), data={"special_zero": special_zero}, version="opset1")]


@ir_xml_emitter(SliceTo)
def slice_to(ctx: EmitContext, op: SliceTo, inputs: list[Port]) -> list[Port]:
    """Slice-8 with the run-time start and stop inputs (both of one integer type, as
    OpenVINO requires of Slice's bounds)."""
    step = ctx.const(np.asarray(op.step_values(), dtype=inputs[1].dtype), ctx.name(op, "step"))
    axes = ctx.ints(list(op.sliced_axes()), ctx.name(op, "axes"))
    return [ctx.single("Slice", [*inputs, step, axes], out_type(op), name=ctx.name(op), version="opset8")]


@ir_xml_emitter(PadBy)
def pad_by(ctx: EmitContext, op: PadBy, inputs: list[Port]) -> list[Port]:
    """Pad-12 with run-time pads_begin / pads_end: the halves of the [begins..., ends...]
    vector cut by Slice-8 and converted to i64 (OpenVINO wants both of one integer type)."""
    x, pads = inputs
    rank = x.type.rank
    halves = []
    for i, half in enumerate(("pads_begin", "pads_end")):
        bounds = [ctx.ints([i * rank], ctx.name(op, f"{half}/start")), ctx.ints([(i + 1) * rank], ctx.name(op, f"{half}/stop")),
                  ctx.ints([1], ctx.name(op, f"{half}/step")), ctx.ints([0], ctx.name(op, f"{half}/axes"))]
        part = ctx.single("Slice", [pads, *bounds], pads.type.with_dims((rank,)), name=ctx.name(op, half), version="opset8")
        if part.dtype != np.int64:
            part = ctx.single("Convert", [part], part.type.with_dtype(np.int64), name=ctx.name(op, f"{half}/i64"), data={"destination_type": "i64"})
        halves.append(part)
    # the value is used by constant mode only, but OpenVINO adds a Const of its own if absent
    with np.errstate(all="ignore"):
        value = np.array(op.float_prop("value")).astype(x.dtype)
    operands = [x, *halves, ctx.const(value, ctx.name(op, "pad_value"))]
    return [ctx.single("Pad", operands, PortType.of(op.output.type), name=ctx.name(op), data={"pad_mode": op.str_prop("mode")}, version="opset12")]
