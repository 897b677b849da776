"""Reference kernel of nn.resample, axis by axis; coordinates in float32 as onnxruntime has them."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.resample import Resample, ResampleBy, ResampleTo, scaled_size
from irforge.errors import IrforgeError
from irforge.backends.reference.run_time_sizes import check_output_size

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
    return resample_to_dims(op, x, op.output_dims(x.shape), op.axis_scales(x.shape))


@kernel(ResampleTo)
def resample_to(op: ResampleTo, x: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    out_dims = list(x.shape)
    for axis, size in zip(op.resized_axes(), sizes.reshape(-1)):
        if size < 0:
            raise IrforgeError(f"{op.label}: sizes {sizes.tolist()} holds a negative size", fix="check the sizes the model computes", code="E884")
        out_dims[axis] = int(size)
    check_output_size(op.label, out_dims, x.dtype)
    # scale out / in in float32, as nn.resample's sizes (onnxruntime); an empty axis has none
    scales = [float(np.float32(o) / np.float32(i)) if i else 1.0 for o, i in zip(out_dims, x.shape)]
    return resample_to_dims(op, x, out_dims, scales)


@kernel(ResampleBy)
def resample_by(op: ResampleBy, x: np.ndarray, scales: np.ndarray) -> np.ndarray:
    out_dims, full = list(x.shape), [1.0] * x.ndim
    for axis, scale in zip(op.resized_axes(), scales.reshape(-1)):
        if not scale > 0:  # ONNX and OpenVINO define scales > 0 only (NaN included here)
            raise IrforgeError(f"{op.label}: scales {scales.tolist()} holds a scale that is not > 0", fix="check the scales the model computes", code="E889")
        out_dims[axis], full[axis] = scaled_size(x.shape[axis], float(scale)), float(np.float32(scale))
    return resample_to_dims(op, x, out_dims, full)


def resample_to_dims(op: Resample | ResampleTo | ResampleBy, x: np.ndarray, out_dims, scales) -> np.ndarray:  # type: ignore[no-untyped-def]
    mode = op.str_prop("mode")
    for axis, (n_in, n_out, scale) in enumerate(zip(x.shape, out_dims, scales)):
        if n_in == 0 or n_out == 0:
            x = np.zeros(x.shape[:axis] + (n_out,) + x.shape[axis + 1 :], x.dtype)
            continue
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
