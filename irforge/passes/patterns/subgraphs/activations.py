"""Decomposed activations as the exporters write them, back to one `nn.activation`.

- Gelu:    0.5 * x * (1 + erf(x / sqrt(2)))                       -> kind gelu
- Gelu:    0.5 * x * (1 - erf(-x / sqrt(2)))  (TensorFlow's erfc)   -> kind gelu
- Gelu:    0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))   -> kind gelu_tanh
- Swish:   x * sigmoid(x), x * sigmoid(beta * x)                   -> kind swish (alpha = beta)
- HSigmoid: relu6(x + 3) / 6, clamp(alpha * x + beta, 0, 1)        -> kind hsigmoid
- HSwish:  x * relu6(x + 3) / 6, x * hsigmoid(x)                   -> kind hswish

relu6 is `nn.clamp` 0..6 (ONNX Clip) or `nn.activation relu6`; a scaling by c is a mul by c or
a div by 1/c, in any of the places the exporters put it (PyTorch's Gelu is
Div(x, 1.414) -> Erf -> Add 1 -> Mul x -> Mul 0.5). Every constant is compared within a
relative tolerance of 1e-5, so a Gelu with 0.6 instead of 0.5 stays as it is.

    %d = nn.eltwise %x, %c1_414 {operation = "div"}
    %e = nn.activation %d {kind = "erf"}
    %a = nn.eltwise %e, %c1 {operation = "sum"}
    %m = nn.eltwise %x, %a {operation = "mul"}
    %y = nn.eltwise %m, %c0_5 {operation = "mul", name = "gelu"}
becomes
    %y = nn.activation %x {kind = "gelu", name = "gelu"}
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.ir import Operation

from irforge.dialects.nn.activation import Activation
from irforge.dialects.nn.base import build
from irforge.passes.patterns.dag import Any, Const, Match, OneOf, P, Pattern, Same
from irforge.passes.patterns.subgraphs.base import DagReplacement

X = Any("x")


def eltwise(operation: str, lhs: Pattern, rhs: Pattern, alias: str | None = None) -> P:
    return P("eltwise", operation=operation, operands=[lhs, rhs], alias=alias)


def scaled(inner: Pattern, factor: float) -> OneOf:
    """inner * factor, written as a mul by factor or a div by 1 / factor."""
    return OneOf(eltwise("mul", inner, Const(factor)), eltwise("div", inner, Const(1.0 / factor)))


def half_x_times(inner: Pattern) -> OneOf:
    """0.5 * x * inner, with the 0.5 in any of the places exporters put it."""
    return OneOf(
        scaled(eltwise("mul", X, inner), 0.5),
        eltwise("mul", X, scaled(inner, 0.5)),
        eltwise("mul", scaled(X, 0.5), inner),
    )


def relu6(inner: Pattern) -> OneOf:
    return OneOf(
        P("clamp", min=0.0, max=6.0, operands=[inner]),
        P("activation", kind="relu6", operands=[inner]),
    )


def near(value: float) -> Callable[[object], bool]:
    """A predicate for a float property: equal to `value` within 1e-6."""
    return lambda have: isinstance(have, float) and abs(have - value) <= 1e-6


def activation(m: Match, name: str, kind: str, **props: object) -> list[Operation]:
    return [build(Activation, [m["x"]], kind=kind, name=name, **props)]


class Gelu(DagReplacement):
    pattern = half_x_times(
        eltwise("sum", P("activation", kind="erf", operands=[scaled(Same("x"), 1 / math.sqrt(2))]), Const(1.0))
    )

    def build(self, m: Match, name: str) -> list[Operation]:
        return activation(m, name, "gelu")


NEG_X_OVER_SQRT2 = OneOf(
    scaled(P("activation", kind="neg", operands=[Same("x")]), 1 / math.sqrt(2)),
    P("activation", kind="neg", operands=[scaled(Same("x"), 1 / math.sqrt(2))]),
    scaled(Same("x"), -1 / math.sqrt(2)),
)


class GeluErfc(DagReplacement):
    """TensorFlow's exact GELU, 0.5 * x * erfc(-x / sqrt 2), with erfc imported as 1 - erf."""

    pattern = half_x_times(eltwise("sub", Const(1.0), P("activation", kind="erf", operands=[NEG_X_OVER_SQRT2])))

    def build(self, m: Match, name: str) -> list[Operation]:
        return activation(m, name, "gelu")


CUBE = OneOf(
    P("eltwise", operation="pow", operands=[Same("x"), Const(3.0)]),
    eltwise("mul", Same("x"), eltwise("mul", Same("x"), Same("x"))),
)


class GeluTanh(DagReplacement):
    pattern = half_x_times(
        eltwise(
            "sum",
            P(
                "activation",
                kind="tanh",
                operands=[scaled(eltwise("sum", Same("x"), scaled(CUBE, 0.044715)), math.sqrt(2 / math.pi))],
            ),
            Const(1.0),
        )
    )

    def build(self, m: Match, name: str) -> list[Operation]:
        return activation(m, name, "gelu_tanh")


class Swish(DagReplacement):
    pattern = OneOf(
        eltwise("mul", X, P("activation", kind="sigmoid", operands=[Same("x")])),
        eltwise("mul", X, P("activation", kind="sigmoid", operands=[eltwise("mul", Same("x"), Const(alias="beta"))])),
    )

    def accept(self, m: Match) -> bool:
        return "beta" not in m.constants or m.constants["beta"].size == 1

    def build(self, m: Match, name: str) -> list[Operation]:
        beta = float(m.constants["beta"].reshape(())) if "beta" in m.constants else 1.0
        return activation(m, name, "swish", alpha=beta)


RELU6_X_PLUS_3 = relu6(eltwise("sum", X, Const(3.0)))


class HSigmoid(DagReplacement):
    pattern = OneOf(
        scaled(RELU6_X_PLUS_3, 1 / 6),
        P(
            "clamp",
            min=0.0,
            max=1.0,
            operands=[eltwise("sum", eltwise("mul", X, Const(alias="alpha")), Const(alias="beta"))],
        ),
    )

    def accept(self, m: Match) -> bool:
        return all(c.size == 1 for c in m.constants.values())

    def build(self, m: Match, name: str) -> list[Operation]:
        if not m.constants:
            return activation(m, name, "hsigmoid", alpha=1 / 6, beta=0.5)
        alpha, beta = (float(m.constants[k].reshape(())) for k in ("alpha", "beta"))
        return activation(m, name, "hsigmoid", alpha=alpha, beta=beta)


class HSwish(DagReplacement):
    pattern = OneOf(
        scaled(eltwise("mul", X, RELU6_X_PLUS_3), 1 / 6),
        eltwise("mul", X, scaled(RELU6_X_PLUS_3, 1 / 6)),
        eltwise("mul", X, P("activation", kind="hsigmoid", alpha=near(1 / 6), beta=near(0.5), operands=[Same("x")])),
    )

    def build(self, m: Match, name: str) -> list[Operation]:
        return activation(m, name, "hswish")
