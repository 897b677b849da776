"""MXNet detection: SSD's _contrib_MultiBoxPrior / _contrib_MultiBoxDetection (to the IR's
prior boxes and DetectionOutput, as the Model Optimizer's SSD replacement does),
_contrib_Proposal and ROIPooling.

MultiBoxPrior's anchors at cell (r, c) of an H x W map are centred at ((c + offset_x) *
step_x, (r + offset_y) * step_y) (steps default to 1 / W, 1 / H), one per size with the
first ratio, then one per further ratio with the first size, each of normalised extent
size * H / W * sqrt(ratio) x size / sqrt(ratio). That is PriorBoxClustered over the map
itself (the image operand is the map, so a "pixel" is a cell) with widths size * H *
sqrt(ratio) and heights size * H / sqrt(ratio), exactly; the result is kept in MXNet's
[1, H * W * A, 4] form. MultiBoxDetection gets the IR's [1, 2, A * 4] priors back by
appending its `variances`, and its [N, classes, A] probabilities as [N, A * classes].

DetectionOutput differs from MultiBoxDetection in what it outputs: rows (image, label,
score, box) with the label counting the background class, unused rows -1, where MXNet
gives (class - 1, score, box) per anchor. DetectionOutput scores every class of an anchor
where MXNet keeps only its best: the probabilities of the other classes are zeroed first
(`_best_class_only`), so the detections are MXNet's. An nms_topk below the anchor count
(MXNet's top k over all classes) has no DetectionOutput form and is refused.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Eltwise, Permute, PriorBoxClustered, Reduce, Reshape, Select, Slice
from irforge.dialects.nn.detection import DetectionOutput
from irforge.dialects.nn.rcnn import ROIPooling
from irforge.errors import IrforgeError
from irforge.frontends.mxnet.registry import NodeContext, mxnet_extractor


def anchor_sizes(sizes: list[float], ratios: list[float], height: int) -> tuple[list[float], list[float]]:
    """PriorBoxClustered widths and heights (in cells of a map `height` cells high)."""
    shapes = [(s, ratios[0]) for s in sizes] + [(sizes[0], r) for r in ratios[1:]]
    return [s * height * math.sqrt(r) for s, r in shapes], [s * height / math.sqrt(r) for s, r in shapes]


@mxnet_extractor("_contrib_MultiBoxPrior", "MultiBoxPrior")
def multibox_prior(ctx: NodeContext) -> SSAValue:
    x = ctx.shape(0)
    if len(x) != 4:
        raise ctx.fail(f"needs a feature map [N, C, H, W], got {list(x)}")
    sizes, ratios = ctx.attrs.floats("sizes", [1.0]), ctx.attrs.floats("ratios", [1.0])
    assert sizes is not None and ratios is not None
    if not sizes or not ratios or min(sizes) <= 0 or min(ratios) <= 0:
        raise ctx.fail(f"sizes {sizes} and ratios {ratios} must be positive")
    offsets = ctx.attrs.floats("offsets", [0.5, 0.5]) or [0.5, 0.5]
    if len(offsets) != 2 or offsets[0] != offsets[1]:
        raise ctx.fail(f"offsets {offsets} differ between y and x", fix="the IR's prior boxes take one offset")
    steps = ctx.attrs.floats("steps", [-1.0, -1.0]) or [-1.0, -1.0]
    if len(steps) != 2:
        raise ctx.fail(f"steps {steps} needs 2 values (y, x)")
    height, width = x[2], x[3]
    widths, heights = anchor_sizes(sizes, ratios, height)
    # steps are normalised in MXNet; in cells here (0: one cell, the default)
    step_h = steps[0] * height if steps[0] > 0 else 0.0
    step_w = steps[1] * width if steps[1] > 0 else 0.0
    if (step_h > 0) != (step_w > 0):
        step_h, step_w = step_h or 1.0, step_w or 1.0
    boxes = ctx.value(
        PriorBoxClustered,
        [ctx.input(0), ctx.input(0)],
        suffix="/priors",
        width=widths,
        height=heights,
        clip=ctx.attrs.bool("clip", False),
        step_h=step_h,
        step_w=step_w,
        offset=offsets[0],
        variance=[0.1],
    )
    count = height * width * len(widths)
    corners = ctx.value(Slice, [boxes], suffix="/boxes", begins=[0], ends=[1], axes=[1])
    return ctx.value(Reshape, [corners], shape=[1, count, 4], special_zero=False)


@mxnet_extractor("_contrib_MultiBoxDetection", "MultiBoxDetection")
def multibox_detection(ctx: NodeContext) -> SSAValue:
    probs, loc, anchors = ctx.shape(0), ctx.shape(1), ctx.shape(2)
    if len(probs) != 3 or len(anchors) != 3 or anchors[2] != 4 or probs[2] != anchors[1]:
        raise ctx.fail(f"needs class probabilities [N, classes, A], locations [N, A * 4] and anchors [1, A, 4], got {list(probs)}, {list(loc)}, {list(anchors)}")
    if ctx.attrs.bool("force_suppress", False):
        raise ctx.fail("force_suppress (NMS across classes) is not supported", fix="DetectionOutput suppresses within each class")
    variances = ctx.attrs.floats("variances", [0.1, 0.1, 0.2, 0.2])
    assert variances is not None
    if len(variances) != 4:
        raise ctx.fail(f"variances {variances} needs 4 values")
    batch, classes, count = probs
    flat = ctx.value(Reshape, [ctx.input(2)], suffix="/anchors", shape=[1, 1, count * 4], special_zero=False)
    variance_row = ctx.constant(np.tile(np.asarray(variances, np.float32), count).reshape(1, 1, count * 4), "/variances")
    priors = ctx.value(Concat, [flat, variance_row], suffix="/priors", axis=1)
    scores = ctx.value(Permute, [_best_class_only(ctx, classes)], suffix="/scores", order=[0, 2, 1])
    scores = ctx.value(Reshape, [scores], suffix="/scores_flat", shape=[batch, count * classes], special_zero=False)
    top_k = ctx.attrs.int("nms_topk", -1)
    if 0 < top_k < count:  # MXNet keeps the top_k of all classes before NMS, DetectionOutput per class
        raise ctx.fail(f"nms_topk {top_k} (the best {top_k} detections of all classes before NMS) has no DetectionOutput form",
                       fix="export the model with nms_topk=-1 and keep the best detections after the run")
    return ctx.value(
        DetectionOutput,
        [ctx.input(1), scores, priors],
        num_classes=classes,
        background_label_id=ctx.attrs.int("background_id", 0),
        top_k=-1,
        keep_top_k=-1,
        code_type="caffe.PriorBoxParameter.CENTER_SIZE",
        share_location=True,
        nms_threshold=ctx.attrs.float("nms_threshold", 0.5),
        confidence_threshold=ctx.attrs.float("threshold", 0.01),
        clip_before_nms=ctx.attrs.bool("clip", True),
    )


def _best_class_only(ctx: NodeContext, classes: int) -> SSAValue:
    """cls_prob with every class but each anchor's best foreground class zeroed: MXNet gives an
    anchor one detection, of its best class, where DetectionOutput scores every class above
    the threshold (MXNet's default threshold 0.01 would otherwise add a detection per class).
    Exactly equal best scores keep both classes, where MXNet keeps the first."""
    foreground = np.ones((1, classes, 1), np.float32)
    background = ctx.attrs.int("background_id", 0)
    if 0 <= background < classes:
        foreground[0, background, 0] = 0.0
    probs = ctx.value(Eltwise, [ctx.input(0), ctx.constant(foreground, "/foreground")], suffix="/foreground_probs", operation="mul")
    best = ctx.value(Reduce, [probs], suffix="/best_prob", operation="max", axes=[1], keep_dims=True)
    is_best = ctx.value(Eltwise, [probs, best], suffix="/is_best", operation="equal")
    zero = ctx.constant(np.zeros((1, 1, 1), np.float32), "/zero")
    return ctx.value(Select, [is_best, probs, zero], suffix="/best_class_probs")


@mxnet_extractor("_contrib_Proposal", "Proposal")
def proposal(ctx: NodeContext) -> SSAValue:
    """Refused: no IR op computes MXNet's proposals exactly. The IR's Proposal (Caffe's box
    convention, which the Model Optimizer maps MXNet's onto) ends each box one pixel further
    than MXNet (x2, y2 are MXNet's + 1 unless clipped, which also moves the min_size test and
    the IoUs of NMS) and pads unused rows with zeros where MXNet repeats kept boxes: measured
    against MXNet 1.9.1 (tests/frontends/mxnet/data/rpn.npz). A wrong box is worse than a
    refusal."""
    raise IrforgeError(
        "_contrib_Proposal has no exact IR form: OpenVINO's Proposal ends boxes one pixel further than MXNet's",
        where=ctx.where,
        fix="cut the model before it (--output) and compute the proposals outside, or map it in an --extensions file with @mxnet_extractor",
        code="E414",
    )


@mxnet_extractor("ROIPooling")
def roi_pooling(ctx: NodeContext) -> SSAValue:
    size = ctx.attrs.ints("pooled_size")
    if not size or len(size) != 2:
        raise ctx.fail(f"pooled_size {size} needs 2 values (h, w)")
    return ctx.value(ROIPooling, [ctx.input(0), ctx.input(1)], pooled_h=size[0], pooled_w=size[1], spatial_scale=ctx.attrs.float("spatial_scale", 1.0))
