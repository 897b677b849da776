"""Reading ONNX inputs that must be constant integers or scalars (Slice's starts/ends/axes,
TopK's k, NonMaxSuppression's limits, CumSum's axis, Trilu's k): a value of another element
type or count is a one-line error (E041) instead of an IndexError on an empty tensor, an
OverflowError on inf, or a float silently truncated to an int."""

from __future__ import annotations

import numpy as np

from irforge.frontends.onnx.registry import NodeContext


def int_list(ctx: NodeContext, array: np.ndarray, what: str) -> list[int]:
    """The values of an integer tensor (ONNX declares these inputs int64, some int32)."""
    array = np.asarray(array)
    if array.dtype.kind not in "iu":
        raise ctx.fail(f"{what} must be an integer tensor, got {array.dtype}", fix=f"give {what} as int64")
    return [int(v) for v in array.reshape(-1)]


def one_int(ctx: NodeContext, array: np.ndarray, what: str) -> int:
    values = int_list(ctx, array, what)
    if len(values) != 1:
        raise ctx.fail(f"{what} must hold one value, got {len(values)}", fix=f"give {what} as a 1-element int64 tensor")
    return values[0]


def one_float(ctx: NodeContext, array: np.ndarray, what: str) -> float:
    array = np.asarray(array)
    if array.dtype.kind not in "iuf" or array.size != 1:
        raise ctx.fail(f"{what} must be one number, got {array.dtype} of shape {list(array.shape)}", fix=f"give {what} as a 1-element float tensor")
    return float(array.reshape(-1)[0])


__all__ = ["int_list", "one_float", "one_int"]
