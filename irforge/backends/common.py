"""What the native backends (CPU, OpenCL) share at run time: checking the caller's inputs.

`input_array` turns one feed into the contiguous array of the dtype and shape a compiled
model was specialised to, or raises the one-line user error naming the input.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from irforge.errors import IrforgeError


def input_array(name: str, feeds: Mapping[str, np.ndarray], shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """feeds[name] as a C-contiguous array of `dtype`; missing or misshapen inputs raise."""
    if name not in feeds:
        raise IrforgeError(f"missing model input '{name}'", fix="pass every model input by name")
    array = np.asarray(feeds[name])
    if array.shape != shape:
        raise IrforgeError(
            f"input '{name}' has shape {list(array.shape)} but the model expects {list(shape)}",
            fix="pass an array of the model's input shape",
        )
    return np.ascontiguousarray(array, dtype=dtype)
