"""Keras' LayerNormalization (TensorFlow graphs) back to one `nn.mvn`, then gamma and beta.

Keras does not compute `(x - mean) * rsqrt(var + eps)`: it folds gamma into the inverse
standard deviation and applies the mean as a shift,

    mean = Mean(x, axes, keep_dims)         var = Mean(SquaredDifference(x, mean), axes, keep_dims)
    inv  = Rsqrt(var + eps) [* gamma]
    y    = x * inv + (-mean * inv [+ beta])          (Keras 3)
    y    = x * inv + (beta - mean * inv)             (tf.nn.batch_normalization, Keras 2)

which is `mvn(x) [* gamma] [+ beta]` exactly (algebraically; rounding differs by an ulp).
The rsqrt may also be `(v + eps) ^ -0.5` or `reciprocal(sqrt(v + eps))`.

    %m = nn.reduce %x {operation = "mean", axes = array<i64: 2>, keep_dims = true}
    %d = nn.eltwise %x, %m {operation = "squared_diff"}
    %v = nn.reduce %d {operation = "mean", axes = array<i64: 2>, keep_dims = true}
    %r = nn.power (%v + %eps) {power = -0.5}
    %i = nn.eltwise %r, %gamma {operation = "mul"}
    %n = nn.activation %m {kind = "neg"}
    %y = nn.eltwise (%x * %i), ((%n * %i) + %beta) {operation = "sum", name = "ln"}
becomes
    %0 = nn.mvn %x {axes = array<i64: 2>, eps = eps, eps_mode = "inside_sqrt"}
    %1 = nn.eltwise %0, %gamma {operation = "mul"}
    %y = nn.eltwise %1, %beta {operation = "sum", name = "ln"}
"""

from __future__ import annotations

from xdsl.ir import Operation

from irforge.dialects.nn.base import build
from irforge.dialects.nn.elementwise import Eltwise
from irforge.dialects.nn.normalization import MVN
from irforge.dialects.nn.reduce import Reduce
from irforge.passes.patterns.dag import Any, Const, Match, OneOf, P, Pattern, Same
from irforge.passes.patterns.subgraphs.activations import eltwise
from irforge.passes.patterns.subgraphs.base import DagReplacement
from irforge.passes.patterns.subgraphs.normalization import mean

VARIANCE = mean(
    OneOf(
        eltwise("squared_diff", Same("x"), mean(Same("x"), "mean")),
        eltwise("mul", eltwise("sub", Same("x"), mean(Same("x"), "mean"), alias="d"), Same("d")),
    ),
    "var",
)
SHIFTED = eltwise("sum", VARIANCE, Const(alias="eps"))


def inverse_std(alias: str | None) -> OneOf:
    """rsqrt(var + eps) in the forms importers give it."""
    return OneOf(
        P("power", power=-0.5, operands=[SHIFTED], alias=alias),
        eltwise("pow", SHIFTED, Const(-0.5), alias=alias),
        P("activation", kind="reciprocal", operands=[P("activation", kind="sqrt", operands=[SHIFTED])], alias=alias),
    )


def normalised(inv: Pattern) -> P:
    """x * inv + shift, the shift -mean * inv [+ beta] or beta - mean * inv."""
    minus_mean = eltwise("mul", P("activation", kind="neg", operands=[Same("mean")]), Same("inv"))
    shift = OneOf(
        eltwise("sum", minus_mean, Const(alias="beta")),
        minus_mean,
        eltwise("sub", Const(alias="beta"), eltwise("mul", Same("mean"), Same("inv"))),
    )
    return eltwise("sum", eltwise("mul", Any("x"), inv), shift)


class KerasLayerNormalization(DagReplacement):
    pattern = OneOf(normalised(eltwise("mul", inverse_std(None), Const(alias="gamma"), alias="inv")), normalised(inverse_std("inv")))

    def accept(self, m: Match) -> bool:
        mean_op, var_op = m.op("mean"), m.op("var")
        assert isinstance(mean_op, Reduce) and isinstance(var_op, Reduce)
        eps = m.constants["eps"]
        return mean_op.reduced_axes() == var_op.reduced_axes() and eps.size == 1 and float(eps.reshape(())) >= 0

    def build(self, m: Match, name: str) -> list[Operation]:
        mean_op = m.op("mean")
        assert isinstance(mean_op, Reduce)
        eps = float(m.constants["eps"].reshape(()))
        steps = [alias for alias in ("gamma", "beta") if alias in m.constants]
        names = [f"{name}/mvn", *(f"{name}/{alias}" for alias in steps)][:-1] + [name]
        ops = [build(MVN, [m["x"]], axes=list(mean_op.reduced_axes()), eps=eps, eps_mode="inside_sqrt", normalize_variance=True, name=names[0])]
        for alias, label in zip(steps, names[1:]):
            ops.append(build(Eltwise, [ops[-1].results[0], m[alias]], operation="mul" if alias == "gamma" else "sum", name=label))
        return ops
