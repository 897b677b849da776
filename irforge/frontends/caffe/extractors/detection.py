"""Caffe detection layers: SSD's PriorBox and DetectionOutput, PriorBoxClustered, Faster
R-CNN's Proposal and ROIPooling, R-FCN's PSROIPooling, YOLO's RegionYolo and ReorgYolo."""

from __future__ import annotations

import ast
import re
from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.dialects.nn.detection import DetectionOutput, PriorBox, PriorBoxClustered
from irforge.dialects.nn.rcnn import Proposal, PSROIPooling, ROIPooling
from irforge.dialects.nn.shape import Reshape
from irforge.dialects.nn.yolo import RegionYolo, ReorgYolo
from irforge.errors import IrforgeError
from irforge.frontends.caffe.registry import LayerContext, caffe_extractor

CODE_TYPES = {1: "CORNER", 2: "CENTER_SIZE", 3: "CORNER_SIZE"}
FLT_MAX = 3.4028234663852886e38


def image_size(ctx: LayerContext, p: Any) -> dict[str, object]:
    """img_h/img_w from img_size or img_h and img_w (0: the image bottom's)."""
    if p.DESCRIPTOR.fields_by_name.get("img_size") is not None and p.HasField("img_size"):
        return {"img_h": int(p.img_size), "img_w": int(p.img_size)}
    return {"img_h": int(p.img_h), "img_w": int(p.img_w)}


def steps(ctx: LayerContext, p: Any) -> tuple[float, float]:
    """(step_h, step_w) from step or step_h and step_w (0: image size / feature size)."""
    if p.HasField("step_h") or p.HasField("step_w"):
        return float(p.step_h), float(p.step_w)
    return float(p.step), float(p.step)


@caffe_extractor("PriorBox")
def prior_box(ctx: LayerContext) -> SSAValue:
    p = ctx.param("prior_box_param")
    step_h, step_w = steps(ctx, p)
    if step_h != step_w:
        raise ctx.fail(f"different step_h ({step_h:g}) and step_w ({step_w:g}) are not supported")
    return ctx.value(
        PriorBox,
        [ctx.bottom(0), ctx.bottom(1)],
        min_size=[float(v) for v in p.min_size],
        max_size=[float(v) for v in p.max_size] or None,
        aspect_ratio=[float(v) for v in p.aspect_ratio] or None,
        flip=bool(p.flip),
        clip=bool(p.clip),
        step=step_h,
        offset=float(p.offset),
        variance=[float(v) for v in p.variance] or None,
        **image_size(ctx, p),
    )


@caffe_extractor("PriorBoxClustered")
def prior_box_clustered(ctx: LayerContext) -> SSAValue:
    p = ctx.param("prior_box_clustered_param")
    step_h, step_w = steps(ctx, p)
    return ctx.value(
        PriorBoxClustered,
        [ctx.bottom(0), ctx.bottom(1)],
        width=[float(v) for v in p.width],
        height=[float(v) for v in p.height],
        clip=bool(p.clip),
        step_h=step_h,
        step_w=step_w,
        offset=float(p.offset),
        variance=[float(v) for v in p.variance] or None,
        **image_size(ctx, p),
    )


@caffe_extractor("DetectionOutput")
def detection_output(ctx: LayerContext) -> SSAValue:
    p = ctx.param("detection_output_param")
    nms = p.nms_param
    return ctx.value(
        DetectionOutput,
        [ctx.bottom(0), ctx.bottom(1), ctx.bottom(2)],
        num_classes=int(p.num_classes),
        background_label_id=int(p.background_label_id),
        top_k=int(nms.top_k) if nms.HasField("top_k") else -1,
        keep_top_k=int(p.keep_top_k),
        code_type=f"caffe.PriorBoxParameter.{CODE_TYPES[p.code_type]}",
        share_location=bool(p.share_location),
        variance_encoded_in_target=bool(p.variance_encoded_in_target),
        nms_threshold=float(nms.nms_threshold),
        # without a threshold Caffe considers every box (-FLT_MAX)
        confidence_threshold=float(p.confidence_threshold) if p.HasField("confidence_threshold") else -FLT_MAX,
        # OpenCV's and caffe-ssd forks' `clip` clips the decoded boxes to [0, 1] before NMS
        clip_before_nms=bool(p.clip or p.clip_before_nms),
        clip_after_nms=bool(p.clip_after_nms),
    )


# py-faster-rcnn's generate_anchors defaults, for a proposal_param that lists no anchors
DEFAULT_RATIOS = (0.5, 1.0, 2.0)
DEFAULT_SCALES = (8.0, 16.0, 32.0)


@caffe_extractor("Proposal")
def proposal(ctx: LayerContext) -> SSAValue | list[SSAValue]:
    p = ctx.param("proposal_param")
    return proposal_tops(
        ctx,
        [ctx.bottom(0), ctx.bottom(1), ctx.bottom(2)],
        base_size=int(p.base_size),
        feat_stride=int(p.feat_stride),
        min_size=int(p.min_size),
        ratio=[float(v) for v in p.ratio] or list(DEFAULT_RATIOS),
        scale=[float(v) for v in p.scale] or list(DEFAULT_SCALES),
        pre_nms_topn=int(p.pre_nms_topn),
        post_nms_topn=int(p.post_nms_topn),
        nms_thresh=float(p.nms_thresh),
    )


PY_FASTER_RCNN_PROPOSAL = "Python:rpn.proposal_layer.ProposalLayer"
PY_FASTER_RCNN_TEST = {"pre_nms_topn": 6000, "post_nms_topn": 300, "nms_thresh": 0.7, "min_size": 16}
"""py-faster-rcnn's cfg.TEST (RPN_PRE_NMS_TOP_N, RPN_POST_NMS_TOP_N, RPN_NMS_THRESH,
RPN_MIN_SIZE), which its ProposalLayer reads at test time."""
PARAM_STR_KEYS = {
    "feat_stride": "feat_stride", "base_size": "base_size", "scales": "scale", "ratios": "ratio",
    "pre_nms_topn": "pre_nms_topn", "post_nms_topn": "post_nms_topn", "nms_thresh": "nms_thresh",
    "min_size": "min_size",
}  # fmt: skip
"""param_str keys (py-faster-rcnn's feat_stride and scales, and the settings its forks add)
-> nn.proposal properties."""


def python_proposal_attrs(ctx: LayerContext, settings: dict[str, Any]) -> dict[str, object]:
    """nn.proposal properties of py-faster-rcnn's Python proposal layer from its param_str
    settings; a key the layer's forks do not define is refused rather than ignored."""
    unknown = sorted(set(settings) - set(PARAM_STR_KEYS))
    if unknown:
        raise IrforgeError(
            f"param_str key(s) {', '.join(unknown)} of the Python proposal layer are not understood",
            where=ctx.where,
            fix=f"use {', '.join(PARAM_STR_KEYS)}, or map the layer with an extension (examples/custom_layers/proposal_numpy.py)",
            code="E204",
        )
    props: dict[str, object] = {"feat_stride": 16, "base_size": 16, "ratio": list(DEFAULT_RATIOS), "scale": list(DEFAULT_SCALES), **PY_FASTER_RCNN_TEST}
    for key, value in settings.items():
        name = PARAM_STR_KEYS[key]
        props[name] = [float(v) for v in value] if name in ("ratio", "scale") else (float(value) if name == "nms_thresh" else int(value))
    return props


YAML_LINE = re.compile(r"""^\s*(['"]?)(\w+)\1\s*:\s*(?:!!python/tuple\s*)?(.+?)\s*$""")


def proposal_settings(ctx: LayerContext, text: str) -> dict[str, Any]:
    """The param_str settings: py-faster-rcnn reads them with yaml.load, so besides a dict
    literal ('feat_stride': 16) its COCO files' YAML block form is taken, one `'key': value`
    per line with `!!python/tuple [4, 8, 16, 32]` values (the subset of YAML they use)."""
    from irforge.custom.mapping import parse_param_str

    try:
        return parse_param_str(text, ctx.fail)
    except IrforgeError:
        lines = [line for line in text.splitlines() if line.strip()]
        matches = [YAML_LINE.match(line) for line in lines]
        if not lines or not all(matches):
            raise
        try:
            return {m.group(2): ast.literal_eval(m.group(3)) for m in matches if m}
        except (ValueError, SyntaxError):
            raise ctx.fail(f"param_str is neither a Python dict literal nor YAML lines of 'key': value: {text!r}", "write it as 'key': value, ...") from None


@caffe_extractor(PY_FASTER_RCNN_PROPOSAL)
def python_proposal(ctx: LayerContext) -> SSAValue | list[SSAValue]:
    """py-faster-rcnn's `rpn.proposal_layer.ProposalLayer` as OpenVINO's Proposal: the same
    anchors, clipping, size filter and NMS; the rois are post_nms_topn rows, those past the
    kept boxes zero after a -1 end marker (py-faster-rcnn outputs only the kept rows)."""
    settings = proposal_settings(ctx, str(ctx.param("python_param").param_str))
    return proposal_tops(ctx, [ctx.bottom(0), ctx.bottom(1), ctx.bottom(2)], **python_proposal_attrs(ctx, settings))


def proposal_tops(ctx: LayerContext, operands: list[SSAValue], **attrs: Any) -> SSAValue | list[SSAValue]:
    """The rois top, and with a second top (RPN-only test nets) each roi's object score,
    [rows, 1] as py-faster-rcnn's and OpenCV's layers give it."""
    if ctx.num_tops > 2:
        raise ctx.fail(f"has {ctx.num_tops} tops; a proposal layer gives rois and, optionally, their scores")
    if ctx.num_tops == 1:
        return ctx.value(Proposal, operands, **attrs)
    rois, scores = ctx.add(Proposal, operands, num_results=2, **attrs)
    t = rois.type
    assert isinstance(t, TensorType)
    return [rois, ctx.value(Reshape, [scores], suffix="/scores", shape=[t.get_shape()[0], 1], special_zero=False)]


@caffe_extractor("ROIPooling")
def roi_pooling(ctx: LayerContext) -> SSAValue:
    p = ctx.param("roi_pooling_param")
    return ctx.value(
        ROIPooling,
        [ctx.bottom(0), ctx.bottom(1)],
        pooled_h=int(p.pooled_h),
        pooled_w=int(p.pooled_w),
        spatial_scale=float(p.spatial_scale),
    )


@caffe_extractor("PSROIPooling")
def psroi_pooling(ctx: LayerContext) -> SSAValue:
    p = ctx.param("psroi_pooling_param")
    return ctx.value(
        PSROIPooling,
        [ctx.bottom(0), ctx.bottom(1)],
        output_dim=int(p.output_dim),
        group_size=int(p.group_size),
        spatial_scale=float(p.spatial_scale),
    )


@caffe_extractor("RegionYolo")
def region_yolo(ctx: LayerContext) -> SSAValue:
    p = ctx.param("region_yolo_param")
    # the flattening of the do_softmax form is the layer's flatten_param, as in OpenVINO's Caffe
    flatten = ctx.param("flatten_param")
    return ctx.value(
        RegionYolo,
        [ctx.bottom(0)],
        coords=int(p.coords),
        classes=int(p.classes),
        num=int(p.num),
        do_softmax=bool(p.do_softmax),
        mask=[int(v) for v in p.mask] or None,
        anchors=[float(v) for v in p.anchors] or None,
        axis=int(flatten.axis),
        end_axis=int(flatten.end_axis),
    )


@caffe_extractor("ReorgYolo")
def reorg_yolo(ctx: LayerContext) -> SSAValue:
    return ctx.value(ReorgYolo, [ctx.bottom(0)], stride=int(ctx.param("reorg_yolo_param").stride))
