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


SHAPE_MISMATCH = ("could not be broadcast", "could not broadcast", "not aligned", "mismatch in its core dimension",
                  "cannot reshape array", "must match exactly")
"""numpy's words for arrays whose shapes do not fit an operation."""


def has_run_time_sizes(op: Operation) -> bool:
    """Whether a size of one of `op`'s operands or results is known only at run time: then
    arrays that do not fit each other are the inputs' fault (sizes the model's inputs set
    that disagree, as onnxruntime reports at run time), not a bug of a kernel."""
    from xdsl.dialects.builtin import TensorType

    return any(isinstance(v.type, TensorType) and any(d < 0 for d in v.type.get_shape()) for v in (*op.operands, *op.results))


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
    try:
        out: Any = fn(op, *inputs)
    except ValueError as error:
        if not (any(text in str(error) for text in SHAPE_MISMATCH) and has_run_time_sizes(op)):
            raise
        shapes = ", ".join(str(list(np.shape(x))) for x in inputs)
        raise IrforgeError(f"operands of run-time shapes {shapes} do not fit each other", where=getattr(op, "label", None),
                           fix="give inputs whose sizes agree as the model needs", code="E122") from None
    outs = out if isinstance(out, list) else [out]
    results = []
    for value, result in zip(outs, op.results, strict=True):
        dtype = from_xdsl(result.type.element_type)  # type: ignore[attr-defined]
        results.append(np.asarray(value).astype(dtype, copy=False))
    return results
