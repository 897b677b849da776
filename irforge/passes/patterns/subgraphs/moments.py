"""TensorFlow's instance normalisation idiom back to one `nn.mvn` (the guide's MVN example).

TensorFlow computes the moments with ops and feeds them to an inference FusedBatchNorm:

    mean = Mean(x, spatial axes, keep_dims)             (StopGradient on it: an identity)
    var  = Mean(SquaredDifference(x, mean), same axes)
    y    = FusedBatchNorm(x, gamma, beta, Squeeze(mean), Squeeze(var), epsilon)

which is MVN over the spatial axes followed by a per-channel scale and shift. The importer
gives the batch norm its input in NCHW while the moments read the NHWC x, so the match
allows a transpose between the two (either way round).

    %m = nn.reduce %x {operation = "mean", axes = array<i64: 1, 2>}
    %d = nn.eltwise %x, %m {operation = "squared_diff"}
    %v = nn.reduce %d {operation = "mean", axes = array<i64: 1, 2>}
    %t = nn.permute %x {order = array<i64: 0, 3, 1, 2>}
    %y = nn.batch_norm %t, %gamma, %beta, squeeze(%m), squeeze(%v) {epsilon = 1e-3}
becomes
    %n = nn.mvn %t {axes = array<i64: 2, 3>, eps = 1e-3}
    %y = nn.scale_shift %n, %gamma, %beta
"""

from __future__ import annotations

from xdsl.ir import Operation

from irforge.dialects.nn.base import build
from irforge.dialects.nn.linear import BatchNormalization, ScaleShift
from irforge.dialects.nn.normalization import MVN
from irforge.dialects.nn.reduce import Reduce
from irforge.dialects.nn.shape import Permute
from irforge.passes.patterns.dag import Any, Const, Match, OneOf, P, Same
from irforge.passes.patterns.subgraphs.activations import eltwise
from irforge.passes.patterns.subgraphs.base import DagReplacement

MEAN = P("reduce", operation="mean", operands=[Any("x")], alias="mean")
VARIANCE = P("reduce", operation="mean", operands=[eltwise("squared_diff", Same("x"), Same("mean"))], alias="var")


def squeezed(inner: P) -> OneOf:
    return OneOf(P("squeeze", operands=[inner]), P("reshape", operands=[inner]), inner)


class BatchNormOfMoments(DagReplacement):
    pattern = P(
        "batch_norm",
        operands=[Any("input"), Const(alias="gamma"), Const(alias="beta"), squeezed(MEAN), squeezed(VARIANCE)],
    )

    def accept(self, m: Match) -> bool:
        """The moments are over the spatial axes of the batch norm's input, of one image."""
        x, bn_input = m["x"], m["input"]
        rank = len(bn_input.type.get_shape())  # type: ignore[attr-defined]
        if bn_input is x:
            spatial = tuple(range(2, rank))
        elif isinstance(bn_input.owner, Permute) and bn_input.owner.operands[0] is x:
            # input dim k is x's dim order[k]: the input's spatial dims are x's order[2:]
            spatial = tuple(sorted(bn_input.owner.ints("order")[2:]))
        elif isinstance(x.owner, Permute) and x.owner.operands[0] is bn_input:
            # x's dim k is the input's dim order[k]: x's spatial dims are those with order[k] >= 2
            spatial = tuple(k for k, a in enumerate(x.owner.ints("order")) if a >= 2)
        else:
            return False
        mean_op, var_op = m.op("mean"), m.op("var")
        assert isinstance(mean_op, Reduce) and isinstance(var_op, Reduce)
        batch = bn_input.type.get_shape()[0]  # type: ignore[attr-defined]
        return batch == 1 and mean_op.reduced_axes() == spatial == var_op.reduced_axes()

    def build(self, m: Match, name: str) -> list[Operation]:
        bn = m.root
        assert isinstance(bn, BatchNormalization)
        rank = len(m["input"].type.get_shape())  # type: ignore[attr-defined]
        mvn = build(
            MVN, [m["input"]], axes=list(range(2, rank)), eps=bn.float_prop("epsilon"),
            eps_mode="inside_sqrt", normalize_variance=True, name=f"{name}/mvn",
        )
        return [mvn, build(ScaleShift, [mvn.results[0], m["gamma"], m["beta"]], name=name)]
