"""Element-wise affine steps: recognising and building `x * scale` and `x + shift`.

A *linear step* is an `nn.eltwise` with one constant operand that does not change the
shape of the other: mul and sum (either operand order), and sub / div by a constant (which
the linear-op fusion rewrites as sum / mul). Constants are broadcast against `x` as numpy
does; `channel_vector` extracts the per-channel values when they vary along one axis only.

    %s = nn.constant dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>
    %y = nn.eltwise %x, %s {operation = "mul"} : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> ...
is the step (x, scale = [[[2]], [[3]]]), with channel_vector(scale, (1, 2, 4, 4), 1) == [2, 3].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects.builtin import AnyFloat, TensorType
from xdsl.ir import Operation, SSAValue

from irforge.backends.reference import constant_value
from irforge.builder import constant_op
from irforge.dialects.nn.base import DYN, Shape, build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Eltwise
from irforge.model import store_of
from irforge.weights import WeightStore
from irforge.weights.dtypes import from_xdsl

MUL, ADD = "mul", "sum"
STEP_OPERATIONS = frozenset({"mul", "sum", "sub", "div"})


@dataclass(frozen=True)
class LinearStep:
    """y = x * value (operation 'mul') or y = x + value (operation 'sum')."""

    op: Eltwise
    input: SSAValue
    operation: str
    value: np.ndarray

    @property
    def is_mul(self) -> bool:
        return self.operation == MUL


def constant_array(value: SSAValue, store: WeightStore) -> np.ndarray | None:
    """The array a value holds if it is the result of an `nn.constant`."""
    owner = value.owner
    return constant_value(owner, store) if isinstance(owner, Constant) else None


def float_tensor(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and isinstance(t.element_type, AnyFloat)


def shape_of(value: SSAValue) -> Shape:
    t = value.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def dtype_of(value: SSAValue) -> np.dtype:
    t = value.type
    assert isinstance(t, TensorType)
    return from_xdsl(t.element_type)


def linear_step(op: Operation) -> LinearStep | None:
    """The step an eltwise op stands for, or None (sub/div normalised to sum/mul)."""
    if not isinstance(op, Eltwise) or op.str_prop("operation") not in STEP_OPERATIONS:
        return None
    if not float_tensor(op.output):
        return None
    store = store_of(op)
    lhs, rhs = (constant_array(v, store) for v in op.operands)
    operation = op.str_prop("operation")
    if (lhs is None) == (rhs is None):
        return None  # two variables, or two constants (canonicalize folds those)
    if lhs is not None and operation in ("sub", "div"):
        return None  # c - x and c / x are not steps of x
    x, value = (op.rhs, lhs) if lhs is not None else (op.lhs, rhs)
    if x.type != op.output.type or value.ndim > len(shape_of(x)):
        return None  # the constant broadcasts x to a larger shape
    assert value is not None
    if operation == "sub":
        return LinearStep(op, x, ADD, -value.astype(np.float64))
    if operation == "div":
        if not np.all(value != 0):
            return None
        return LinearStep(op, x, MUL, 1.0 / value.astype(np.float64))
    return LinearStep(op, x, operation, value)


def channel_vector(value: np.ndarray, shape: Shape, axis: int) -> np.ndarray | None:
    """The values of `value` (broadcast to `shape`) along `axis` if they vary along no other
    axis, as a vector of shape[axis] elements; None otherwise or if that size is unknown."""
    rank = len(shape)
    if rank == 0:  # a scalar has no channel axis
        return None
    axis %= rank
    padded = value.reshape((1,) * (rank - value.ndim) + value.shape)
    if any(d != 1 for i, d in enumerate(padded.shape) if i != axis):
        return None
    size = shape[axis]
    if size == DYN:
        return None
    vector = padded.reshape(-1)
    if vector.size not in (1, size):
        return None
    return np.broadcast_to(vector, (size,))


def broadcast_shape_for(vector: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A per-channel vector reshaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis % rank] = vector.size
    return vector.reshape(shape)


def add_constant(array: np.ndarray, dtype: np.dtype, anchor: Operation, hint: str) -> Constant:
    """A new constant (inline or a new weight-store entry) holding `array` as `dtype`."""
    return constant_op(np.asarray(array, dtype=dtype), store_of(anchor), hint)


def layer_name(op: Operation, fallback: str) -> str:
    name = getattr(op, "layer_name", None)
    return name.data if name is not None else fallback


def make_step(
    x: SSAValue, operation: str, value: np.ndarray, anchor: Operation, name: str
) -> tuple[Constant, Eltwise]:
    """The constant and the eltwise op computing `x * value` or `x + value`."""
    const = add_constant(value, dtype_of(x), anchor, f"{name}/{'scale' if operation == MUL else 'shift'}")
    return const, build(Eltwise, [x, const.output], operation=operation, name=name)
