"""Attention with the heads folded into the batch around a 4-D masked softmax, back to one
`nn.scaled_dot_product_attention` (HF BLOOM: alibi added by `baddbmm` on [B*H, L, S]
scores, which are viewed as [B, H, L, S] for the causal/padding mask and the softmax, and
viewed back to [B*H, L, S] for the product with v; HF DeBERTa-v2: k / scale, the
disentangled c2p and p2c terms, computed from q, k and the relative embeddings, added to
the scores, the mask applied with Where):

    s  = q @ k' (q, k, v: [B*H, L|S, E]), k' = permute(k) | permute(k) * c | permute(k) / c,
         then  s | s * c | s / c
    b  = s | s + bias | (s + bias) + bias2 (biases broadcast to [B*H, L, S]: BLOOM's alibi,
                                           DeBERTa's c2p and p2c disentangled terms)
    r  = reshape(b, [B, H, L, S])
    m  = r | r + mask | Where(keep, r, fill) | Where(drop, fill, r)   (fill at or below -1e4)
    p  = reshape(softmax(m, last axis), [B*H, L, S])
    y  = p @ v                 (or softmax(m) @ v with v [B, H, S, Ev]: the view folded)

becomes q, k and v reshaped to [B, H, L|S, E] (free: the same row-major elements), one
attention with the additive mask reshape(bias, [B, H, L', S']) + mask (a bias's leading
dim is B*H or 1, so its reshape is exact; a Where mask is Where(keep, 0, fill): s + fill
rounds to fill for any |s| < 1e31) and the result reshaped back to [B*H, L, Ev]:
y[b*H + h] = softmax(s[b*H + h] + bias + mask[b, h]) @ v[b*H + h], as the graph computes.
The 3-D forms without the reshapes are `attention.py`'s and `attention_exports.py`'s.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import Operation, SSAValue

from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.base import build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Eltwise, Select
from irforge.dialects.nn.normalization import SoftMax
from irforge.dialects.nn.shape import Permute, Reshape
from irforge.passes.patterns.dag import Any, Const, Match, OneOf, P
from irforge.passes.patterns.subgraphs.activations import eltwise
from irforge.passes.patterns.subgraphs.attention import rank
from irforge.passes.patterns.subgraphs.attention_exports import FILL_AT_MOST, one_value
from irforge.passes.patterns.subgraphs.base import DagReplacement

KT = P("permute", operands=[Any("k")], alias="kt")
KEY = OneOf(eltwise("mul", KT, Const(alias="k_factor")), eltwise("div", KT, Const(alias="k_divisor")), KT)  # DeBERTa: k^T / scale
PRODUCT = P("matmul", operands=[Any("q"), KEY], alias="scores", transpose_a=False, transpose_b=False)
SCALED = OneOf(eltwise("mul", PRODUCT, Const(alias="factor")), eltwise("div", PRODUCT, Const(alias="divisor")), PRODUCT)
BIASED = OneOf(eltwise("sum", eltwise("sum", SCALED, Any("bias")), Any("bias2")), eltwise("sum", SCALED, Any("bias")), SCALED)
SPLIT = P("reshape", operands=[BIASED], alias="split")
MASKED = OneOf(
    eltwise("sum", SPLIT, Any("mask")),
    P("select", operands=[Any("keep"), SPLIT, Const(alias="fill")]),
    P("select", operands=[Any("drop"), Const(alias="fill"), SPLIT]),
    SPLIT,
)
PROBS = P("softmax", operands=[MASKED], alias="probs", log=False)
JOINED = OneOf(P("reshape", operands=[PROBS], alias="join"), PROBS)
"""The probabilities viewed back to [B*H, L, S]; or, once canonicalize has folded that view
into the product (the dynamo export), the [B, H, L, S] probabilities times v [B, H, S, E]."""


def dims(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape())  # type: ignore[attr-defined]


def out_dims(op: Operation) -> tuple[int, ...]:
    return dims(op.results[0])


class HeadsInBatchAttention(DagReplacement):
    pattern = P("matmul", operands=[JOINED, Any("v")], transpose_a=False, transpose_b=False)

    def scale(self, m: Match) -> float | None:
        """The product of the factors of the scores and of k^T; None if one is not a finite
        one-value constant."""
        total = 1.0
        for tag in ("", "k_"):
            for kind in ("factor", "divisor"):
                if f"{tag}{kind}" in m.constants:
                    value = one_value(m.constants[f"{tag}{kind}"])
                    if not value:
                        return None
                    total *= value if kind == "factor" else 1.0 / value
        return total

    def accept(self, m: Match) -> bool:
        scores, split = out_dims(m.op("scores")), out_dims(m.op("split"))
        join = out_dims(m.op("join")) if "join" in m.ops else scores
        probs = m.op("probs")
        assert isinstance(probs, SoftMax)
        values = [m["q"], m["k"], m["v"]]
        if len(split) != 4:
            return False  # not a head split (GroupViT's grouping views its scores to 2-D)
        if "join" not in m.ops:  # v already [B, H, S, Ev]
            v = dims(m["v"])
            if len(v) != 4 or v[:3] != (*split[:2], split[3]):
                return False
            values = values[:2]
        if self.scale(m) is None or any(rank(v) != 3 for v in values) or len(split) != 4:
            return False
        if any(d < 0 for d in (*scores, *split, *join, *(d for v in values for d in dims(v)))):
            return False
        kt = m.op("kt")
        assert isinstance(kt, Permute)
        if list(kt.ints("order")) != [0, 2, 1] or probs.softmax_axis() != 3:
            return False
        batch = scores[0]
        # the split only separates the heads from the batch, the join undoes it
        if split[0] * split[1] != batch or split[2:] != scores[1:] or join != scores:
            return False
        if dims(m["k"])[0] != batch or ("join" in m.ops and (dims(m["v"])[0] != batch or dims(m["v"])[1] != scores[2])):
            return False
        for name in ("bias", "bias2"):
            if name in m.values:
                bias = dims(m[name])
                if len(bias) != 3 or bias[0] not in (1, batch) or any(b not in (1, s) for b, s in zip(bias[1:], scores[1:])):
                    return False
        if "fill" in m.constants:
            fill = m.constants["fill"]
            condition = m["keep"] if "keep" in m.values else m["drop"]
            if fill.size != 1 or not float(fill.reshape(-1)[0]) <= FILL_AT_MOST or condition.type.element_type.bitwidth != 1:  # type: ignore[attr-defined]
                return False
        for name in ("mask", "keep", "drop"):
            if name not in m.values:
                continue
            mask = dims(m[name])
            if len(mask) > 4 or any(a not in (1, s) for a, s in zip(reversed(mask), reversed(split))):
                return False
        return True

    def build(self, m: Match, name: str) -> list[Operation]:
        b, h = out_dims(m.op("split"))[:2]
        ops: list[Operation] = []

        def heads(value: SSAValue, tag: str) -> SSAValue:
            rows = dims(value)
            lead = (b, h) if rows[0] != 1 else (1, 1)
            op = build(Reshape, [value], shape=[*lead, *rows[1:]], name=f"{name}/{tag}_heads")
            ops.append(op)
            return op.output

        joined = "join" in m.ops
        q, k = heads(m["q"], "query"), heads(m["k"], "key")
        v = heads(m["v"], "value") if joined else m["v"]
        masks = [heads(m[tag], tag) for tag in ("bias", "bias2") if tag in m.values]
        if "mask" in m.values:
            masks.append(m["mask"])
        if "fill" in m.constants:  # Where(keep, s, fill) is s + Where(keep, 0, fill) for a fill at or below -1e4
            fill = m.constants["fill"].reshape(())
            zero, low = Constant.inline(np.zeros((), fill.dtype)), Constant.inline(np.array(fill))
            chosen = [zero.output, low.output] if "keep" in m.values else [low.output, zero.output]
            where = build(Select, [m["keep"] if "keep" in m.values else m["drop"], *chosen], name=f"{name}/where")
            ops += [zero, low, where]
            masks.append(where.output)
        while len(masks) > 1:  # ((s + a) + b) + c == s + ((a + b) + c) up to rounding
            both = build(Eltwise, masks[:2], operation="sum", name=f"{name}/mask{len(masks) - 1}")
            ops.append(both)
            masks = [both.output, *masks[2:]]
        scale = self.scale(m)
        head = dims(m["q"])[-1]
        if scale is not None and math.isclose(scale, 1.0 / math.sqrt(head), rel_tol=1e-6):
            scale = None
        attention = build(ScaledDotProductAttention, [q, k, v, *masks], scale=scale, name=f"{name}/attention" if joined else name)
        if not joined:
            return [*ops, attention]
        back = build(Reshape, [attention.output], shape=list(out_dims(m.root)), name=name)
        return [*ops, attention, back]

