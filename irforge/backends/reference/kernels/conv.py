"""Reference kernels of the convolution family."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.conv import Convolution


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
    begin, end = op.explicit_pads(kernel_shape)
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
