"""Reference kernels of the sliding-window family: convolution, deconvolution, pooling."""

from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.conv import Convolution, Deconvolution, Pooling


def windows(
    x: np.ndarray,
    kernel_shape: tuple[int, ...],
    strides: tuple[int, ...],
    dilations: tuple[int, ...],
) -> np.ndarray:
    """View of shape [N, C, *out, *kernel] over an already padded NC* input."""
    n = len(kernel_shape)
    extents = tuple(d * (k - 1) + 1 for k, d in zip(kernel_shape, dilations))
    view = sliding_window_view(x, extents, axis=tuple(range(2, 2 + n)))
    out_index = tuple(slice(None, None, s) for s in strides)
    kernel_index = tuple(slice(None, None, d) for d in dilations)
    return view[(slice(None), slice(None)) + out_index + kernel_index]


def pad_spatial(x: np.ndarray, begin: tuple[int, ...], end: tuple[int, ...], value: float = 0) -> np.ndarray:
    widths = [(0, 0), (0, 0)] + list(zip(begin, end))
    return np.pad(x, widths, constant_values=value)


@kernel(Convolution)
def convolution(op: Convolution, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    kernel_shape = w.shape[2:]
    begin, end = op.explicit_pads(kernel_shape, x.shape[2:])
    strides, dilations = op.window("strides", 1), op.window("dilations", 1)
    view = windows(pad_spatial(x, begin, end), kernel_shape, strides, dilations)
    group = op.int_prop("group")
    n = len(kernel_shape)
    in_per_group, out_per_group = w.shape[1], w.shape[0] // group
    kernel_axes_v = list(range(2 + n, 2 + 2 * n))
    outputs = []
    for g in range(group):
        v = view[:, g * in_per_group : (g + 1) * in_per_group]
        wg = w[g * out_per_group : (g + 1) * out_per_group]
        # contract channels and kernel offsets: [N, *out, O]
        y = np.tensordot(v, wg, axes=([1] + kernel_axes_v, [1] + list(range(2, 2 + n))))
        outputs.append(np.moveaxis(y, -1, 1))
    out = np.concatenate(outputs, axis=1) if group > 1 else outputs[0]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * n)
    return out


def scatter_transposed(
    x: np.ndarray, w: np.ndarray, strides: tuple[int, ...], dilations: tuple[int, ...], full: tuple[int, ...]
) -> np.ndarray:
    """Ungrouped transposed convolution, uncropped: [N, O, *full] from x [N, I, *in] and w [I, O, *k]."""
    # every input position times every kernel tap: [N, *in, O, *k]
    products = np.tensordot(x, w, axes=([1], [0]))
    out = np.zeros((x.shape[0], w.shape[1], *full), dtype=products.dtype)
    for tap in itertools.product(*(range(k) for k in w.shape[2:])):
        target = tuple(
            slice(t * d, t * d + s * (size - 1) + 1, s)
            for t, d, s, size in zip(tap, dilations, strides, x.shape[2:])
        )
        out[(slice(None), slice(None)) + target] += np.moveaxis(products[(...,) + tap], -1, 1)
    return out


@kernel(Deconvolution)
def deconvolution(op: Deconvolution, x: np.ndarray, w: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    kernel_shape, in_dims = w.shape[2:], x.shape[2:]
    strides, dilations = op.window("strides", 1), op.window("dilations", 1)
    full = tuple(
        s * (size - 1) + d * (k - 1) + 1 + p
        for size, k, s, d, p in zip(in_dims, kernel_shape, strides, dilations, op.window("output_padding", 0))
    )
    group = op.int_prop("group")
    in_per_group = w.shape[0] // group
    parts = [
        scatter_transposed(
            x[:, g * in_per_group : (g + 1) * in_per_group],
            w[g * in_per_group : (g + 1) * in_per_group],
            strides,
            dilations,
            full,
        )
        for g in range(group)
    ]
    out = np.concatenate(parts, axis=1)
    begin, end = op.transposed_pads(kernel_shape, in_dims)
    # a negative end crop (same_* with a short full output) appends zeros
    out = pad_spatial(out, (0,) * len(end), tuple(max(-e, 0) for e in end))
    out = out[(slice(None), slice(None)) + tuple(slice(bg, f - e) for bg, e, f in zip(begin, end, full))]
    if b is not None:
        out = out + b.reshape((1, -1) + (1,) * len(full))
    return out


def lowest(dtype: np.dtype) -> float | int:
    """A value no element of `dtype` is below: what max pooling pads with."""
    return -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def pooling_windows(op: Pooling, x: np.ndarray, pad_value: float, overhang_value: float) -> np.ndarray:
    """[N, C, *out, *kernel] windows of `x` padded with `pad_value` (explicit or auto pads)
    and, beyond those, with `overhang_value` where ceil rounding lets the last window reach."""
    kernel_shape, in_dims = op.ints("kernel"), x.shape[2:]
    strides, dilations = op.window("strides", 1), op.window("dilations", 1)
    out_dims = op.output_spatial(kernel_shape, op.ceil_mode(), in_dims)
    begin, end = op.explicit_pads(kernel_shape, in_dims)
    overhang = tuple(
        max((o - 1) * s + d * (k - 1) + 1 - (size + bg + e), 0)
        for o, s, d, k, size, bg, e in zip(out_dims, strides, dilations, kernel_shape, in_dims, begin, end)
    )
    padded = pad_spatial(x, begin, end, pad_value)
    padded = pad_spatial(padded, (0,) * len(overhang), overhang, overhang_value)
    view = windows(padded, kernel_shape, strides, dilations)
    return view[(slice(None), slice(None)) + tuple(slice(0, o) for o in out_dims)]


@kernel(Pooling)
def pooling(op: Pooling, x: np.ndarray) -> np.ndarray:
    is_max = op.str_prop("method") == "max"
    if op.bool_prop("global_pool"):
        spatial = tuple(range(2, x.ndim))
        return np.max(x, axis=spatial, keepdims=True) if is_max else np.mean(x, axis=spatial, keepdims=True)
    kernel_axes = tuple(range(-len(op.ints("kernel")), 0))
    if is_max:
        return pooling_windows(op, x, lowest(x.dtype), lowest(x.dtype)).max(axis=kernel_axes)
    # the divisor counts the real elements, and the padding too unless exclude_pad
    ones = np.ones((1, 1, *x.shape[2:]))
    count = pooling_windows(op, ones, 0 if op.bool_prop("exclude_pad") else 1, 0).sum(axis=kernel_axes)
    return pooling_windows(op, x, 0, 0).sum(axis=kernel_axes) / count
