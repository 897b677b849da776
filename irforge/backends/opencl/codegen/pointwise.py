"""Pointwise kernels: one work-item per output element, operands read with numpy
broadcasting, and the expression tables of the activations and binary operations.

The expressions follow the reference kernels (`backends/reference/kernels`), NaN included:
comparisons are written so that a NaN operand propagates where numpy's does.
"""

from __future__ import annotations

from collections.abc import Sequence

from irforge.backends.opencl.codegen.common import Param, broadcast_offset, numel, unravel

UNARY: dict[str, str] = {
    "sigmoid": "1.0f / (1.0f + exp(-x))",
    "tanh": "tanh(x)",
    "elu": "(x > 0.0f ? x : A * expm1(x))",
    "selu": "B * (x > 0.0f ? x : A * expm1(x))",
    "exp": "exp(x)",
    "log": "log(x)",
    "abs": "fabs(x)",
    "sqrt": "sqrt(x)",
    "erf": "erf(x)",
    "gelu": "0.5f * x * (1.0f + erf(x * 0.70710678118654752f))",
    "gelu_tanh": "0.5f * x * (1.0f + tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)))",
    "swish": "x / (1.0f + exp(-A * x))",
    "hswish": "x * clamp(x + 3.0f, 0.0f, 6.0f) / 6.0f",
    "hsigmoid": "clamp(A * x + B, 0.0f, 1.0f)",
    "softplus": "(fmax(x, 0.0f) + log1p(exp(-fabs(x))))",
    "softsign": "x / (1.0f + fabs(x))",
    "mish": "x * tanh(fmax(x, 0.0f) + log1p(exp(-fabs(x))))",
    "relu6": "(x < 0.0f ? 0.0f : (x > 6.0f ? 6.0f : x))",
    "neg": "-x",
    "reciprocal": "1.0f / x",
    "floor": "floor(x)",
    "ceil": "ceil(x)",
    "round": "rint(x)",
    "sign": "(isnan(x) ? x : sign(x))",
    "sin": "sin(x)",
    "cos": "cos(x)",
    "asin": "asin(x)",
    "acos": "acos(x)",
    "atan": "atan(x)",
    "asinh": "asinh(x)",
    "acosh": "acosh(x)",
    "atanh": "atanh(x)",
}
"""Activation kind -> f32 expression of x with the op's alpha (A) and beta (B)."""

_NAN_MAX = "(isnan(a) || isnan(b) ? a + b : fmax(a, b))"
_NAN_MIN = "(isnan(a) || isnan(b) ? a + b : fmin(a, b))"

BINARY_FLOAT: dict[str, str] = {
    "sum": "a + b",
    "sub": "a - b",
    "mul": "a * b",
    "div": "a / b",
    "max": _NAN_MAX,
    "min": _NAN_MIN,
    "pow": "pow(a, b)",
    "squared_diff": "(a - b) * (a - b)",
    "mod": "fmod(a, b)",
    # numpy's mod takes the sign of the divisor
    "floor_mod": "(fmod(a, b) != 0.0f && ((fmod(a, b) < 0.0f) != (b < 0.0f)) ? fmod(a, b) + b : fmod(a, b))",
}
"""Eltwise operation -> f32 expression of a and b, f32 result."""

COMPARE: dict[str, str] = {
    "equal": "a == b",
    "not_equal": "a != b",
    "less": "a < b",
    "less_equal": "a <= b",
    "greater": "a > b",
    "greater_equal": "a >= b",
}
"""Eltwise comparison -> expression of two f32 operands, bool (uchar) result."""

LOGICAL: dict[str, str] = {"and": "a && b", "or": "a || b", "xor": "(a != 0) != (b != 0)"}
"""Eltwise logical operation on bools (uchar)."""


def pointwise_body(out_shape: Sequence[int], operands: Sequence[Sequence[int]], loads: Sequence[str], store: str) -> str:
    """Kernel body: bounds check, coordinates, one load per operand (`loads[i]` is the
    statement template reading operand i at `{off}`), then `store`."""
    lines = ["  const int gid = get_global_id(0);", f"  if (gid >= {numel(out_shape)}) return;"]
    if any(tuple(s) != tuple(out_shape) for s in operands):
        lines.append(unravel("gid", out_shape))
    for shape, load in zip(operands, loads):
        lines.append("  " + load.format(off=broadcast_offset(shape, out_shape)))
    lines.append("  " + store)
    return "\n".join(lines)


def pointwise_params(types: Sequence[str], out_type: str) -> list[Param]:
    return [Param(f"p{i}", t) for i, t in enumerate(types)] + [Param("y", out_type, written=True)]
