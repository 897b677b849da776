"""Attention as torch's exporters and Hugging Face transformers write it, back to one
`nn.scaled_dot_product_attention` (the forms `attention.py`'s pattern does not take).

torch.onnx's translation of `F.scaled_dot_product_attention` splits the scale between q and
k^T (each times sqrt(scale)), turns a boolean mask into `Where(mask, 0, -inf)` added to the
scores, and the dynamo exporter guards the softmax with `Where(IsNaN(p), 0, p)` for rows
masked out entirely; HF models add a relative position bias and a mask (Swin, T5), or
apply the mask with Where (GPT-2: `Where(causal, scores, finfo.min)`). Accepted:

    q' = q | q * c | q / c            k' = k^T | k^T * c | permute(k * c), where k^T is
                                      permute(k) or reshape(permute(reshape(k))) (dynamo;
                                      k may be [B, KV, G, S, E]: GQA's repeated keys),
                                      or reshape(permute(k)) of sequence-first rows [S, G, E],
                                      or k read by a MatMul with transpose_b (an Einsum)
    s  = q' @ k'   then  s | s * c | s / c
    m  = s | s + mask | (s + a) + b | ((s + a) + b) + c | Where(keep, s, fill) | Where(drop, fill, s)
         | s - c | (s + a) - c | ((s + a) + b) - c | (((s + a) + b) + c) - d   (Funnel)
         | Where(keep, s, fill) + mask | Where(drop, fill, s) + mask      (GPT-Neo)
    p  = softmax(m, last axis)        then  p | Where(IsNaN(p), 0, p)
    y  = p @ v

with c one-value constants (their product is the op's scale; a factor of the scores with
one value per head, shape [..., H, 1, 1] (Swin v2), multiplies q instead) and fill a constant at or
below -1e4 (-inf, float32's min: what the mask means). Two added masks become one Add; a
Where mask with -inf becomes the op's boolean mask (negated when it selects the fill), one
with a finite fill the additive mask Where(keep, 0, fill); a Where then an added mask become
the one additive mask Where(keep, 0, fill) + mask (s + (fill + mask) rounds as fill + mask
does: both are fill, or -inf where the mask is also very negative). The IsNaN
guard stays, on the op's output: a row that is NaN after the op is exactly a row whose
probabilities were all NaN (for finite v), so `Where(IsNaN(y), 0, y)` gives the guarded
result.

    %qs = nn.eltwise %q, %c {operation = "mul"}
    %kt = nn.permute %k {order = array<i64: 0, 1, 3, 2>}
    %ks = nn.eltwise %kt, %c {operation = "mul"}
    %s = nn.matmul %qs, %ks
    %a = nn.eltwise %s, %mask {operation = "sum"}
    %p = nn.softmax %a {axis = -1}
    %n = nn.is_nan %p
    %g = nn.select %n, %zero, %p
    %y = nn.matmul %g, %v
becomes
    %y0 = nn.scaled_dot_product_attention %q, %k, %v, %mask {scale = ...}
    %n = nn.is_nan %y0
    %y = nn.select %n, %zero, %y0
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import Operation, SSAValue

from irforge.backends.reference import constant_value
from irforge.builder import constant_op
from irforge.dialects.nn.activation import Activation
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Eltwise, Select
from irforge.dialects.nn.indexing import IsNaN
from irforge.dialects.nn.linear import MatMul
from irforge.dialects.nn.normalization import SoftMax
from irforge.dialects.nn.reduce import Reduce
from irforge.dialects.nn.shape import Permute, Reshape
from irforge.model import store_of
from irforge.passes.patterns.dag import Any, Const, Match, OneOf, P, Same
from irforge.passes.patterns.subgraphs.activations import eltwise
from irforge.passes.patterns.subgraphs.attention import rank, swapped
from irforge.passes.patterns.subgraphs.base import DagReplacement
from irforge.weights.dtypes import from_xdsl

FLOAT32_MAX = float(np.finfo(np.float32).max)
FILL_AT_MOST = -1e4
"""A Where's fill value at or below this is a mask (HF uses float32's min, torch -inf)."""
FILL_ABSORBS = -1e30
"""A fill at or below this absorbs the scores: s + fill rounds to fill for any |s| < 1e22."""


def fill_is_additive(fill: float, condition: SSAValue, keep: bool) -> bool:
    """Whether Where(keep, s, fill) (or Where(drop, fill, s)) is s + Where(keep, 0, fill) for the
    softmax: a fill that absorbs s (float32's min, -inf), or a constant condition that leaves
    every row a key. A row whose keys are all masked is softmax(fill row) = uniform, where
    s + fill with fill = -1e4 is softmax(s) there (0.885 off for a padded row of a causal
    mask); a run-time condition may mask a whole row."""
    return fill <= FILL_ABSORBS or _keeps_a_key_in_every_row(condition, keep) is True


def masks_whole_rows(fill: float, condition: SSAValue, keep: bool) -> bool:
    """Whether Where(keep, s, fill) with a finite fill may mask every key of a row: a run-time
    condition, or a constant one with such a row. There the source's row is the fill alone
    (uniform: the mean of v) whatever s is, where the fused s + fill is uniform only while
    the fill absorbs s (|s| < 1e22): scores that overflow (a scale of 1e37, q * inf) or are
    inf / NaN give other numbers or NaN fused. `uniform_rows` takes those rows from v."""
    if not math.isfinite(fill):
        return False  # (-inf: a row masked throughout is NaN in the source and fused alike)
    # (a run-time number of keys may be 0, an empty KV cache: the source's rows are then 0,
    # p @ v over no keys, and so are `uniform_rows`' there: the max of no mask values is
    # -inf, below 0, and the mean of no values 0, as onnxruntime's ReduceMean)
    return _keeps_a_key_in_every_row(condition, keep) is not True


def _keeps_a_key_in_every_row(condition: SSAValue, keep: bool) -> bool | None:
    """Whether a constant Where condition keeps at least one key of every row; None where
    the condition is known at run time only."""
    owner = condition.owner
    if not isinstance(owner, Constant):
        return None
    kept = constant_value(owner, store_of(owner)).astype(bool)
    kept = kept if keep else ~kept
    return bool(kept.any(axis=-1).all()) if kept.ndim else bool(kept)


def uniform_rows(mask: SSAValue, v: SSAValue, result: SSAValue, name: str) -> list[Operation]:
    """result with each row whose additive mask is below 0 at every key (kept keys add exactly
    0: every key masked) replaced by the mean of v, the source's uniform softmax there; the
    last op's result is the new value."""
    dtype = from_xdsl(mask.type.element_type)  # type: ignore[attr-defined]
    top = build(Reduce, [mask], operation="max", axes=[-1], keep_dims=True, name=f"{name}/row_top")
    zero = Constant.inline(np.zeros((), dtype))
    masked = build(Eltwise, [top.output, zero.output], operation="less", name=f"{name}/masked_rows")
    mean = build(Reduce, [v], operation="mean", axes=[-2], keep_dims=True, name=f"{name}/value_mean")
    chosen = build(Select, [masked.output, mean.output, result], name=f"{name}/uniform_rows")
    return [top, zero, masked, mean, chosen]


ZERO_MASKED_KEYS = True
"""Whether `zero_masked_keys` zeroes k at the keys a padding Where masks (False: the knob
`bench/cpu_knob_ab.py ... --prepare-each` measures its cost with; never False in the product)."""


def zero_masked_keys(condition: SSAValue, keep: bool, k: SSAValue, name: str) -> tuple[SSAValue, list[Operation]]:
    """k [..., S, E] with the keys a key-only Where condition ([..., 1, S]: a padding mask;
    `keep`: True keeps a key, else True drops it) masks set to 0, and the ops that do it;
    k itself for any other condition. Such a key is masked in every row, so the source never
    reads its score: its logit is the fill whatever s is, where the fused s + fill is the
    fill only for |s| < 1e22 (an inf / NaN / overflowing score at a padded key made the row
    NaN, or let the key through: session 13). With k 0 there, s is 0 and 0 + fill the fill
    exactly; v is untouched (p is 0 there in both, 0 * v alike). A condition that differs
    between rows is left: a key masked in one row is read in another."""
    if not ZERO_MASKED_KEYS:
        return k, []
    c_shape = list(condition.type.get_shape())  # type: ignore[attr-defined]
    k_shape = list(k.type.get_shape())  # type: ignore[attr-defined]
    if len(c_shape) < 2 or c_shape[-2] != 1 or len(c_shape) > len(k_shape):
        return k, []
    batch = [1] * (len(k_shape) - len(c_shape)) + c_shape[:-2]
    if not all(c in (1, d) for c, d in zip(batch, k_shape[:-2])) or c_shape[-1] not in (1, k_shape[-2]):
        return k, []  # (k's shape must stay: the condition broadcast up to it only)
    rank = len(c_shape)
    column = build(Permute, [condition], order=[*range(rank - 2), rank - 1, rank - 2], name=f"{name}/masked_keys")
    zero = Constant.inline(np.zeros((), from_xdsl(k.type.element_type)))  # type: ignore[attr-defined]
    chosen = [k, zero.output] if keep else [zero.output, k]
    zeroed = build(Select, [column.output, *chosen], name=f"{name}/key_masked")
    return zeroed.output, [column, zero, zeroed]


def scaled_by(inner: P | Any, tag: str) -> OneOf:
    """inner, inner * c or inner / c, with c bound to `{tag}_factor` / `{tag}_divisor`."""
    return OneOf(eltwise("mul", inner, Const(alias=f"{tag}_factor")), eltwise("div", inner, Const(alias=f"{tag}_divisor")), inner)


QUERY = scaled_by(Any("q"), "q")
FOLDED_KT = P("reshape", operands=[P("permute", operands=[P("reshape", operands=[Any("k")], alias="k_flat")], alias="kt", order=(0, 2, 1))], alias="k_back")
"""k^T as the dynamo exporter writes it: k [..., S, E] reshaped to [B, S, E], transposed to
[B, E, S] and reshaped back to [..., E, S] (checked in `accept`)."""
SEQ_FIRST_KT = P("reshape", operands=[P("permute", operands=[Any("k_rows")], alias="kt_rows")], alias="k_rows_back")
"""k^T of a sequence-first attention (nn.MultiheadAttention, dynamo): k [S, B*H, E]
permuted straight to [B*H, E, S] (the head split's transpose and k^T composed into one
order) and reshaped to [..., E, S] (checked in `accept`)."""
KEY_T = OneOf(
    eltwise("mul", OneOf(P("permute", operands=[Any("k")], alias="kt"), FOLDED_KT, SEQ_FIRST_KT), Const(alias="k_factor")),
    P("permute", operands=[eltwise("mul", Any("k"), Const(alias="k_factor"))], alias="kt"),
    P("permute", operands=[Any("k")], alias="kt"),
    FOLDED_KT,
    SEQ_FIRST_KT,
)
SCORES = scaled_by(OneOf(
    P("matmul", operands=[QUERY, KEY_T], alias="scores", transpose_a=False, transpose_b=False),
    P("matmul", operands=[QUERY, Any("k")], alias="scores", transpose_a=False, transpose_b=True),  # Einsum (MaxViT)
), "s")
ADDED = OneOf(
    eltwise("sum", eltwise("sum", eltwise("sum", SCORES, Any("mask")), Any("mask2")), Any("mask3")),
    eltwise("sum", eltwise("sum", SCORES, Any("mask")), Any("mask2")),
    eltwise("sum", SCORES, Any("mask")),
)
MASKED = OneOf(
    eltwise("sub", OneOf(ADDED, SCORES), Any("sub_mask")),  # Funnel: - INF * (1 - mask)
    ADDED,
    eltwise("sum", P("select", operands=[Any("keep"), SCORES, Const(alias="fill")]), Any("mask")),
    eltwise("sum", P("select", operands=[Any("drop"), Const(alias="fill"), SCORES]), Any("mask")),
    P("select", operands=[Any("keep"), SCORES, Const(alias="fill")]),
    P("select", operands=[Any("drop"), Const(alias="fill"), SCORES]),
    SCORES,
)
PROBS = P("softmax", operands=[MASKED], alias="probs", log=False)
GUARDED = OneOf(
    P("select", operands=[P("is_nan", operands=[PROBS]), Const(0.0, alias="zero"), Same("probs")], alias="guard"),
    PROBS,
)


def one_value(array: np.ndarray) -> float | None:
    if array.size != 1 or array.dtype.kind != "f" or not math.isfinite(float(array.reshape(-1)[0])):
        return None
    return float(array.reshape(-1)[0])


class ExportedAttention(DagReplacement):
    pattern = P("matmul", operands=[GUARDED, Any("v")], transpose_a=False, transpose_b=False)

    def factor(self, m: Match) -> float | None:
        """The product of every scale factor matched; None if one is not a finite scalar."""
        total = 1.0
        for tag in ("q", "k", "s"):
            for kind in ("factor", "divisor"):
                array = m.constants.get(f"{tag}_{kind}")
                if array is None:
                    continue
                if self.per_head(tag, array):
                    continue  # folded into q (head_scale)
                value = one_value(array)
                if value is None or value == 0.0:
                    return None
                total *= value if kind == "factor" else 1.0 / value
        # a product past float32 (q * 1e37 / 0.1) is no f32 scale: left unfused (the source
        # rounds each step; an f32 property of it raised OverflowError, an internal error)
        return total if abs(total) <= FLOAT32_MAX and total != 0.0 else None

    @staticmethod
    def per_head(tag: str, array: np.ndarray) -> bool:
        """A factor of the scores with one value per head (Swin v2's exp(logit_scale), shape
        [H, 1, 1]): the same for every query row and key, so it scales q instead."""
        return tag == "s" and array.size > 1 and array.ndim >= 2 and array.shape[-2:] == (1, 1) and array.dtype.kind == "f"

    def head_scale(self, m: Match) -> np.ndarray | None:
        """The product of the per-head factors, None without any."""
        total = None
        for kind in ("factor", "divisor"):
            array = m.constants.get(f"s_{kind}")
            if array is not None and self.per_head("s", array):
                value = array if kind == "factor" else 1.0 / array
                total = value if total is None else total * value
        return total

    def head_scale_fits(self, m: Match) -> bool:
        scale = self.head_scale(m)
        if scale is None:
            return True
        q = tuple(m["q"].type.get_shape())  # type: ignore[attr-defined]
        if not np.all(np.isfinite(scale)) or any(d < 0 for d in q):
            return False
        try:
            return np.broadcast_shapes(scale.shape, q) == q
        except ValueError:
            return False

    def accept(self, m: Match) -> bool:
        probs, scores = m.op("probs"), m.op("scores")
        assert isinstance(probs, SoftMax) and isinstance(scores, MatMul)
        if self.factor(m) is None or not self.head_scale_fits(m):
            return False
        if "fill" in m.constants:
            fill = m.constants["fill"]
            if fill.size != 1 or not float(fill.reshape(-1)[0]) <= FILL_AT_MOST:
                return False
            condition = m["keep"] if "keep" in m.values else m["drop"]
            if condition.type.element_type.bitwidth != 1:  # type: ignore[attr-defined]
                return False
            if not fill_is_additive(float(fill.reshape(-1)[0]), condition, "keep" in m.values):
                return False
            mask = m.values.get("mask")
            if mask is not None and not isinstance(mask.owner, Constant) and float(fill.reshape(-1)[0]) > FILL_ABSORBS:
                # a run-time mask may hold anything: a positive one lifts a fill that does not
                # absorb the scores as a constant one does (below)
                return False
            if mask is not None and isinstance(mask.owner, Constant):
                # GPT-Neo's Where(keep, s, fill) + mask is s + (Where(keep, 0, fill) + mask) only
                # while fill + mask stays very negative (at most -1e3): a mask that lifts the fill makes the
                # masked keys the row's largest logits, equal in the source (3.8 off fused)
                added = constant_value(mask.owner, store_of(mask.owner))
                if added.size and added.dtype.kind == "f" and float(fill.reshape(-1)[0]) + float(np.max(added)) > FILL_AT_MOST / 10:
                    return False
        if probs.softmax_axis() != rank(probs.input) - 1:
            return False
        if "k_rows_back" in m.ops:
            if not self.seq_first_transpose(m):
                return False
        elif not all(rank(v) >= 3 for v in (m["q"], m["k"], m["v"])):
            return False
        elif "k_back" in m.ops:
            if not self.folded_transpose(m):
                return False
        elif scores.bool_prop("transpose_b"):
            if rank(m["k"]) != rank(m["q"]):
                return False
        elif rank(m["k"]) != rank(m.op("kt").results[0]):
            return False
        if not self.masks_fit(m, scores):
            return False
        return self.plain_form_taken_elsewhere(m) is False

    @staticmethod
    def seq_first_transpose(m: Match) -> bool:
        """permute(k_rows) is [G, E, S] with the key rows' last dim E moved to the middle and
        the reshape back gives [..., E, S] over the same G (static shapes)."""
        rows = tuple(m["k_rows"].type.get_shape())  # type: ignore[attr-defined]
        permuted = tuple(m.op("kt_rows").results[0].type.get_shape())  # type: ignore[attr-defined]
        back = tuple(m.op("k_rows_back").results[0].type.get_shape())  # type: ignore[attr-defined]
        order = m.op("kt_rows").ints("order")  # type: ignore[attr-defined]
        if len(rows) != 3 or any(d < 0 for d in (*rows, *back)) or rank(m["q"]) < 3 or rank(m["v"]) < 3:
            return False
        return order[1] == 2 and len(back) >= 3 and back[-2:] == permuted[1:] and math.prod(back[:-2]) == permuted[0]

    @staticmethod
    def folded_transpose(m: Match) -> bool:
        """Reshape -> Permute(0, 2, 1) -> Reshape swaps k's last two dims (static shapes)."""
        k = tuple(m["k"].type.get_shape())  # type: ignore[attr-defined]
        flat = tuple(m.op("k_flat").results[0].type.get_shape())  # type: ignore[attr-defined]
        back = tuple(m.op("k_back").results[0].type.get_shape())  # type: ignore[attr-defined]
        if len(k) < 3 or any(d < 0 for d in k):
            return False
        # k's leading dims may differ from the scores' (GQA: k repeated per query head as
        # [B, KV, G, S, E], its reshape to [B, KV*G, S, E] composed into the flattening one)
        return flat == (math.prod(k[:-2]), *k[-2:]) and back[-2:] == (k[-1], k[-2]) and math.prod(back[:-2]) == math.prod(k[:-2])

    def masks_fit(self, m: Match, scores: MatMul) -> bool:
        """The masks broadcast to the scores without growing them. With run-time sizes
        (exports with dynamic axes: BERT's [B, 1, L, S] mask on [B, H, L, S] scores, all `?`),
        a mask size fits a scores size that is the same run-time size, any size known only
        at run time (a valid graph has 1 or the other there), or a static one it equals or
        is 1 against (`attention_chains.fits`, both ways)."""
        target = tuple(scores.results[0].type.get_shape())  # type: ignore[attr-defined]
        for name in ("mask", "mask2", "mask3", "sub_mask", "keep", "drop"):
            if name in m.values:
                dims = tuple(m[name].type.get_shape())  # type: ignore[attr-defined]
                if any(d < 0 for d in (*dims, *target)):
                    if len(dims) > len(target) or not all(d in (1, t) or DYN in (d, t) for d, t in zip(reversed(dims), reversed(target))):
                        return False
                    continue
                try:
                    if np.broadcast_shapes(dims, target) != target:
                        return False
                except ValueError:
                    return False
        return True

    def plain_form_taken_elsewhere(self, m: Match) -> bool:
        """The plain forms (one scale on the scores, no guard, no Where) are
        attention.py's; this pattern takes the rest."""
        scaled_elsewhere = any(f"{t}_{k}" in m.constants for t in ("q", "k") for k in ("factor", "divisor"))
        scaled_scores = any(f"s_{k}" in m.constants for k in ("factor", "divisor"))
        extra = "guard" in m.ops or "fill" in m.constants or "mask2" in m.values or "mask3" in m.values or "sub_mask" in m.values or scaled_elsewhere or self.head_scale(m) is not None
        return not extra and scaled_scores

    def key(self, m: Match, name: str) -> tuple[SSAValue, list[Operation]]:
        if "k_rows_back" in m.ops:  # [S, G, E] -> [G, S, E] -> [..., S, E]
            order = m.op("kt_rows").ints("order")  # type: ignore[attr-defined]
            back = tuple(m.op("k_rows_back").results[0].type.get_shape())  # type: ignore[attr-defined]
            rows = build(Permute, [m["k_rows"]], order=swapped(tuple(order)), name=f"{name}/key_rows")
            shaped = build(Reshape, [rows.output], shape=[*back[:-2], back[-1], back[-2]], name=f"{name}/key")
            return shaped.output, [rows, shaped]
        if "k_back" in m.ops:
            k = tuple(m["k"].type.get_shape())  # type: ignore[attr-defined]
            back = tuple(m.op("k_back").results[0].type.get_shape())  # type: ignore[attr-defined]
            if k[:-2] == back[:-2]:
                return m["k"], []
            shaped = build(Reshape, [m["k"]], shape=[*back[:-2], *k[-2:]], name=f"{name}/key")
            return shaped.output, [shaped]
        if "kt" not in m.ops:  # the MatMul's transpose_b
            return m["k"], []
        permute = m.op("kt")
        assert isinstance(permute, Permute)
        order = swapped(permute.ints("order"))
        if order == list(range(len(order))):
            return m["k"], []
        restored = build(Permute, [m["k"]], order=order, name=f"{name}/key")
        return restored.output, [restored]

    def mask(self, m: Match, name: str) -> tuple[list[SSAValue], list[Operation]]:
        masks, ops = self.added_masks(m, name)
        if "sub_mask" not in m.values:
            return masks, ops
        # s - c == s + (0 - c) exactly (negation is exact); ((s + a) + b) - c ==
        # s + ((a + b) - c) up to rounding, as for the sums
        if not masks:
            zero = Constant.inline(np.zeros((), from_xdsl(m["sub_mask"].type.element_type)))  # type: ignore[attr-defined]
            masks, ops = [zero.output], [zero]
        less = build(Eltwise, [masks[0], m["sub_mask"]], operation="sub", name=f"{name}/mask_sub")
        return [less.output], [*ops, less]

    def added_masks(self, m: Match, name: str) -> tuple[list[SSAValue], list[Operation]]:
        if "fill" in m.constants and "mask" in m.values:
            (where,), ops = self.where_mask(m, name, additive=True)
            both = build(Eltwise, [where, m["mask"]], operation="sum", name=f"{name}/mask")
            return [both.output], [*ops, both]
        if "mask2" in m.values:
            both = build(Eltwise, [m["mask"], m["mask2"]], operation="sum", name=f"{name}/mask")
            if "mask3" not in m.values:
                return [both.output], [both]
            # (s + a) + b) + c == s + ((a + b) + c) up to rounding (Swin v2 adds its shift mask twice)
            three = build(Eltwise, [both.output, m["mask3"]], operation="sum", name=f"{name}/mask3")
            return [three.output], [both, three]
        if "mask" in m.values:
            return [m["mask"]], []
        if "fill" not in m.constants:
            return [], []
        return self.where_mask(m, name, additive=False)

    def where_mask(self, m: Match, name: str, additive: bool) -> tuple[list[SSAValue], list[Operation]]:
        """The mask a Where(keep, s, fill) means: boolean for -inf (unless an additive one
        is asked for), else Where(keep, 0, fill)."""
        fill = m.constants["fill"].reshape(())
        if np.isneginf(fill) and not additive:  # exactly the op's boolean mask, NaN rows included
            if "keep" in m.values:
                return [m["keep"]], []
            keep = build(Activation, [m["drop"]], kind="not", name=f"{name}/keep")
            return [keep.output], [keep]
        # a finite fill (float32's min) is the additive mask Where(keep, 0, fill): s + fill
        # rounds to fill for any |s| < 1e22, and a row masked out entirely stays uniform
        # (a higher fill only with a constant condition keeping a key per row: `accept`)
        zero, low = Constant.inline(np.zeros((), fill.dtype)), Constant.inline(np.array(fill))
        chosen = [zero.output, low.output] if "keep" in m.values else [low.output, zero.output]
        where = build(Select, [m["keep"] if "keep" in m.values else m["drop"], *chosen], name=f"{name}/{'where' if additive else 'mask'}")
        return [where.output], [zero, low, where]

    @staticmethod
    def masked_keys_zeroed(m: Match, k: SSAValue, name: str) -> tuple[SSAValue, list[Operation]]:
        """k with the keys a key-only Where condition masks set to 0 (`zero_masked_keys`)."""
        if "fill" not in m.constants:
            return k, []
        return zero_masked_keys(m["keep"] if "keep" in m.values else m["drop"], "keep" in m.values, k, name)

    def build(self, m: Match, name: str) -> list[Operation]:
        k, ops = self.key(m, name)
        # (a Where alone's fill replaces the masked scores on ref and cpu; the zeroed keys and
        # the mean-of-v rows stay for OpenVINO, whose layer adds the mask)
        k, zeroing = self.masked_keys_zeroed(m, k, name)
        ops = [*ops, *zeroing]
        masks, mask_ops = self.mask(m, name)
        value = self.factor(m)
        head = m["q"].type.get_shape()[-1]  # type: ignore[attr-defined]
        default = 1.0 / math.sqrt(head) if head > 0 else math.nan
        scale = None if value is not None and math.isclose(value, default, rel_tol=1e-6) else value
        q = m["q"]
        per_head = self.head_scale(m)
        if per_head is not None:  # (q @ k^T) * c == (q * c) @ k^T for c constant over rows and columns
            scale = value
            dtype = from_xdsl(q.type.element_type)  # type: ignore[attr-defined]
            factor = constant_op(per_head.astype(dtype), store_of(m.op("scores")), f"{name}/head_scale")
            scaled_q = build(Eltwise, [q, factor.output], operation="mul", name=f"{name}/q_scaled")
            ops = [*ops, factor, scaled_q]
            q = scaled_q.output
        guarded = "guard" in m.ops
        whole = self.whole_rows(m)
        attention = build(ScaledDotProductAttention, [q, k, m["v"], *masks], scale=scale, fill=self.where_alone(m),
                          name=f"{name}/attention" if guarded or whole else name)
        ops = [*ops, *mask_ops, attention]
        result = attention.output
        if whole:
            # rows the Where masks throughout: the mean of v whatever the scores (`masks_whole_rows`)
            ops += uniform_rows(masks[0], m["v"], result, name if not guarded else f"{name}/attention")
            result = ops[-1].results[0]
        if not guarded:
            return ops
        zero = Constant.inline(np.zeros((), from_xdsl(attention.output.type.element_type)))  # type: ignore[attr-defined]
        nan = build(IsNaN, [result], name=f"{name}/is_nan")
        return [*ops, zero, nan, build(Select, [nan.output, zero.output, result], name=name)]

    @staticmethod
    def where_alone(m: Match) -> float | None:
        """The fill of a Where alone (no mask added after it, none subtracted), which the op
        takes as its `fill`: a masked key's logit is then the fill whatever its score, as in
        the source, for scores that are inf, NaN or beyond 1e22 too (s + fill gave NaN or let
        the key through: a key masked in one row and kept in another cannot be zeroed in k);
        None for the other forms."""
        if "fill" not in m.constants or "mask" in m.values or "sub_mask" in m.values:
            return None
        return float(m.constants["fill"].reshape(-1)[0])

    @staticmethod
    def whole_rows(m: Match) -> bool:
        """A Where alone (no mask added after it, none subtracted) that may mask whole rows
        with a finite fill: its additive mask is then the attention's only one."""
        if "fill" not in m.constants or "mask" in m.values or "sub_mask" in m.values:
            return False
        condition = m["keep"] if "keep" in m.values else m["drop"]
        return masks_whole_rows(float(m.constants["fill"].reshape(-1)[0]), condition, "keep" in m.values)
