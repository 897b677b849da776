"""Decomposed mean-variance normalisation back to one `nn.mvn`.

    d = x - mean(x, axes)                         (ReduceMean keep_dims, Sub)
    v = mean(d * d, axes)                         (or d ^ 2, also with d computed again,
                                                   or squared_diff(x, mean))
    y = d / sqrt(v + eps)                         (or (v + eps) ^ 0.5; or d * reciprocal(...),
                                                   or d * (v + eps) ^ -0.5)   -> eps_mode inside_sqrt
    y = d / (sqrt(v) + eps)                                                   -> eps_mode outside_sqrt

The two reductions must be over the same axes, eps a scalar. The exporters' decomposed
LayerNorm is this over the last axis followed by Mul gamma and Add beta: it becomes
nn.mvn -> mul -> add, the form the ONNX LayerNormalization importer gives (and fuse-linear-ops
then merges the two steps into a ScaleShift).

    %m = nn.reduce %x {operation = "mean", axes = array<i64: -1>}
    %d = nn.eltwise %x, %m {operation = "sub"}
    %s = nn.eltwise %d, %two {operation = "pow"}
    %v = nn.reduce %s {operation = "mean", axes = array<i64: -1>}
    %a = nn.eltwise %v, %eps {operation = "sum"}
    %r = nn.activation %a {kind = "sqrt"}
    %y = nn.eltwise %d, %r {operation = "div", name = "ln"}
becomes
    %y = nn.mvn %x {axes = array<i64: 2>, eps = 1.0e-05 : f32, name = "ln"}
"""

from __future__ import annotations

from xdsl.ir import Operation

from irforge.dialects.nn.base import build
from irforge.dialects.nn.normalization import MVN
from irforge.dialects.nn.reduce import Reduce
from irforge.passes.patterns.dag import Any, Const, Match, OneOf, P, Pattern, Same
from irforge.passes.patterns.subgraphs.activations import eltwise
from irforge.passes.patterns.subgraphs.base import DagReplacement


def mean(inner: Pattern, alias: str) -> P:
    return P("reduce", operation="mean", keep_dims=True, operands=[inner], alias=alias)


def root(inner: Pattern) -> OneOf:
    """sqrt(inner), or inner ^ 0.5."""
    return OneOf(P("activation", kind="sqrt", operands=[inner]), eltwise("pow", inner, Const(0.5)))


CENTRED = eltwise("sub", Any("x"), mean(Same("x"), "mean"), alias="d")
RECENTRED = OneOf(Same("d"), eltwise("sub", Same("x"), Same("mean")))
"""x - mean once more: exporters without common-subexpression elimination compute it twice."""
VARIANCE = mean(
    OneOf(
        eltwise("mul", Same("d"), Same("d")),
        eltwise("pow", RECENTRED, Const(2.0)),
        eltwise("squared_diff", Same("x"), Same("mean")),
    ),
    "var",
)
STD_INSIDE = root(eltwise("sum", VARIANCE, Const(alias="eps")))
STD_OUTSIDE = eltwise("sum", root(VARIANCE), Const(alias="eps_outside"))
STD = OneOf(STD_INSIDE, STD_OUTSIDE)


class MeanVarianceNormalization(DagReplacement):
    pattern = OneOf(
        eltwise("div", CENTRED, STD),
        eltwise("mul", CENTRED, P("activation", kind="reciprocal", operands=[STD])),
        eltwise("mul", CENTRED, eltwise("pow", eltwise("sum", VARIANCE, Const(alias="eps")), Const(-0.5))),
    )

    def accept(self, m: Match) -> bool:
        mean_op, var_op = m.op("mean"), m.op("var")
        assert isinstance(mean_op, Reduce) and isinstance(var_op, Reduce)
        (eps,) = m.constants.values()
        return mean_op.reduced_axes() == var_op.reduced_axes() and eps.size == 1 and float(eps.reshape(())) >= 0

    def build(self, m: Match, name: str) -> list[Operation]:
        mean_op = m.op("mean")
        assert isinstance(mean_op, Reduce)
        mode = "outside_sqrt" if "eps_outside" in m.constants else "inside_sqrt"
        (eps,) = m.constants.values()
        return [
            build(
                MVN,
                [m["x"]],
                axes=list(mean_op.reduced_axes()),
                eps=float(eps.reshape(())),
                eps_mode=mode,
                normalize_variance=True,
                name=name,
            )
        ]
