"""What the native backends (CPU, OpenCL) share at run time: checking the caller's inputs,
and viewing native buffers as arrays.

`input_array` turns one feed into the contiguous array of the dtype and shape a compiled
model was specialised to, or raises the one-line user error naming the input.
"""

from __future__ import annotations

import ctypes
from collections.abc import Mapping

import numpy as np

from irforge.errors import IrforgeError


def view_at(address: int, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The native buffer at `address` as an array of `shape` and `dtype` (no copy)."""
    count = int(np.prod(shape, dtype=np.int64))
    raw = (ctypes.c_char * max(count * dtype.itemsize, 1)).from_address(address)
    return np.frombuffer(raw, dtype, count).reshape(shape)


def input_array(name: str, feeds: Mapping[str, np.ndarray], shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """feeds[name] as a C-contiguous array of `dtype`; missing or misshapen inputs raise."""
    if name not in feeds:
        raise IrforgeError(f"missing model input '{name}'", fix="pass every model input by name", code="E840")
    array = np.asarray(feeds[name])
    if array.shape != shape:
        raise IrforgeError(
            f"input '{name}' has shape {list(array.shape)} but the model expects {list(shape)}",
            fix="pass an array of the model's input shape",
            code="E840",
        )
    return np.ascontiguousarray(array, dtype=dtype)
