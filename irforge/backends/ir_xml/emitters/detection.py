"""Emitters of the detection ops: the SSD, Faster R-CNN/R-FCN and YOLO layers.

Most map to one opset layer with the same attributes. The prior-box generators take the
feature map's and the image's spatial sizes as i64 inputs (Consts when the sizes are
static) and give [2, ...]; `nn` keeps Caffe's [1, 2, ...], so an Unsqueeze follows.
Proposal-4's second output (the scores) is nn.proposal's optional second result (left
unconnected without it). DetectionOutput-8 packs all images' detections one after the other, ended by
one -1 row, where `nn` pads each image's rows: the detections agree, the padding differs.
"""

from __future__ import annotations

import numpy as np

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.graph import PortType, fmt_bool, fmt_float, fmt_ints
from irforge.dialects.nn.base import NNOp
from irforge.dialects.nn.detection import DetectionOutput, PriorBox, PriorBoxClustered, PriorOp
from irforge.dialects.nn.rcnn import Proposal, PSROIPooling, ROIPooling
from irforge.dialects.nn.yolo import RegionYolo, ReorgYolo
from irforge.errors import IrforgeError


def out_type(op: NNOp) -> PortType:
    return PortType.of(op.results[0].type)


def floats_text(values: tuple[float, ...]) -> str:
    return ", ".join(fmt_float(v) for v in values)


def spatial_size(ctx: EmitContext, port: Port, override: tuple[int, int], name: str) -> Port:
    """[H, W] of a rank-4 `port` as i64: a Const when known (or given by `override`, whose
    zeros mean "the port's"), else ShapeOf -> Gather."""
    dims = [o or d for o, d in zip(override, port.dims[2:])]
    if all(d >= 0 for d in dims):
        return ctx.ints(dims, name)
    shape = ctx.single("ShapeOf", [port], PortType(np.dtype(np.int64), (len(port.dims),)), name=f"{name}/shape", data={"output_type": "i64"}, version="opset3")
    indices, axis = ctx.ints([2, 3], f"{name}/indices"), ctx.const(np.array(0, np.int64), f"{name}/axis")
    return ctx.single("Gather", [shape, indices, axis], PortType(np.dtype(np.int64), (2,)), name=name, data={"batch_dims": "0"}, version="opset8")


def prior_layer(ctx: EmitContext, op: PriorOp, inputs: list[Port], type: str, version: str, data: dict[str, str]) -> list[Port]:
    """The opset prior-box layer on the two sizes, then Unsqueeze to [1, 2, ...]."""
    feature, image = inputs
    sizes = [
        spatial_size(ctx, feature, (0, 0), ctx.name(op, "output_size")),
        spatial_size(ctx, image, (op.int_prop("img_h"), op.int_prop("img_w")), ctx.name(op, "image_size")),
    ]
    out = out_type(op)
    data = {**data, "clip": fmt_bool(op.bool_prop("clip")), "offset": fmt_float(op.float_prop("offset")), "variance": floats_text(op.variances())}
    priors = ctx.single(type, sizes, out.with_dims(out.dims[1:]), name=ctx.name(op, "priors"), data=data, version=version)
    return [ctx.single("Unsqueeze", [priors, ctx.ints([0], ctx.name(op, "axes"))], out, name=ctx.name(op))]


@ir_xml_emitter(PriorBox)
def prior_box(ctx: EmitContext, op: PriorBox, inputs: list[Port]) -> list[Port]:
    data = {
        "min_size": floats_text(op.floats("min_size")),
        "max_size": floats_text(op.floats("max_size")),
        "aspect_ratio": floats_text(op.floats("aspect_ratio")),
        "flip": fmt_bool(op.bool_prop("flip")),
        "step": fmt_float(op.float_prop("step")),
        # Caffe's order and sizes: per min_size, its box, sqrt(min * max), then the ratios
        "scale_all_sizes": "true",
        "min_max_aspect_ratios_order": "true",
    }
    return prior_layer(ctx, op, inputs, "PriorBox", "opset8", data)


def clustered_steps(op: PriorBoxClustered, feature: Port, image: Port) -> tuple[float, float]:
    """(step_w, step_h) for the opset: as given, but where only one is 0 (nn: that one is
    image size / feature size; OpenVINO: only both 0 mean that) with that value written."""
    step_w, step_h = op.float_prop("step_w"), op.float_prop("step_h")
    if (step_w == 0) == (step_h == 0):
        return step_w, step_h
    img_h, img_w = op.int_prop("img_h") or image.dims[2], op.int_prop("img_w") or image.dims[3]
    feature_h, feature_w = feature.dims[2:]
    if min(img_h, img_w, feature_h, feature_w) < 0:
        raise IrforgeError(
            "PriorBoxClustered with only one of step_w and step_h needs static image and feature sizes",
            where=op.label,
            fix="give both steps, or static input shapes",
            code="E849",
        )
    return step_w or img_w / feature_w, step_h or img_h / feature_h


@ir_xml_emitter(PriorBoxClustered)
def prior_box_clustered(ctx: EmitContext, op: PriorBoxClustered, inputs: list[Port]) -> list[Port]:
    step_w, step_h = clustered_steps(op, *inputs)
    data = {
        "width": floats_text(op.floats("width")),
        "height": floats_text(op.floats("height")),
        "step_w": fmt_float(step_w),
        "step_h": fmt_float(step_h),
    }
    return prior_layer(ctx, op, inputs, "PriorBoxClustered", "opset1", data)


def check_detection_output(op: DetectionOutput) -> None:
    """Refuse what DetectionOutput-8 cannot express."""
    if op.int_prop("keep_top_k") <= 0 and op.int_prop("top_k") > 0:
        # nn gives N * top_k rows there, OpenVINO N * top_k * num_classes
        raise IrforgeError(
            "DetectionOutput with top_k but no keep_top_k has no OpenVINO equivalent",
            where=op.label,
            fix="set keep_top_k (at most top_k * num_classes detections per image)",
            code="E849",
        )
    if op.str_prop("code_type").endswith(".CORNER_SIZE"):
        raise IrforgeError("DetectionOutput's code_type CORNER_SIZE has no OpenVINO equivalent", where=op.label, code="E849")


def boxes_only(ctx: EmitContext, priors: Port, name: str) -> Port:
    """Priors [B, 2, P * 4] without their variances row: [B, 1, P * 4]."""
    dims = (priors.dims[0], 1, priors.dims[2])
    if priors.array is not None:
        return ctx.const(priors.array[:, :1], priors.name)
    ends = [ctx.ints(v, f"{name}/{what}") for v, what in (([0, 0, 0], "begin"), ([0, 1, 0], "end"), ([1, 1, 1], "stride"))]
    data = {"begin_mask": "1, 0, 1", "end_mask": "1, 0, 1"}
    return ctx.single("StridedSlice", [priors, *ends], priors.type.with_dims(dims), name=name, data=data)


@ir_xml_emitter(DetectionOutput)
def detection_output(ctx: EmitContext, op: DetectionOutput, inputs: list[Port]) -> list[Port]:
    check_detection_output(op)
    if op.bool_prop("variance_encoded_in_target") and inputs[2].dims[1] == 2:
        # OpenVINO wants no variances row then; nn takes (and ignores) one
        inputs = [*inputs[:2], boxes_only(ctx, inputs[2], ctx.name(op, "boxes"))]
    data = {
        "background_label_id": str(op.int_prop("background_label_id")),
        "top_k": str(op.int_prop("top_k")),
        "keep_top_k": str(op.int_prop("keep_top_k")),
        "code_type": op.str_prop("code_type"),
        "share_location": fmt_bool(op.bool_prop("share_location")),
        "variance_encoded_in_target": fmt_bool(op.bool_prop("variance_encoded_in_target")),
        "nms_threshold": fmt_float(op.float_prop("nms_threshold")),
        "confidence_threshold": fmt_float(op.float_prop("confidence_threshold")),
        # Caffe's decoding: boxes in normalised coordinates
        "normalized": "true",
        "clip_before_nms": fmt_bool(op.bool_prop("clip_before_nms")),
        "clip_after_nms": fmt_bool(op.bool_prop("clip_after_nms")),
        "decrease_label_id": "false",
    }
    return [ctx.single("DetectionOutput", inputs, out_type(op), name=ctx.name(op), data=data, version="opset8")]


@ir_xml_emitter(Proposal)
def proposal(ctx: EmitContext, op: Proposal, inputs: list[Port]) -> list[Port]:
    scores, deltas, info = inputs
    if info.type.rank == 2:  # Caffe's im_info [1, 3]; the opset takes [3] or [4]
        info = ctx.reshape(info, info.dims[1:], ctx.name(op, "image_shape"))
    data = {prop: str(op.int_prop(prop)) for prop in ("base_size", "pre_nms_topn", "post_nms_topn", "feat_stride", "min_size")}
    data.update({prop: floats_text(op.floats(prop)) for prop in ("ratio", "scale")})
    data.update({prop: fmt_bool(op.bool_prop(prop)) for prop in ("clip_before_nms", "clip_after_nms", "normalize")})
    data.update({prop: fmt_float(op.float_prop(prop)) for prop in ("nms_thresh", "box_size_scale", "box_coordinate_scale")})
    data["framework"] = ""  # Caffe's anchors and +1 pixel box sizes (not TensorFlow's)
    rois = out_type(op)
    probs = PortType(rois.dtype, (rois.dims[0],))
    return ctx.layer("Proposal", [scores, deltas, info], [rois, probs], name=ctx.name(op), data=data, version="opset4")[: len(op.results)]


@ir_xml_emitter(ROIPooling)
def roi_pooling(ctx: EmitContext, op: ROIPooling, inputs: list[Port]) -> list[Port]:
    data = {
        "pooled_h": str(op.int_prop("pooled_h")),
        "pooled_w": str(op.int_prop("pooled_w")),
        "spatial_scale": fmt_float(op.float_prop("spatial_scale")),
        "method": op.str_prop("method"),
    }
    return [ctx.single("ROIPooling", inputs, out_type(op), name=ctx.name(op), data=data, version="opset2")]


@ir_xml_emitter(PSROIPooling)
def psroi_pooling(ctx: EmitContext, op: PSROIPooling, inputs: list[Port]) -> list[Port]:
    data = {prop: str(op.int_prop(prop)) for prop in ("output_dim", "group_size", "spatial_bins_x", "spatial_bins_y")}
    data.update({"spatial_scale": fmt_float(op.float_prop("spatial_scale")), "mode": op.str_prop("mode")})
    return [ctx.single("PSROIPooling", inputs, out_type(op), name=ctx.name(op), data=data)]


@ir_xml_emitter(RegionYolo)
def region_yolo(ctx: EmitContext, op: RegionYolo, inputs: list[Port]) -> list[Port]:
    data = {prop: str(op.int_prop(prop)) for prop in ("coords", "classes", "num", "axis", "end_axis")}
    data.update({"do_softmax": fmt_bool(op.bool_prop("do_softmax")), "mask": fmt_ints(op.ints("mask")), "anchors": floats_text(op.floats("anchors"))})
    return [ctx.single("RegionYolo", inputs, out_type(op), name=ctx.name(op), data=data)]


@ir_xml_emitter(ReorgYolo)
def reorg_yolo(ctx: EmitContext, op: ReorgYolo, inputs: list[Port]) -> list[Port]:
    data = {"stride": str(op.int_prop("stride"))}
    return [ctx.single("ReorgYolo", inputs, out_type(op), name=ctx.name(op), data=data, version="opset2")]
