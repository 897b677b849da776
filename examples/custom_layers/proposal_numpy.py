"""Proposal: the region-proposal layer of Faster R-CNN, as py-faster-rcnn ships it — a Caffe
`Python` layer (`rpn.proposal_layer.ProposalLayer`) whose settings sit in `param_str` — made
a custom irforge op. This is the Model Optimizer guide's custom-layer walk-through, and the
documented alternative to the built-in mapping onto `nn.proposal` (examples/custom_layers/
proposal.py): a custom op runs on irforge's devices, but an IR holding it (layer type Proposal
of opset "frcnn") needs an OpenVINO extension library to load in OpenVINO itself.

    ir-convert --input_model net.caffemodel --extensions examples/custom_layers/proposal_numpy.py

Inputs: fg/bg scores [N, 2A, H, W], box deltas [N, 4A, H, W], image info [N, 3] (height,
width, scale). Output: [N * post_nms_topn, 5] rows (image index, x1, y1, x2, y2), the rows
past the kept boxes zero.
"""

from __future__ import annotations

import numpy as np

from irforge.custom import Attr, CustomOp, op_extension, python_param_dict


class Proposal(CustomOp):
    """Anchors at every feature-map cell, moved by the predicted deltas, clipped to the image,
    filtered by size, the best pre_nms_topn kept, suppressed (NMS), the best post_nms_topn out."""

    extension = "frcnn"
    op = "proposal"
    num_inputs, num_outputs = 3, 1
    attrs = {
        "feat_stride": Attr(int, 16),
        "base_size": Attr(int, 16),
        "scales": Attr("floats", [8.0, 16.0, 32.0]),
        "ratios": Attr("floats", [0.5, 1.0, 2.0]),
        "pre_nms_topn": Attr(int, 6000),
        "post_nms_topn": Attr(int, 300),
        "nms_thresh": Attr(float, 0.7),
        "min_size": Attr(int, 16),
    }

    def verify(self) -> None:
        if self.post_nms_topn < 1 or self.feat_stride < 1:
            raise self.error("post_nms_topn and feat_stride must be positive")

    def infer(self, shapes, dtypes):  # type: ignore[no-untyped-def]
        anchors = len(self.scales) * len(self.ratios)
        if shapes[0][1] not in (-1, 2 * anchors):
            raise self.error(f"scores have {shapes[0][1]} channels, expected {2 * anchors} (2 per anchor)")
        batch = shapes[0][0]
        return [((batch * self.post_nms_topn if batch > 0 else -1, 5), dtypes[0])]

    def forward(self, scores: np.ndarray, deltas: np.ndarray, im_info: np.ndarray) -> np.ndarray:
        return np.concatenate([self.one_image(i, scores[i], deltas[i], im_info[i]) for i in range(scores.shape[0])])

    def one_image(self, index: int, scores: np.ndarray, deltas: np.ndarray, info: np.ndarray) -> np.ndarray:
        a = len(self.scales) * len(self.ratios)
        h, w = scores.shape[1:]
        shift_x, shift_y = np.meshgrid(np.arange(w) * self.feat_stride, np.arange(h) * self.feat_stride)
        shifts = np.stack([shift_x.ravel(), shift_y.ravel()] * 2, axis=1)
        anchors = (anchor_set(self.base_size, self.ratios, self.scales)[None] + shifts[:, None]).reshape(-1, 4)
        fg = scores[a:].transpose(1, 2, 0).reshape(-1)
        boxes = decode(anchors, deltas.transpose(1, 2, 0).reshape(-1, 4))
        boxes[:, 0::2] = boxes[:, 0::2].clip(0, info[1] - 1)
        boxes[:, 1::2] = boxes[:, 1::2].clip(0, info[0] - 1)
        size = self.min_size * info[2]
        keep = np.where((boxes[:, 2] - boxes[:, 0] + 1 >= size) & (boxes[:, 3] - boxes[:, 1] + 1 >= size))[0]
        order = keep[np.argsort(-fg[keep], kind="stable")][: self.pre_nms_topn]
        kept = nms(boxes[order], self.nms_thresh)[: self.post_nms_topn]
        out = np.zeros((self.post_nms_topn, 5), np.float32)
        out[: len(kept), 0] = index
        out[: len(kept), 1:] = boxes[order][kept]
        return out


def anchor_set(base: int, ratios: list[float], scales: list[float]) -> np.ndarray:
    """py-faster-rcnn's anchors: each ratio at the base box's area, then each scale."""
    center = (base - 1) / 2
    rows = []
    for ratio in ratios:
        ws = np.round(np.sqrt(base * base / ratio))
        hs = np.round(ws * ratio)
        for scale in scales:
            half_w, half_h = (ws * scale - 1) / 2, (hs * scale - 1) / 2
            rows.append([center - half_w, center - half_h, center + half_w, center + half_h])
    return np.array(rows, np.float32)


def decode(anchors: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    widths = anchors[:, 2] - anchors[:, 0] + 1
    heights = anchors[:, 3] - anchors[:, 1] + 1
    cx = anchors[:, 0] + 0.5 * widths + deltas[:, 0] * widths
    cy = anchors[:, 1] + 0.5 * heights + deltas[:, 1] * heights
    pw, ph = np.exp(deltas[:, 2]) * widths, np.exp(deltas[:, 3]) * heights
    return np.stack([cx - 0.5 * pw, cy - 0.5 * ph, cx + 0.5 * pw, cy + 0.5 * ph], axis=1).astype(np.float32)


def nms(boxes: np.ndarray, threshold: float) -> list[int]:
    """Indices of the boxes kept by greedy non-maximum suppression (boxes sorted by score)."""
    areas = (boxes[:, 2] - boxes[:, 0] + 1) * (boxes[:, 3] - boxes[:, 1] + 1)
    suppressed = np.zeros(len(boxes), bool)
    kept = []
    for i in range(len(boxes)):
        if suppressed[i]:
            continue
        kept.append(i)
        xx1, yy1 = np.maximum(boxes[i, 0], boxes[:, 0]), np.maximum(boxes[i, 1], boxes[:, 1])
        xx2, yy2 = np.minimum(boxes[i, 2], boxes[:, 2]), np.minimum(boxes[i, 3], boxes[:, 3])
        inter = np.maximum(0, xx2 - xx1 + 1) * np.maximum(0, yy2 - yy1 + 1)
        suppressed |= inter / (areas[i] + areas - inter) > threshold
    return kept


# the Python layer of py-faster-rcnn, its settings read from param_str ('feat_stride': 16)
op_extension("caffe", "Python:rpn.proposal_layer.ProposalLayer", Proposal, attrs=python_param_dict)
