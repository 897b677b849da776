"""Decomposed scaled dot-product attention, as the exporters write it, back to one
`nn.scaled_dot_product_attention` (what OpenVINO's converter fuses into opset13's layer).

    scores = q @ k^T                   MatMul(q, Transpose(k)), or MatMul(q, k, transpose_b)
    scaled = scores * c                or scores / c, with c a one-value constant
    masked = scaled + mask             (optional) any float mask that broadcasts
    probs  = softmax(masked, last axis)
    y      = probs @ v

q, k and v must have rank >= 3 (the opset's [N, ..., rows, columns]). The key's transpose
is folded into the new op: the matched Transpose goes, or, when it has other users, a new
one restores k from its input. A scale equal to 1/sqrt(E) (E the query's last dim, within
f32 rounding) is the op's default and is left out, as ovc leaves it implicit too.

    %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>}
    %s = nn.matmul %q, %kt
    %c = nn.constant dense<0.125> : tensor<f32>
    %m = nn.eltwise %s, %c {operation = "mul"}
    %a = nn.eltwise %m, %mask {operation = "sum"}
    %p = nn.softmax %a {axis = -1}
    %y = nn.matmul %p, %v {name = "attn"}
becomes
    %y = nn.scaled_dot_product_attention %q, %k, %v, %mask {name = "attn"}
"""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue

from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.base import build
from irforge.dialects.nn.linear import MatMul
from irforge.dialects.nn.normalization import SoftMax
from irforge.dialects.nn.shape import Permute
from irforge.passes.patterns.dag import Any, Const, Match, OneOf, P
from irforge.passes.patterns.subgraphs.activations import eltwise
from irforge.passes.patterns.subgraphs.base import DagReplacement

KEY = OneOf(P("permute", operands=[Any("k_source")], alias="kt"), Any("b"))
"""The scores' right operand: a Transpose matched with them (erased with them), or any value."""
SCORES = P("matmul", operands=[Any("q"), KEY], alias="scores", transpose_a=False)
SCALED = OneOf(eltwise("mul", SCORES, Const(alias="factor")), eltwise("div", SCORES, Const(alias="divisor")))
PROBS = P("softmax", operands=[OneOf(eltwise("sum", SCALED, Any("mask")), SCALED)], alias="probs", log=False)


def rank(value: SSAValue) -> int:
    return len(value.type.get_shape())  # type: ignore[attr-defined]


def swapped(order: tuple[int, ...]) -> list[int]:
    """The order of permute(permute(x, order), swap of the last two axes)."""
    return [*order[:-2], order[-1], order[-2]]


class ScaledDotProductAttentionPattern(DagReplacement):
    pattern = P("matmul", operands=[PROBS, Any("v")], transpose_a=False, transpose_b=False)

    def accept(self, m: Match) -> bool:
        scores, probs = m.op("scores"), m.op("probs")
        assert isinstance(scores, MatMul) and isinstance(probs, SoftMax)
        transpose_b = scores.bool_prop("transpose_b")
        if "kt" in m.ops and transpose_b:
            return False  # k is the permute itself: taken by the alternative that keeps it
        if "b" in m.values and not transpose_b and not isinstance(m["b"].owner, Permute):
            return False  # a k^T computed otherwise is not the exporters' form
        (constant,) = (m.constants[a] for a in ("factor", "divisor") if a in m.constants)
        if constant.size != 1 or constant.dtype.kind != "f" or not math.isfinite(float(constant.reshape(-1)[0])):
            return False
        operands = (m["q"], scores.b, m["v"], *([m["mask"]] if "mask" in m.values else []))
        return probs.softmax_axis() == rank(probs.input) - 1 and all(rank(v) >= 3 for v in operands[:3])

    def key(self, m: Match, name: str) -> tuple[SSAValue, list[Operation]]:
        """k in [..., S, E] layout, and the Permute that makes it (if one is needed)."""
        scores = m.op("scores")
        assert isinstance(scores, MatMul)
        if scores.bool_prop("transpose_b"):
            return m["b"], []
        permute = scores.b.owner
        assert isinstance(permute, Permute)
        order = swapped(permute.ints("order"))
        if order == list(range(len(order))):
            return permute.input, []
        restored = build(Permute, [permute.input], order=order, name=f"{name}/key")
        return restored.output, [restored]

    def scale(self, m: Match) -> float | None:
        """The factor of the scores, None where it is the op's default 1/sqrt(E)."""
        if "factor" in m.constants:
            value = float(m.constants["factor"].reshape(-1)[0])
        else:
            value = 1.0 / float(m.constants["divisor"].reshape(-1)[0])
        head = m["q"].type.get_shape()[-1]  # type: ignore[attr-defined]
        default = 1.0 / math.sqrt(head) if head > 0 else math.nan
        return None if math.isclose(value, default, rel_tol=1e-6) else value

    def build(self, m: Match, name: str) -> list[Operation]:
        k, ops = self.key(m, name)
        operands = [m["q"], k, m["v"], *([m["mask"]] if "mask" in m.values else [])]
        return [*ops, build(ScaledDotProductAttention, operands, scale=self.scale(m), name=name)]
