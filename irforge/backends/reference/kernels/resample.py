"""Reference kernel of nn.resample, axis by axis; coordinates in float32 as onnxruntime has them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.resample import GridSample, Resample

Taps = tuple[np.ndarray, np.ndarray]
"""Source indices and weights, both [out, taps], of one axis."""

_COORDINATES: dict[str, Callable[[np.ndarray, np.float32, int, int], np.ndarray]] = {
    "half_pixel": lambda y, s, n_in, n_out: (y + np.float32(0.5)) / s - np.float32(0.5),
    "asymmetric": lambda y, s, n_in, n_out: y / s,
    "align_corners": lambda y, s, n_in, n_out: (
        y * np.float32(n_in - 1) / np.float32(n_out - 1) if n_out > 1 else np.zeros_like(y)
    ),
    "pytorch_half_pixel": lambda y, s, n_in, n_out: (
        (y + np.float32(0.5)) / s - np.float32(0.5) if n_out > 1 else np.zeros_like(y)
    ),
    "tf_half_pixel_for_nn": lambda y, s, n_in, n_out: (y + np.float32(0.5)) / s,
}

_ROUNDING: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "round_prefer_floor": lambda c: np.where(c - np.floor(c) > 0.5, np.ceil(c), np.floor(c)),
    "round_prefer_ceil": lambda c: np.where(c - np.floor(c) >= 0.5, np.ceil(c), np.floor(c)),
    "floor": np.floor,
    "ceil": np.ceil,
}


def source_coordinates(mode: str, scale: float, n_in: int, n_out: int) -> np.ndarray:
    return _COORDINATES[mode](np.arange(n_out, dtype=np.float32), np.float32(scale), n_in, n_out)


def nearest_taps(coords: np.ndarray, n_in: int, nearest_mode: str) -> Taps:
    index = np.clip(_ROUNDING[nearest_mode](coords), 0, n_in - 1).astype(np.int64)
    return index[:, None], np.ones((len(coords), 1))


def linear_taps(coords: np.ndarray, n_in: int) -> Taps:
    c = np.clip(coords.astype(np.float64), 0, n_in - 1)
    low = np.floor(c)
    frac = c - low
    index = np.stack([low, np.minimum(low + 1, n_in - 1)], axis=1).astype(np.int64)
    return index, np.stack([1 - frac, frac], axis=1)


def cubic_taps(coords: np.ndarray, n_in: int, a: float) -> Taps:
    """Keys' cubic convolution with parameter `a` over the 4 nearest indices, edge-clamped."""
    c = coords.astype(np.float64)
    low = np.floor(c)
    # distances from the coordinate to indices low-1 .. low+2
    dist = np.abs((c - low)[:, None] - np.arange(-1, 3)[None, :])
    near = ((a + 2) * dist - (a + 3)) * dist * dist + 1
    far = ((a * dist - 5 * a) * dist + 8 * a) * dist - 4 * a
    weights = np.where(dist <= 1, near, far)
    index = np.clip(low[:, None] + np.arange(-1, 3)[None, :], 0, n_in - 1).astype(np.int64)
    return index, weights


def resample_axis(x: np.ndarray, axis: int, taps: Taps) -> np.ndarray:
    index, weights = taps
    gathered = np.take(x, index, axis=axis)  # the axis becomes [out, taps]
    if index.shape[1] == 1:
        return gathered.squeeze(axis + 1)
    shape = (1,) * axis + weights.shape + (1,) * (x.ndim - axis - 1)
    return (gathered * weights.reshape(shape)).sum(axis=axis + 1)


@kernel(Resample)
def resample(op: Resample, x: np.ndarray) -> np.ndarray:
    mode = op.str_prop("mode")
    out_dims = op.output_dims(x.shape)
    for axis, (n_in, n_out, scale) in enumerate(zip(x.shape, out_dims, op.axis_scales(x.shape))):
        if n_in == n_out and scale == 1:
            continue
        coords = source_coordinates(op.str_prop("coordinate_transformation_mode"), scale, n_in, n_out)
        if mode == "nearest":
            taps = nearest_taps(coords, n_in, op.str_prop("nearest_mode"))
        elif mode == "linear":
            taps = linear_taps(coords, n_in)
        else:
            taps = cubic_taps(coords, n_in, op.float_prop("cubic_coeff_a"))
        x = resample_axis(x, axis, taps)
    return x


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
