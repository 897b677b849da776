"""Detection models with torchvision's post-processing, written by hand (PyPI's torchvision
wheel does not load with the CPU torch): an SSDlite-like network whose outputs have sizes
that depend on the data.

`SsdLite` follows torchvision's `SSD.postprocess_detections`: boxes decoded from anchors
(`BoxCoder.decode_single`, weights 10, 10, 5, 5) and clipped to the image, class scores by
softmax; per foreground class the scores above a threshold (a mask: NonZero), the top
`min(topk_candidates, count)` of them (`det_utils._topk_min`: Shape -> Concat -> ReduceMin
-> a TopK whose k is known only at run time), then `batched_nms` (the coordinate trick:
boxes offset per class, one NonMaxSuppression; torchvision's ONNX symbolic of `nms`) and the
first `detections_per_img` kept (a Slice of a dynamic size), gathered.
"""

from __future__ import annotations

import math
import sys

import torch
from torch import nn


CONFIDENCE = 2.0


def conv_bn(i: int, o: int, k: int = 3, s: int = 1, groups: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(i, o, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(o), nn.ReLU6())


def greedy_nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """Indices of the boxes kept by greedy NMS, best score first (torchvision.ops.nms)."""
    order = scores.argsort(descending=True)
    keep: list[int] = []
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    suppressed = torch.zeros(len(order), dtype=torch.bool)
    for pos, i in enumerate(order.tolist()):
        if suppressed[pos]:
            continue
        keep.append(i)
        rest = order[pos + 1 :]
        lt = torch.maximum(boxes[i, :2], boxes[rest, :2])
        rb = torch.minimum(boxes[i, 2:], boxes[rest, 2:])
        inter = (rb - lt).clamp(min=0).prod(dim=1)
        iou = inter / (area[i] + area[rest] - inter)
        suppressed[pos + 1 :] |= iou > iou_threshold
    return torch.tensor(keep, dtype=torch.int64)


class Nms(torch.autograd.Function):
    """torchvision.ops.nms and its ONNX symbolic (torchvision/ops/_register_onnx_ops.py)."""

    @staticmethod
    def forward(ctx, boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:  # type: ignore[no-untyped-def, override]
        return greedy_nms(boxes, scores, iou_threshold)

    @staticmethod
    def symbolic(g, boxes, scores, iou_threshold):  # type: ignore[no-untyped-def]
        boxes = g.op("Unsqueeze", boxes, g.op("Constant", value_t=torch.tensor([0])))
        scores = g.op("Unsqueeze", scores, g.op("Constant", value_t=torch.tensor([0, 1])))
        limit = g.op("Constant", value_t=torch.tensor([sys.maxsize], dtype=torch.long))
        iou = g.op("Constant", value_t=torch.tensor([iou_threshold], dtype=torch.float))
        selected = g.op("NonMaxSuppression", boxes, scores, limit, iou)
        column = g.op("Gather", selected, g.op("Constant", value_t=torch.tensor([2], dtype=torch.long)), axis_i=1)
        return g.op("Squeeze", column, g.op("Constant", value_t=torch.tensor([1])))


@torch.library.custom_op("zoo::nms", mutates_args=())
def nms_op(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """torchvision::nms as torch.export sees it: an op whose result size is data-dependent."""
    return greedy_nms(boxes, scores, iou_threshold)


@nms_op.register_fake
def _(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    return boxes.new_empty((torch.library.get_ctx().new_dynamic_size(),), dtype=torch.int64)


def nms_onnx(boxes, scores, iou_threshold: float):  # type: ignore[no-untyped-def]
    """The dynamo exporter's translation of zoo::nms: what torchvision's symbolic writes."""
    from onnxscript import opset18 as op

    selected = op.NonMaxSuppression(op.Unsqueeze(boxes, [0]), op.Unsqueeze(scores, [0, 1]),
                                    op.Constant(value_ints=[sys.maxsize]), op.Constant(value_floats=[iou_threshold]))
    return op.Squeeze(op.Gather(selected, op.Constant(value_ints=[2]), axis=1), [1])


def custom_translations() -> dict:  # type: ignore[type-arg]
    """For torch.onnx.export(..., dynamo=True, custom_translation_table=...)."""
    return {torch.ops.zoo.nms.default: nms_onnx}


def batched_nms(boxes: torch.Tensor, scores: torch.Tensor, labels: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    """torchvision.ops.batched_nms's coordinate trick: boxes of different classes never overlap."""
    offsets = labels.to(boxes) * (boxes.max() + torch.tensor(1).to(boxes))
    if torch.jit.is_tracing():
        return Nms.apply(boxes + offsets[:, None], scores, iou_threshold)
    return nms_op(boxes + offsets[:, None], scores, iou_threshold)


def topk_min(x: torch.Tensor, k: int) -> torch.Tensor | int:
    """det_utils._topk_min: min(k, x.size(0)), as a tensor when tracing (Shape -> Concat ->
    ReduceMin), else a (symbolic) int."""
    if not torch.jit.is_tracing():
        return min(k, x.size(0))
    count = torch._shape_as_tensor(x)[0].unsqueeze(0)
    return torch.min(torch.cat((torch.tensor([k], dtype=count.dtype), count), 0))


def decode(rel: torch.Tensor, anchors: torch.Tensor, size: int) -> torch.Tensor:
    """BoxCoder.decode_single with weights (10, 10, 5, 5), then clip_boxes_to_image."""
    widths, heights = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    cx, cy = anchors[:, 0] + 0.5 * widths, anchors[:, 1] + 0.5 * heights
    dx, dy = rel[:, 0] / 10, rel[:, 1] / 10
    dw = torch.clamp(rel[:, 2] / 5, max=math.log(1000.0 / 16))
    dh = torch.clamp(rel[:, 3] / 5, max=math.log(1000.0 / 16))
    px, py = dx * widths + cx, dy * heights + cy
    pw, ph = torch.exp(dw) * widths, torch.exp(dh) * heights
    boxes = torch.stack((px - 0.5 * pw, py - 0.5 * ph, px + 0.5 * pw, py + 0.5 * ph), dim=1)
    return boxes.clamp(0, size)


class SsdLite(nn.Module):
    """A small MobileNet-like backbone, depthwise-separable box and class heads over two
    anchors per cell, and torchvision's SSD post-processing (see the module docstring)."""

    def __init__(self, size: int = 64, classes: int = 3, anchors: int = 2) -> None:
        super().__init__()
        self.size, self.classes, self.anchors = size, classes, anchors
        self.backbone = nn.Sequential(conv_bn(3, 16, 3, 2), conv_bn(16, 16, 3, 1, groups=16), conv_bn(16, 32, 1),
                                      conv_bn(32, 32, 3, 2, groups=32), conv_bn(32, 48, 1), conv_bn(48, 48, 3, 2, groups=48))
        self.box_head = nn.Sequential(conv_bn(48, 48, 3, groups=48), nn.Conv2d(48, 4 * anchors, 1))
        self.cls_head = nn.Sequential(conv_bn(48, 48, 3, groups=48), nn.Conv2d(48, classes * anchors, 1))
        cells = size // 8
        centres = (torch.arange(cells, dtype=torch.float32) + 0.5) * 8
        cy, cx = torch.meshgrid(centres, centres, indexing="ij")
        sides = torch.tensor([12.0, 24.0])
        boxes = [torch.stack((cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2), dim=-1) for s in sides[:anchors]]
        self.register_buffer("anchor_boxes", torch.stack(boxes, dim=2).reshape(-1, 4))
        self.score_thresh, self.nms_thresh, self.topk_candidates, self.detections_per_img = 0.4, 0.45, 20, 10

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        f = self.backbone(x)
        rel = self.box_head(f).permute(0, 2, 3, 1).reshape(-1, 4)
        logits = self.cls_head(f).permute(0, 2, 3, 1).reshape(-1, self.classes)
        boxes = decode(rel, self.anchor_boxes, self.size)
        scores = logits.softmax(-1)
        all_boxes, all_scores, all_labels = [], [], []
        for label in range(1, self.classes):
            score = scores[:, label]
            keep = score > self.score_thresh
            score, box = score[keep], boxes[keep]
            score, idxs = score.topk(topk_min(score, self.topk_candidates))
            all_boxes.append(box[idxs])
            all_scores.append(score)
            all_labels.append(torch.full_like(score, label, dtype=torch.int64))
        image_boxes, image_scores, image_labels = torch.cat(all_boxes), torch.cat(all_scores), torch.cat(all_labels)
        keep = batched_nms(image_boxes, image_scores, image_labels, self.nms_thresh)[: self.detections_per_img]
        return image_boxes[keep], image_scores[keep], image_labels[keep]


def ssdlite() -> nn.Module:
    torch.manual_seed(0)
    model = SsdLite()
    with torch.no_grad():  # batch statistics of random images, so activations keep their scale
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.momentum = None
        for _ in range(4):
            f = model.backbone(torch.randn(4, 3, model.size, model.size))
            model.box_head(f), model.cls_head(f)
        model.cls_head[1].weight.mul_(CONFIDENCE)  # confident enough that the thresholds keep some, not all
    return model.eval()
