"""Reference kernel of nn.unique (ONNX Unique, OpenVINO Unique-10): numpy's unique, put in
the order of first occurrence when not sorted."""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.unique import Unique


@kernel(Unique)
def unique(op: Unique, x: np.ndarray) -> list[np.ndarray]:
    axis = op.unique_axis()
    data = x.reshape(-1) if axis is None else x
    # numpy sorts the slices lexicographically (as ONNX's sorted=1) and gives the first
    # occurrence of each (return_index is the lowest position)
    values, first, inverse, counts = np.unique(data, return_index=True, return_inverse=True, return_counts=True,
                                               axis=0 if axis is None else axis)
    inverse = inverse.reshape(-1)
    if not op.bool_prop("sorted"):
        order = np.argsort(first, kind="stable")  # by first occurrence
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values = np.take(values, order, axis=0 if axis is None else axis)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    return [values.astype(x.dtype), first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)]
