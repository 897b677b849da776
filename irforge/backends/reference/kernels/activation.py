"""Reference kernels of the activation ops."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from irforge.backends.reference.registry import kernel
from irforge.dialects.nn.activation import Activation, Clamp, PReLU, ReLU

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _erf_array(x: np.ndarray) -> np.ndarray:
    return _erf(x.astype(np.float64)).astype(x.dtype)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    # exp of a negative argument only, so large |x| neither overflows nor loses precision
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype)


def _softplus(x: np.ndarray) -> np.ndarray:
    return (np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))).astype(x.dtype)


_FUNCTIONS: dict[str, Callable[[np.ndarray, float, float], np.ndarray]] = {
    "sigmoid": lambda x, a, b: _sigmoid(x),
    "tanh": lambda x, a, b: np.tanh(x),
    "elu": lambda x, a, b: np.where(x > 0, x, a * np.expm1(x)),
    "selu": lambda x, a, b: b * np.where(x > 0, x, a * np.expm1(x)),
    "exp": lambda x, a, b: np.exp(x),
    "log": lambda x, a, b: np.log(x),
    "abs": lambda x, a, b: np.abs(x),
    "sqrt": lambda x, a, b: np.sqrt(x),
    "erf": lambda x, a, b: _erf_array(x),
    "gelu": lambda x, a, b: 0.5 * x * (1 + _erf_array(x / np.sqrt(2).astype(x.dtype))),
    "gelu_tanh": lambda x, a, b: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    "swish": lambda x, a, b: x * _sigmoid(a * x),
    "hswish": lambda x, a, b: x * np.clip(x + 3, 0, 6) / 6,
    "hsigmoid": lambda x, a, b: np.clip(a * x + b, 0, 1),
    "softplus": lambda x, a, b: _softplus(x),
    "softsign": lambda x, a, b: x / (1 + np.abs(x)),
    "mish": lambda x, a, b: x * np.tanh(_softplus(x)),
    "relu6": lambda x, a, b: np.clip(x, 0, 6),
    "neg": lambda x, a, b: -x,
    "reciprocal": lambda x, a, b: 1 / x,
    "floor": lambda x, a, b: np.floor(x),
    "ceil": lambda x, a, b: np.ceil(x),
    "round": lambda x, a, b: np.round(x),
    "sign": lambda x, a, b: np.sign(x),
    "sin": lambda x, a, b: np.sin(x),
    "cos": lambda x, a, b: np.cos(x),
    "asin": lambda x, a, b: np.arcsin(x),
    "acos": lambda x, a, b: np.arccos(x),
    "atan": lambda x, a, b: np.arctan(x),
    "asinh": lambda x, a, b: np.arcsinh(x),
    "acosh": lambda x, a, b: np.arccosh(x),
    "atanh": lambda x, a, b: np.arctanh(x),
    "not": lambda x, a, b: np.logical_not(x),
}


@kernel(Activation)
def activation(op: Activation, x: np.ndarray) -> np.ndarray:
    fn = _FUNCTIONS[op.str_prop("kind")]
    with np.errstate(all="ignore"):
        return fn(x, op.float_prop("alpha"), op.float_prop("beta"))


@kernel(ReLU)
def relu(op: ReLU, x: np.ndarray) -> np.ndarray:
    slope = op.float_prop("negative_slope")
    if not slope:  # -inf * 0 would be NaN: ReLU(-inf) is 0 (NaN stays NaN)
        return np.where(x < 0, np.zeros((), x.dtype), x)
    return np.where(x >= 0, x, x * np.asarray(slope, x.dtype))


@kernel(Clamp)
def clamp(op: Clamp, x: np.ndarray) -> np.ndarray:
    low, high = op.float_prop("min"), op.float_prop("max")
    if np.issubdtype(x.dtype, np.integer):
        # integer bounds, so that no value goes through float64 (exact for all of int64)
        info = np.iinfo(x.dtype)
        return np.clip(x, _int_bound(low, math.ceil, info), _int_bound(high, math.floor, info))
    # bounds beyond the element type's range become +-inf, which clamp nothing
    with np.errstate(over="ignore"):
        bounds = np.array([low, high]).astype(x.dtype)
    return np.clip(x, bounds[0], bounds[1])


def _int_bound(value: float, to_int: Callable[[float], int], info: np.iinfo) -> np.integer:
    """`value` rounded by `to_int` and limited to the range of `info`'s integer type."""
    limited = info.min if value <= info.min else info.max if value >= info.max else to_int(value)
    return info.dtype.type(limited)


@kernel(PReLU)
def prelu(op: PReLU, x: np.ndarray, slope: np.ndarray) -> np.ndarray:
    if slope.ndim == 1 and x.ndim >= 2:
        slope = slope.reshape((1, -1) + (1,) * (x.ndim - 2))
    return np.where(x >= 0, x, x * slope)
