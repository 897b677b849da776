"""A guard for kernels whose output shape comes from a tensor computed at run time (Resize's
sizes, Expand's shape): a shape whose elements do not fit in this machine's memory is a
one-line E877 before numpy is asked for it (numpy raised "array is too big" or MemoryError,
or a merely huge shape ran for minutes building coordinates)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import numpy as np

from irforge.errors import IrforgeError


def memory_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def check_output_size(label: str, dims: Sequence[int], dtype: np.dtype, what: str = "output") -> None:
    needed = math.prod(int(d) for d in dims) * np.dtype(dtype).itemsize
    if needed > memory_bytes():
        raise IrforgeError(f"{label}: a run-time {what} of shape {[int(d) for d in dims]} needs {needed / 2**30:.3g} GiB, more than this machine's memory",
                           fix="check the shape the model computes", code="E877")


__all__ = ["check_output_size", "memory_bytes"]
