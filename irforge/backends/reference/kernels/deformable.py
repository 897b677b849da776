"""Reference kernel of nn.deformable_convolution: bilinear im2col at the deformed tap
positions, then a grouped matrix product (as onnxruntime's DeformConv does)."""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.deformable import DeformableConvolution


def _bilinear(image: np.ndarray, py: np.ndarray, px: np.ndarray) -> np.ndarray:
    """image [N, G, Cg, H, W] sampled at py/px [N, G, T, Ho, Wo] -> [N, G, Cg, T, Ho, Wo];
    each of the 4 neighbours outside the image reads 0 (so a point at or beyond -1 / H reads 0)."""
    n, g, cg, height, width = image.shape
    y0, x0 = np.floor(py), np.floor(px)
    ty, tx = py - y0, px - x0
    y0i, x0i = y0.astype(np.int64), x0.astype(np.int64)
    bi = np.arange(n).reshape(n, 1, 1, 1, 1)
    gi = np.arange(g).reshape(1, g, 1, 1, 1)
    one = np.ones((), py.dtype)
    out = np.zeros((n, g, cg, *py.shape[2:]), image.dtype)
    for dy, wy in ((0, one - ty), (1, ty)):
        for dx, wx in ((0, one - tx), (1, tx)):
            iy, ix = y0i + dy, x0i + dx
            inside = (iy >= 0) & (iy < height) & (ix >= 0) & (ix < width)
            v = image[bi, gi, :, np.clip(iy, 0, height - 1), np.clip(ix, 0, width - 1)]  # [N, G, T, Ho, Wo, Cg]
            weight = (wy * wx * inside).astype(image.dtype)
            out += np.moveaxis(v * weight[..., None], -1, 2)
    return out


def _bilinear_unpadded(image: np.ndarray, py: np.ndarray, px: np.ndarray) -> np.ndarray:
    """OpenVINO's DeformableConvolution with bilinear_interpolation_pad false: a point outside
    [0, H) x [0, W) reads 0; inside, the neighbours are floor and ceil clamped into the image
    (so a point between the last row and H reads the last row)."""
    n, g, cg, height, width = image.shape
    inside = (py >= 0) & (py < height) & (px >= 0) & (px < width)
    y1 = np.maximum(np.floor(py), 0).astype(np.int64)
    x1 = np.maximum(np.floor(px), 0).astype(np.int64)
    y2 = np.minimum(np.ceil(py), height - 1).astype(np.int64)
    x2 = np.minimum(np.ceil(px), width - 1).astype(np.int64)
    ty, tx = py - y1, px - x1
    bi = np.arange(n).reshape(n, 1, 1, 1, 1)
    gi = np.arange(g).reshape(1, g, 1, 1, 1)
    one = np.ones((), py.dtype)
    out = np.zeros((n, g, cg, *py.shape[2:]), image.dtype)
    for iy, wy in ((y1, one - ty), (y2, ty)):
        for ix, wx in ((x1, one - tx), (x2, tx)):
            v = image[bi, gi, :, np.clip(iy, 0, height - 1), np.clip(ix, 0, width - 1)]
            weight = (wy * wx * inside).astype(image.dtype)
            out += np.moveaxis(v * weight[..., None], -1, 2)
    return out


@kernel(DeformableConvolution)
def deformable_convolution(op: DeformableConvolution, x: np.ndarray, offsets: np.ndarray, w: np.ndarray, *mask: np.ndarray) -> np.ndarray:
    dtype = np.float64 if x.dtype == np.float64 else np.float32
    n, c, height, width = x.shape
    o, cpg, kh, kw = w.shape
    group, dgroup = op.int_prop("group"), op.int_prop("deformable_group")
    (sh, sw), (dh, dw) = op.window("strides", 1), op.window("dilations", 1)
    ph, pw = op.window("pads_begin", 0)
    ho, wo = offsets.shape[2:]
    taps = kh * kw
    off = offsets.astype(dtype).reshape(n, dgroup, taps, 2, ho, wo)
    ki, kj = np.divmod(np.arange(taps), kw)
    base_y = (np.arange(ho) * sh - ph)[None, :, None] + (ki * dh)[:, None, None]  # [T, Ho, 1]
    base_x = (np.arange(wo) * sw - pw)[None, None, :] + (kj * dw)[:, None, None]  # [T, 1, Wo]
    py = base_y.astype(dtype) + off[:, :, :, 0]
    px = base_x.astype(dtype) + off[:, :, :, 1]
    image = x.astype(dtype).reshape(n, dgroup, c // dgroup, height, width)
    sample = _bilinear if op.bool_prop("bilinear_interpolation_pad") else _bilinear_unpadded
    cols = sample(image, py, px)  # [N, Gd, C/Gd, T, Ho, Wo]
    if mask:
        cols = cols * mask[0].astype(dtype).reshape(n, dgroup, 1, taps, ho, wo)
    cols = cols.reshape(n, group, cpg * taps, ho * wo)
    weights = w.astype(dtype).reshape(group, o // group, cpg * taps)
    y = np.einsum("gok,ngkp->ngop", weights, cols)
    return y.reshape(n, o, ho, wo).astype(x.dtype)
