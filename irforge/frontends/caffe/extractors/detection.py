"""Caffe detection layers (SSD's PriorBox and DetectionOutput, PriorBoxClustered)."""

from __future__ import annotations

from typing import Any

from xdsl.ir import SSAValue

from irforge.dialects.nn.detection import DetectionOutput, PriorBox, PriorBoxClustered
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
    )
