"""Readers of the detection layers: the SSD, Faster R-CNN/R-FCN and YOLO operations.

Each is the inverse of its emitter in `backends/ir_xml/emitters/detection.py` and refuses
the attribute values whose semantics `nn` (Caffe's) does not have. The prior-box generators
take only the feature map's and the image's sizes, as constants; `nn` takes tensors of
those sizes, so the reader gives it a zero feature map of the size (it is never written
out: the writer reads its dims only) and the image size as img_h/img_w. The opset gives
[2, ...] priors where `nn` gives [1, 2, ...]: the reader squeezes, and the Unsqueeze that
follows in every IR the writer (or the Model Optimizer) produced gives the priors back.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn.detection import DetectionOutput, PriorBox, PriorBoxClustered, PriorOp
from irforge.dialects.nn.rcnn import Proposal, PSROIPooling, ROIPooling
from irforge.dialects.nn.shape import Squeeze
from irforge.dialects.nn.yolo import RegionYolo, ReorgYolo
from irforge.frontends.ir_xml.context import LayerContext, ir_layer_reader


def given(props: dict[str, object]) -> dict[str, object]:
    """`props` without the empty lists (an absent list property means the same)."""
    return {k: v for k, v in props.items() if v != []}


def size_pair(ctx: LayerContext, index: int, what: str) -> tuple[int, int]:
    sizes = ctx.const_ints(index, what)
    if len(sizes) != 2 or min(sizes) < 1:
        raise ctx.fail(f"{what} (input #{index}) must be two positive sizes [H, W], got {sizes}")
    return sizes[0], sizes[1]


def prior_boxes(ctx: LayerContext, cls: type[PriorOp], props: dict[str, object]) -> SSAValue:
    """The `nn` prior op over a zero map of the feature size and the given image size,
    squeezed to the opset's [2, ...]."""
    h, w = size_pair(ctx, 0, "output_size")
    image_h, image_w = size_pair(ctx, 1, "image_size")
    feature = ctx.constant(np.zeros((1, 1, h, w), np.float32), "/feature_map")
    variance = ctx.floats("variance", "")
    if variance == [0.1] * 4:  # nn's default as the writer spells it (an f32 0.1 is another double)
        variance = []
    props = {**props, "clip": ctx.bool("clip", "false"), "offset": ctx.float("offset", "0.5"), "variance": variance}
    priors = ctx.value(cls, [feature, feature], img_h=image_h, img_w=image_w, **given(props))
    squeezed = ctx.value(Squeeze, [priors], suffix="/squeeze", axes=[0])
    ctx.importer.squeezed[squeezed] = (priors, [0])
    return squeezed


@ir_layer_reader("PriorBox")
def prior_box(ctx: LayerContext) -> SSAValue:
    """PriorBox-1/8 in Caffe's order and sizes (the only ones `nn.prior_box` has)."""
    for unsupported in ("density", "fixed_ratio", "fixed_size"):
        if ctx.floats(unsupported, ""):
            raise ctx.fail(f"PriorBox with {unsupported} is not supported", fix="nn.prior_box has Caffe's min_size/max_size/aspect_ratio boxes only")
    if not ctx.bool("scale_all_sizes", "true") or not ctx.bool("min_max_aspect_ratios_order", "true"):
        raise ctx.fail("PriorBox with scale_all_sizes or min_max_aspect_ratios_order false is not supported", fix="nn.prior_box has Caffe's order and sizes only")
    props = {
        "min_size": ctx.floats("min_size"),
        "max_size": ctx.floats("max_size", ""),
        "aspect_ratio": ctx.floats("aspect_ratio", ""),
        "flip": ctx.bool("flip", "false"),
        "step": ctx.float("step", "0"),
    }
    return prior_boxes(ctx, PriorBox, props)


@ir_layer_reader("PriorBoxClustered")
def prior_box_clustered(ctx: LayerContext) -> SSAValue:
    step = ctx.float("step", "0")
    step_w, step_h = (step, step) if step else (ctx.float("step_w", "0"), ctx.float("step_h", "0"))
    if (step_w == 0) != (step_h == 0):
        # OpenVINO then steps by 0 along that axis; nn computes the step from the sizes
        raise ctx.fail(f"PriorBoxClustered with one zero step (step_w {step_w:g}, step_h {step_h:g}) is not supported", fix="give both steps, or neither")
    props = {"width": ctx.floats("width"), "height": ctx.floats("height"), "step_w": step_w, "step_h": step_h}
    return prior_boxes(ctx, PriorBoxClustered, props)


def check_detection_output(ctx: LayerContext) -> None:
    """Refuse what `nn.detection_output` (Caffe's decoding) does not express."""
    if ctx.num_inputs != 3:
        raise ctx.fail("DetectionOutput with ARM inputs (5 inputs) is not supported", fix="nn.detection_output takes location, confidence and priors")
    if not ctx.bool("normalized", "true"):
        raise ctx.fail("DetectionOutput with normalized false is not supported", fix="nn.detection_output decodes normalised boxes")
    if ctx.bool("decrease_label_id", "false"):
        raise ctx.fail("DetectionOutput with decrease_label_id true is not supported", fix="nn.detection_output does not shift labels")
    keep_top_k = ctx.ints("keep_top_k", "-1")
    if len(keep_top_k) != 1:
        raise ctx.fail(f"DetectionOutput with keep_top_k {keep_top_k} is not supported", fix="give one keep_top_k value")
    if keep_top_k[0] <= 0 and ctx.int("top_k", "-1") > 0:
        # OpenVINO gives N * top_k * num_classes rows then, nn N * top_k
        raise ctx.fail("DetectionOutput with top_k but no keep_top_k is not supported", fix="set keep_top_k")


def detection_classes(ctx: LayerContext) -> int:
    """num_classes: the attribute (DetectionOutput-1), else confidence values per prior."""
    if "num_classes" in ctx.layer.data:
        return ctx.int("num_classes")
    priors, confidence = ctx.shape(2), ctx.shape(1)
    values = int(np.prod(confidence[1:]))
    if len(priors) != 3 or min(priors[2], values) < 0 or priors[2] % 4 or values % (priors[2] // 4):
        raise ctx.fail(f"cannot tell num_classes from confidence {list(confidence)} and priors {list(priors)}", fix="give static input shapes")
    return values // (priors[2] // 4)


@ir_layer_reader("DetectionOutput")
def detection_output(ctx: LayerContext) -> SSAValue:
    check_detection_output(ctx)
    props = {
        "num_classes": detection_classes(ctx),
        "background_label_id": ctx.int("background_label_id", "0"),
        "top_k": ctx.int("top_k", "-1"),
        "keep_top_k": ctx.ints("keep_top_k", "-1")[0],
        "code_type": ctx.attr("code_type", "caffe.PriorBoxParameter.CORNER"),
        "share_location": ctx.bool("share_location", "true"),
        "variance_encoded_in_target": ctx.bool("variance_encoded_in_target", "false"),
        "nms_threshold": ctx.float("nms_threshold"),
        "confidence_threshold": ctx.float("confidence_threshold", "0"),
        "clip_before_nms": ctx.bool("clip_before_nms", "false"),
        "clip_after_nms": ctx.bool("clip_after_nms", "false"),
    }
    return ctx.value(DetectionOutput, [ctx.input(i) for i in range(3)], **props)


@ir_layer_reader("Proposal")
def proposal(ctx: LayerContext) -> Sequence[SSAValue | None]:
    """Proposal-1/4 with Caffe's anchors; Proposal-4's scores output, when used, is
    nn.proposal's second result."""
    if ctx.attr("framework", "").lower() not in ("", "caffe"):
        raise ctx.fail(f"Proposal of framework '{ctx.attr('framework')}' is not supported", fix="nn.proposal has Caffe's anchors and box sizes")
    with_scores = len(ctx.layer.outputs) > 1 and ctx.output_used(1)
    props: dict[str, object] = {p: ctx.int(p) for p in ("base_size", "pre_nms_topn", "post_nms_topn", "feat_stride", "min_size")}
    props.update({p: ctx.floats(p) for p in ("ratio", "scale")})
    props.update({p: ctx.bool(p, d) for p, d in (("clip_before_nms", "true"), ("clip_after_nms", "false"), ("normalize", "false"))})
    props.update({p: ctx.float(p, "1") for p in ("box_size_scale", "box_coordinate_scale")})
    props["nms_thresh"] = ctx.float("nms_thresh")
    if with_scores:
        return ctx.add(Proposal, [ctx.input(i) for i in range(3)], num_results=2, **props)
    rois = ctx.value(Proposal, [ctx.input(i) for i in range(3)], **props)
    return [rois, None]


@ir_layer_reader("ROIPooling")
def roi_pooling(ctx: LayerContext) -> SSAValue:
    if "output_size" in ctx.layer.data:
        pooled_h, pooled_w = ctx.ints("output_size")
    else:
        pooled_h, pooled_w = ctx.int("pooled_h"), ctx.int("pooled_w")
    props = {"pooled_h": pooled_h, "pooled_w": pooled_w, "spatial_scale": ctx.float("spatial_scale"), "method": ctx.attr("method", "max")}
    return ctx.value(ROIPooling, [ctx.input(0), ctx.input(1)], **props)


@ir_layer_reader("PSROIPooling")
def psroi_pooling(ctx: LayerContext) -> SSAValue:
    props: dict[str, object] = {p: ctx.int(p, d) for p, d in (("output_dim", None), ("group_size", "1"), ("spatial_bins_x", "1"), ("spatial_bins_y", "1"))}
    props.update(spatial_scale=ctx.float("spatial_scale"), mode=ctx.attr("mode", "average"))
    return ctx.value(PSROIPooling, [ctx.input(0), ctx.input(1)], **props)


@ir_layer_reader("RegionYolo")
def region_yolo(ctx: LayerContext) -> SSAValue:
    props: dict[str, object] = {p: ctx.int(p) for p in ("coords", "classes", "num", "axis", "end_axis")}
    props.update(do_softmax=ctx.bool("do_softmax"), mask=ctx.ints("mask", ""), anchors=ctx.floats("anchors", ""))
    return ctx.value(RegionYolo, [ctx.input(0)], **given(props))


@ir_layer_reader("ReorgYolo")
def reorg_yolo(ctx: LayerContext) -> SSAValue:
    strides = ctx.ints("stride")
    if not strides or len(set(strides)) != 1:
        raise ctx.fail(f"ReorgYolo with strides {strides} is not supported", fix="nn.reorg_yolo has one stride for both axes")
    return ctx.value(ReorgYolo, [ctx.input(0)], stride=strides[0])
