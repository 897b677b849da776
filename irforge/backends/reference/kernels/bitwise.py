"""Reference kernel of nn.bitwise (numpy's bit operations on the operands' integer type)."""

from __future__ import annotations

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.bitwise import Bitwise

BINARY = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "left_shift": np.left_shift, "right_shift": np.right_shift}


@kernel(Bitwise)
def bitwise(op: Bitwise, lhs: np.ndarray, rhs: np.ndarray | None = None) -> np.ndarray:
    operation = op.str_prop("operation")
    if operation == "not":
        return np.invert(lhs)
    assert rhs is not None
    return BINARY[operation](lhs, rhs).astype(lhs.dtype)
