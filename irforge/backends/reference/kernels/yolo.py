"""Reference kernels of the YOLO ops: RegionYolo and ReorgYolo (Darknet's region and reorg
layers, as OpenVINO's reference implementations run them)."""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.yolo import RegionYolo, ReorgYolo


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


@kernel(RegionYolo)
def region_yolo(op: RegionYolo, x: np.ndarray) -> np.ndarray:
    n, _, h, w = x.shape
    coords = op.int_prop("coords")
    regions = x.astype(np.float64).reshape(n, op.num_regions(), op.channels_per_region(), h, w).copy()
    regions[:, :, :2] = sigmoid(regions[:, :, :2])
    regions[:, :, coords] = sigmoid(regions[:, :, coords])
    classes = regions[:, :, coords + 1 :]
    if op.bool_prop("do_softmax"):
        e = np.exp(classes - classes.max(axis=2, keepdims=True))
        regions[:, :, coords + 1 :] = e / e.sum(axis=2, keepdims=True)
    else:
        regions[:, :, coords + 1 :] = sigmoid(classes)
    out_shape = op.flattened(x.shape) if op.bool_prop("do_softmax") else x.shape
    return regions.reshape(out_shape).astype(x.dtype)


@kernel(ReorgYolo)
def reorg_yolo(op: ReorgYolo, x: np.ndarray) -> np.ndarray:
    n, c, h, w = x.shape
    s = op.int_prop("stride")
    # the input as [N, C', H * s, W * s] with (h * s + dy, w * s + dx) split apart
    source = x.reshape(n, c // (s * s), h, s, w, s)
    # output (c = k * C' + c', h, w), k = dy * s + dx, in the input's [N, C, H, W] order
    out = source.transpose(0, 3, 5, 1, 2, 4).reshape(n, c, h, w)
    return out.reshape(n, c * s * s, h // s, w // s)
