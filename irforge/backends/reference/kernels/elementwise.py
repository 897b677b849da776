"""Reference kernels of the element-wise ops."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.elementwise import Convert, Eltwise, Identity, Select
from irforge.weights.dtypes import from_xdsl


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(a.dtype, np.integer):
        # integer division truncates toward zero, as in C, ONNX and OpenVINO
        return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)
    return a / b


def _power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if np.issubdtype(b.dtype, np.signedinteger) and (b < 0).any():
        # a negative integer power truncates toward zero (as in ONNX): only bases 1 and -1
        # keep a value, and (-1) ** |b| == (-1) ** b
        power = np.power(a, np.abs(b))
        return np.where((b >= 0) | (np.abs(a) == 1), power, 0)
    return np.power(a, b)


_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "sum": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": _divide,
    "max": np.maximum,
    "min": np.minimum,
    "pow": _power,
    "squared_diff": lambda a, b: np.square(a - b),
    "mod": np.fmod,
    "floor_mod": np.mod,
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
    "and": np.logical_and,
    "or": np.logical_or,
    "xor": np.logical_xor,
}


@kernel(Eltwise)
def eltwise(op: Eltwise, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return _BINARY[op.str_prop("operation")](a, b)


@kernel(Convert)
def convert(op: Convert, x: np.ndarray) -> np.ndarray:
    dtype = from_xdsl(op.destination_type)
    if np.issubdtype(dtype, np.integer) and np.issubdtype(x.dtype, np.floating):
        x = np.trunc(x)
    # a float too large for float16 becomes inf, as in IEEE arithmetic; NaN and values out of
    # an integer type's range have no defined result (in ONNX either)
    with np.errstate(all="ignore"):
        return x.astype(dtype)


@kernel(Select)
def select(op: Select, condition: np.ndarray, then: np.ndarray, otherwise: np.ndarray) -> np.ndarray:
    return np.where(condition, then, otherwise)


@kernel(Identity)
def identity(op: Identity, x: np.ndarray) -> np.ndarray:
    return x
