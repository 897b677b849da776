"""The table from `nn` op class to its numpy reference kernel.

A kernel takes the op (for its properties) and the input arrays, and returns the output
array, or a list of arrays for multi-result ops.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.ir import Operation

from irforge.errors import IrforgeError

Kernel = Callable[..., "np.ndarray | list[np.ndarray]"]

KERNELS: dict[type[Operation], Kernel] = {}


def kernel(*op_classes: type[Operation]) -> Callable[[Kernel], Kernel]:
    """Register the decorated function as the reference kernel of `op_classes`."""

    def register(fn: Kernel) -> Kernel:
        for cls in op_classes:
            KERNELS[cls] = fn
        return fn

    return register


def evaluate(op: Operation, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run `op`'s reference kernel; results are cast to the op's declared element types."""
    from irforge.weights.dtypes import from_xdsl

    fn = KERNELS.get(type(op))
    if fn is None:
        raise IrforgeError(
            f"no reference implementation for '{op.name}'",
            fix="register one with @irforge.backends.reference.kernel(OpClass)",
            code="E859",
        )
    out: Any = fn(op, *inputs)
    outs = out if isinstance(out, list) else [out]
    results = []
    for value, result in zip(outs, op.results, strict=True):
        dtype = from_xdsl(result.type.element_type)  # type: ignore[attr-defined]
        results.append(np.asarray(value).astype(dtype, copy=False))
    return results
