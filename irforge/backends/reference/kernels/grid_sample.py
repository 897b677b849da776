"""Reference kernel of nn.grid_sample, vectorised over all grid points."""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.grid_sample import GridSample


# nn.grid_sample follows onnxruntime's GridSample (grid_sample.cc) step by step, in float32:
# denormalise, pad the coordinate when it leaves the borders, then read neighbours, padding
# each again by pixel.
_CUBIC_A = np.float32(-0.75)


def _denormalise(n: np.ndarray, length: int, align_corners: bool) -> np.ndarray:
    one, two = np.float32(1), np.float32(2)
    if align_corners:
        return (n + one) / two * np.float32(length - 1)
    return ((n + one) * np.float32(length) - one) / two


def _reflect(x: np.ndarray, low: float, high: float) -> np.ndarray:
    """Reflect x at the borders low and high until it lies between them."""
    span = np.float32(high - low)
    if span <= 0:  # one pixel with align_corners: every coordinate is that pixel
        return np.full_like(x, np.float32(low))
    below, above = x < low, x > high
    dist = np.where(below, np.float32(low) - x, x - np.float32(high))
    folds = np.trunc(dist / span)
    rest = dist - folds * span
    even = folds % 2 == 0
    from_low, from_high = np.float32(low) + rest, np.float32(high) - rest
    return np.where(below, np.where(even, from_low, from_high), np.where(above, np.where(even, from_high, from_low), x))


def _pixels(image: np.ndarray, iy: np.ndarray, ix: np.ndarray, padding: str, borders: tuple[float, ...]) -> np.ndarray:
    """image [N, H, W, C] at integer rows iy and columns ix ([N, ...]) -> [N, ..., C]."""
    _, height, width, _ = image.shape
    batch = np.arange(image.shape[0]).reshape((-1,) + (1,) * (iy.ndim - 1))
    if padding == "reflection":
        ix = _reflect(ix.astype(np.float32), borders[0], borders[2]).astype(np.int64)
        iy = _reflect(iy.astype(np.float32), borders[1], borders[3]).astype(np.int64)
    inside = (ix >= 0) & (ix < width) & (iy >= 0) & (iy < height)
    values = image[batch, np.clip(iy, 0, height - 1), np.clip(ix, 0, width - 1)]
    if padding == "zeros":
        values = values * inside[..., None]
    return values


def _cubic_weights(t: np.ndarray) -> np.ndarray:
    """Keys' weights [..., 4] of the taps floor(x) - 1 .. floor(x) + 2 for t = x - floor(x)."""
    a = _CUBIC_A
    one, two, three = np.float32(1), np.float32(2), np.float32(3)
    s = t + one
    w0 = ((a * s - np.float32(5) * a) * s + np.float32(8) * a) * s - np.float32(4) * a
    w1 = ((a + two) * t - (a + three)) * t * t + one
    u = one - t
    w2 = ((a + two) * u - (a + three)) * u * u + one
    v = two - t
    w3 = ((a * v - np.float32(5) * a) * v + np.float32(8) * a) * v - np.float32(4) * a
    return np.stack([w0, w1, w2, w3], axis=-1)


@kernel(GridSample)
def grid_sample(op: GridSample, x: np.ndarray, grid: np.ndarray) -> np.ndarray:
    dtype = np.float64 if x.dtype == np.float64 else np.float32
    _, _, height, width = x.shape
    mode, padding, align = op.str_prop("mode"), op.str_prop("padding_mode"), op.bool_prop("align_corners")
    image = np.moveaxis(x.astype(dtype), 1, -1)  # [N, H, W, C]
    g = grid.astype(dtype)
    px, py = _denormalise(g[..., 0], width, align), _denormalise(g[..., 1], height, align)
    borders = (0.0, 0.0, width - 1.0, height - 1.0) if align else (-0.5, -0.5, width - 0.5, height - 0.5)
    if mode == "nearest":  # onnxruntime reads the rounded coordinate directly (nearbyint: half to even)
        out = _pixels(image, np.rint(py).astype(np.int64), np.rint(px).astype(np.int64), padding, borders)
        return np.moveaxis(out, -1, 1).astype(x.dtype)
    outside = (px < borders[0]) | (px > borders[2]) | (py < borders[1]) | (py > borders[3])
    # border: bilinear clamps the coordinate to the outer pixel centres (either alignment);
    # bicubic keeps it and clamps each of its 16 taps (measured against onnxruntime 1.32)
    if padding == "border" and mode == "bilinear":
        px = np.where(outside, np.clip(px, 0, width - 1), px).astype(dtype)
        py = np.where(outside, np.clip(py, 0, height - 1), py).astype(dtype)
    elif padding == "reflection":
        px = np.where(outside, _reflect(px, borders[0], borders[2]), px).astype(dtype)
        py = np.where(outside, _reflect(py, borders[1], borders[3]), py).astype(dtype)
    x0, y0 = np.floor(px), np.floor(py)
    tx, ty = px - x0, py - y0
    if mode == "bilinear":
        offsets = np.arange(2)
        wx = np.stack([np.float32(1) - tx, tx], axis=-1)
        wy = np.stack([np.float32(1) - ty, ty], axis=-1)
    else:
        offsets = np.arange(-1, 3)
        wx, wy = _cubic_weights(tx), _cubic_weights(ty)
    k = len(offsets)
    iy = (y0.astype(np.int64)[..., None, None] + offsets[:, None]).repeat(k, axis=-1)
    ix = (x0.astype(np.int64)[..., None, None] + offsets[None, :]).repeat(k, axis=-2)
    values = _pixels(image, iy, ix, padding, borders)  # [N, Ho, Wo, k, k, C]
    rows = (values * wx[..., None, :, None]).sum(axis=-2)  # [N, Ho, Wo, k, C]
    out = (rows * wy[..., :, None]).sum(axis=-2)
    return np.moveaxis(out, -1, 1).astype(x.dtype)
