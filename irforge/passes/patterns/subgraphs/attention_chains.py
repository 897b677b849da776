"""Attention whose scores reach the softmax through any chain of scalings, added masks,
a finfo.min clamp and head (un)folding views, back to one `nn.scaled_dot_product_attention`
(the forms `attention.py`, `attention_exports.py` and `attention_heads_in_batch.py` leave:
tried after them).

The chain is read procedurally from the softmax back to the scores' MatMul, so the order of
its steps does not matter:

    s  = q' @ k'     q' = q | q * c | q / c, and k' may be scaled so too (DeBERTa: k^T / c);
                     k' = permute(k) (any order swapping the last two axes, composed with the
                     head split), k read with transpose_b, or any other k^T: channel-first
                     keys split into heads, reshape([B, H*E, S]) to [B, H, E, S] (SqueezeBERT's
                     1x1 convolutions, BoTNet's), a slice of a channel-first qkv (CoAtNet):
                     k is then a Permute of it
    x  = s, then any sequence of (none: a bare softmax(q @ k') @ v, scale 1)
         x * c | x / c                  (c a finite nonzero one-value constant)
         x + m | x - m                  (m anything that broadcasts to x without growing it)
         x * C                          (C a constant of 0s and one value c whose zeros the
                                        constant masks added after it put at or below -1e4:
                                        GPT-1's w * b + -1e4 * (1 - b), as c * x; see
                                        `causal_product`)
         max(x, c)                      (c at or below -1e30: HF's clamp to float32's min)
         Where(keep, x, fill) | Where(drop, fill, x)   (fill at or below -1e4: the additive
                                        mask Where(keep, 0, fill), as attention_exports.py;
                                        the factors after it positive)
         reshape(x)                     (leading dims only: heads folded into / out of the batch;
                                        or [.., qh*qw, kh*kw] <-> [.., qh, qw, kh, kw]: ViTDet's
                                        and SAM's decomposed relative positions, whose terms
                                        are broadcast to that grid and read back as [.., L, S])
    p  = softmax(x, last axis), then p | Where(drop, 0, p) | Where(keep, p, 0) (DeBERTa's
         XSoftmax zeroes the masked probabilities again, with a Where of the chain's), then
         any leading-dims reshapes (the heads folded back into the batch)
    y  = p @ v

Written forward, x = K * s + sum_i c_i * m_i with K the product of all factors and c_i the
product of the factors after m_i (the negated one for a subtraction): CodeGen's
(s + mask) / sqrt(d) is s / sqrt(d) + mask / sqrt(d). That is one attention with scale K and
the additive mask sum_i c_i * m_i. A clamp max(x, c) at a point where x = A * s + M is taken
as A * s + max(M, c): both are c (up to rounding of a value ~1e38) where M is masked, and
equal where M is finite and small (|A * s + M| far above c). XSoftmax's second Where is
exact as y * max(Where(keep, 1, 0), last axis): masked probabilities are exactly 0 already
(exp of a fill at or below -1e4 relative to the row's maximum), and a row whose keys are all
masked, uniform after the softmax, is zeroed. All ops of the chain must be used by the chain
alone. The attention is computed in the view of highest rank met on the
chain (q, k, v and the result reshaped along their leading dims: the same row-major
elements); a mask given in another view must have unit leading dims or exactly that view's
leading dims.

Sizes known only at run time: the number of keys S may be one (a KV cache: k, v and the
scores' last axis; the views of k and v infer it), and a mask may have run-time sizes where
the op adding it has static ones (the run-time size is then 1 or that one: Emformer's
[N, 1, 1, ?] padding mask through dynamo, see `fits`); q, the result and every leading axis
must be static, so the attention's result is (`static_but_keys`). Or, with run-time sizes
anywhere, the chain has no views and q, k, v and the masks need none (`one_view`). Both
rules live in `attention_sizes.py`.

    %s = nn.matmul %q, %kt                      (XGLM: [B*H, L, S] scores)
    %r = nn.reshape %s {shape = [B, H, L, S]}
    %a = nn.eltwise %r, %mask {operation = "sum"}
    %c = nn.eltwise %a, %min {operation = "max"}
    %b = nn.reshape %c {shape = [B*H, L, S]}
    %p = nn.softmax %b {axis = -1}
    %y = nn.matmul %p, %v
becomes
    %y4 = nn.scaled_dot_product_attention %q4, %k4, %v4, %clamped {scale = ...}
    %y = nn.reshape %y4 {shape = [B*H, L, Ev]}
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irforge.backends.reference import constant_value
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Eltwise, Select
from irforge.dialects.nn.linear import MatMul
from irforge.dialects.nn.normalization import SoftMax
from irforge.dialects.nn.reduce import Reduce
from irforge.dialects.nn.shape import Permute, Reshape
from irforge.model import store_of
from irforge.passes.patterns.affine import layer_name
from irforge.passes.patterns.dag import Match
from irforge.passes.patterns.subgraphs.attention import swapped
from irforge.passes.patterns.subgraphs.attention_exports import (FILL_ABSORBS, FILL_AT_MOST, fill_is_additive, masks_whole_rows, uniform_rows,
                                                                  zero_masked_keys)
from irforge.passes.patterns.subgraphs.attention_sizes import fits, inferred, one_view, shared, static_but_keys
from irforge.passes.patterns.subgraphs.base import replace_match
from irforge.weights.dtypes import from_xdsl

CLAMP_AT_MOST = -1e30
"""A max() with a constant at or below this only clamps masked scores (HF: float32's min)."""


def dims(value: SSAValue) -> tuple[int, ...]:
    return tuple(value.type.get_shape())  # type: ignore[attr-defined]


def scalar(value: SSAValue) -> float | None:
    """The finite value of a one-element float constant, else None."""
    owner = value.owner
    if not isinstance(owner, Constant):
        return None
    array = constant_value(owner, store_of(owner))
    if array.size != 1 or array.dtype.kind != "f" or not math.isfinite(float(array.reshape(-1)[0])):
        return None
    return float(array.reshape(-1)[0])


@dataclass
class Term:
    """An additive mask: its value, coefficient at the softmax and the view it is added in."""

    value: SSAValue
    coefficient: float
    view: tuple[int, ...]
    fill: float | None = None
    """Where(value, x, fill) (keep) or Where(value, fill, x): the additive mask
    Where(value, 0, fill) / Where(value, fill, 0); None: value is itself added."""
    keep: bool = True
    whole_rows: bool = False
    """A fill that does not absorb the scores under a run-time condition: a row it masks
    throughout is uniform (softmax of equal fills), not softmax(s + fill); the attention then
    takes those rows from the mean of v (`build`)."""
    after: int = 0
    """How many of the chain's `steps` lie after it (its coefficient's factors, step by step)."""


@dataclass
class Chain:
    """What lies between the scores and the softmax, read backwards."""

    factor: float = 1.0
    steps: list[tuple[str, float]] = field(default_factory=list)
    """Each scaling ("mul" / "div", c) from the softmax back: `factor` one step at a time, as
    the source rounds it (fill * 3 * 0.1 overflows at * 3 in float32, not as fill * 0.3)."""
    terms: list[Term] = field(default_factory=list)
    clamps: list[tuple[float, float, int]] = field(default_factory=list)
    """(c, the cumulative factor after the clamp, how many terms were met before it) each."""
    views: list[tuple[int, ...]] = field(default_factory=list)
    ops: list[Operation] = field(default_factory=list)
    uniform_rows: bool = False
    """Rows every key of which a Where masks are taken from the mean of v (`build`)."""


def other(op: Eltwise, value: SSAValue) -> SSAValue:
    a, b = op.operands
    return b if a is value else a


def leading_only(before: tuple[int, ...], after: tuple[int, ...]) -> bool:
    """A reshape that only splits or merges leading dims (the last two stay)."""
    return len(before) >= 3 and len(after) >= 3 and before[-2:] == after[-2:] and math.prod(before) == math.prod(after)


def grid_split(scores: tuple[int, ...], grid: tuple[int, ...]) -> bool:
    """grid is [P.., qh, qw, kh, kw] of scores [P.., qh*qw, kh*kw] (ViTDet's and SAM's
    decomposed relative positions: the same row-major elements)."""
    return (len(scores) >= 3 and len(grid) == len(scores) + 2 and grid[:-4] == scores[:-2]
            and grid[-4] * grid[-3] == scores[-2] and grid[-2] * grid[-1] == scores[-1])


def wide(view: tuple[int, ...], scores: tuple[int, ...]) -> bool:
    """A [.., qh, qw, kh, kw] view of the scores (not one of their [.., L, S] views)."""
    return view[-2:] != scores[-2:]


def read_chain(x: SSAValue) -> tuple[Chain, MatMul] | None:
    """The chain from the scores' MatMul to `x` (the softmax's input), None if a step is not
    one of the module's forms."""
    chain = Chain(views=[dims(x)])
    while True:
        owner = x.owner
        if not isinstance(owner, Operation) or len(owner.results) != 1 or not owner.results[0].has_one_use():
            return None
        if isinstance(owner, MatMul):
            return chain, owner
        if isinstance(owner, Reshape):
            source = owner.operands[0]
            before, after = dims(source), dims(x)
            if not (leading_only(before, after) or grid_split(before, after) or grid_split(after, before)):
                return None
            chain.views.append(dims(source))
            chain.ops.append(owner)
            x = source
            continue
        if isinstance(owner, Select):
            condition, yes, no = owner.operands
            fill_yes, fill_no = scalar(yes), scalar(no)
            keep = fill_no is not None and fill_no <= FILL_AT_MOST
            if not (keep or (fill_yes is not None and fill_yes <= FILL_AT_MOST)) or condition.type.element_type.bitwidth != 1:  # type: ignore[attr-defined]
                return None
            if chain.factor <= 0 or lifted_fill(chain, fill_no if keep else fill_yes):  # type: ignore[arg-type]
                # a negative factor after the Where, or a constant mask added after it, turns
                # the fill into the row's largest logit: the masked keys share the row equally
                # in the source, by exp(c * s) fused (Where(keep, s, -1e4) * -0.5: 20 of 40
                # values 0.76 off on ref, cpu, OpenVINO)
                return None
            # Where(keep, s, fill) is s + Where(keep, 0, fill) on every row that keeps a key (the
            # masked keys' exp is 0 either way); on a row masked throughout only where the fill
            # absorbs s, or the condition is a constant that masks no whole row (else whole_rows)
            additive = fill_is_additive(fill_no if keep else fill_yes, condition, keep)  # type: ignore[arg-type]
            chain.terms.append(Term(condition, chain.factor, dims(x), fill_no if keep else fill_yes, keep, not additive, len(chain.steps)))
            chain.ops.append(owner)
            x = yes if keep else no
            continue
        if not isinstance(owner, Eltwise) or len(owner.operands) != 2:
            return None
        operation = owner.str_prop("operation")
        a, b = owner.operands
        if operation == "mul" and scalar(a) is None and scalar(b) is None:
            # x * C, C a constant of 0s and one value c whose zeros the masks added later
            # cover (GPT-1's w * b + -1e4 * (1 - b), b the causal 0/1 buffer, with 1/sqrt(d)
            # folded into it): c * x plus those masks
            side, c = causal_product(owner, chain)
            if side is None:
                return None
            chain.factor *= c
            chain.steps.append(("mul", c))
            x = side
            chain.ops.append(owner)
            continue
        if operation in ("mul", "div"):
            # one side a one-value constant; the scores' side is the other
            side = a if scalar(b) is not None else b if scalar(a) is not None and operation == "mul" else None
            if side is None:
                return None
            c = scalar(other(owner, side))
            if not c:
                return None
            chain.factor *= c if operation == "mul" else 1.0 / c
            chain.steps.append((operation, c))
            x = side
        elif operation == "max":
            side = a if scalar(b) is not None else b if scalar(a) is not None else None
            if side is None or scalar(other(owner, side)) > CLAMP_AT_MOST:  # type: ignore[operator]
                return None
            chain.clamps.append((scalar(other(owner, side)), chain.factor, len(chain.terms)))  # type: ignore[arg-type]
            x = side
        elif operation in ("sum", "sub"):
            # the scores' side leads back to a MatMul of two activations through the chain
            # (a product with constant weights, BoTNet's relative logits q @ W, is a term;
            # two sides alike are ambiguous: left to the other patterns)
            reach_a, reach_b = reaches_matmul(a), reaches_matmul(b) if operation == "sum" else 0
            if reach_a == reach_b:
                return None
            side = a if reach_a > reach_b else b
            mask = other(owner, side)
            sign = -1.0 if operation == "sub" else 1.0
            chain.terms.append(Term(mask, sign * chain.factor, dims(x)))
            x = side
        else:
            return None
        chain.ops.append(owner)


def lifted_fill(chain: Chain, fill: float) -> bool:
    """Whether the masks added after a Where (the chain's terms so far, read from the softmax
    back) may lift its fill above FILL_AT_MOST / 10 at the softmax (-1e3: exp of it is 0
    beside any logit above -900, a relative-position bias on a -1e4 fill stays masked). A
    run-time mask may hold anything: it lifts any fill that does not absorb the scores (a
    +2e4 on a -1e4 fill makes the masked keys the row's largest and equal logits, where the
    fused s + fill + mask weights them by exp(s)); after a fill at or below FILL_ABSORBS
    (float32's min: HF's causal Where, then the padding mask) the fused form is the source's."""
    top = fill * chain.factor
    for term in chain.terms:
        owner = term.value.owner
        if term.fill is not None:
            continue
        if not isinstance(owner, Constant):
            if top > FILL_ABSORBS:
                return True
            continue
        array = constant_value(owner, store_of(owner))
        if array.size and array.dtype.kind == "f":
            top += float(np.max(term.coefficient * array.astype(np.float64)))
    return top > FILL_AT_MOST / 10


FLOAT32_MAX = float(np.finfo(np.float32).max)


def at_softmax(chain: Chain, term: Term, dtype: np.dtype) -> float:
    """The value term's fill reaches the softmax with in the source: scaled by each step after
    it in turn, rounded to dtype at each (inf from the step that overflows on)."""
    value = np.asarray(term.fill, dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        for operation, c in reversed(chain.steps[:term.after]):  # (read from the softmax back)
            value = value * np.asarray(c, dtype) if operation == "mul" else value / np.asarray(c, dtype)
    return float(value)


def uniform_when_masked(chain: Chain, guarded: bool, dtype: np.dtype = np.dtype(np.float32)) -> bool:
    """Whether a row masked throughout is uniform in the source, so that `build` may take it
    from the mean of v: every term a Where whose fill reaches the softmax as one and the same
    finite value (the fill scaled by each step after it, in the scores' dtype: `at_softmax`),
    no clamp, no guard after the softmax. (float32's min times 3 is -inf: the source's row is
    then NaN, as the fused one without the mean of v; fuzz_session12_ops' uniformrows.onnx
    with its 0.5 mutated to 3; fill * 3 * 0.1 likewise, though fill * 0.3 is finite.)"""
    if guarded or chain.clamps or any(t.fill is None for t in chain.terms):
        return False
    values = {at_softmax(chain, t, dtype) for t in chain.terms}
    return len(values) == 1 and all(math.isfinite(v) and abs(v) <= FLOAT32_MAX for v in values)


def selecting_fill(chain: Chain, dtype: np.dtype, view: tuple[int, ...]) -> float | None:
    """The attention's `fill` where the chain's masks are all Wheres in the attention's view,
    with no clamp: the highest of their fills as they reach the softmax in the source
    (`at_softmax`, -inf where one overflows). The mask then holds, per key, the fill of the
    Where nearest the softmax that masks it (`nested_fills`), and a masked key's logit is
    that fill whatever its score, as in the source (s + fill is NaN for an inf / NaN score,
    or lets a key scored past 1e22 through; two fills of float32's min added are -inf); a
    row masked throughout is the source's, uniform or NaN. None otherwise (masks added)."""
    if not chain.terms or chain.clamps or any(t.fill is None or t.view != view for t in chain.terms):
        return None
    reached = max(at_softmax(chain, t, dtype) for t in chain.terms)
    return reached if reached <= FILL_AT_MOST else None


FILL_OVER_ADDED_UNFUSED = True
"""A chain with a Where nearer the softmax than a mask the model takes as an input and adds
(Add(s, a), then Where(keep, ., fill)) stays unfused where its masks would be summed (not
`selecting_fill`): the source's Where replaces the score, a's value included, by its fill,
while the sum keeps a's value at the masked keys (a = +1e30 under a -1e30 fill: the key kept;
fuzz_attention_chains.py 1601 30, #29, session 16). Terms the model computes (SEW-D /
DeBERTa's disentangled scores, added before their Where mask) still fuse, and so do inputs of
the scores' whole shape (per-head scores, not a mask broadcast over heads or rows): their
values are scores, and unfusing them would cost those models their fused attention."""


def fill_over_added_mask(chain: Chain, view: tuple[int, ...]) -> bool:
    """Whether a Where term lies nearer the softmax than an added term that is a model input
    broadcast over the scores (a mask; terms run from the softmax back)."""
    def mask_input(t: Term) -> bool:
        return t.fill is None and isinstance(t.value, BlockArgument) and math.prod(dims(t.value)) < math.prod(view)

    return any(term.fill is not None and any(mask_input(t) for t in chain.terms[index + 1:]) for index, term in enumerate(chain.terms))


def nested_fills(chain: Chain, dtype: np.dtype, name: str) -> tuple[SSAValue, list[Operation]]:
    """Where(c1, Where(c2, .. 0 .., f2), f1) of the chain's Wheres, the one nearest the
    softmax outermost, each fill as it reaches the softmax: the logit the source gives a key
    its Wheres mask (0 where none does)."""
    zero = Constant.inline(np.zeros((), dtype))
    ops: list[Operation] = [zero]
    inner: SSAValue = zero.output
    for index, term in reversed(list(enumerate(chain.terms))):  # (terms run from the softmax back)
        low = Constant.inline(np.array(at_softmax(chain, term, dtype), dtype))
        chosen = [inner, low.output] if term.keep else [low.output, inner]
        where = build(Select, [term.value, *chosen], name=f"{name}/mask{index}_where")
        ops.extend([low, where])
        inner = where.output
    return inner, ops


def causal_product(op: Eltwise, chain: Chain) -> tuple[SSAValue | None, float]:
    """The scores' side of op = x * C and c, for C a constant whose values are 0 and one
    finite nonzero c, not growing x, whose zeros the constant masks added after op in op's
    view (the chain's terms so far) put at or below FILL_AT_MOST, leaving each row of the
    scores a key they do not mask; (None, 0) otherwise.
    Then x * C + M is c * x + M up to c * x at the zeros: like a Where's fill (see the module
    docstring), those logits are at or below -1e4 either way and their probabilities exactly 0."""
    out = dims(op.results[0])
    if DYN in out:
        return None, 0.0  # (the zeros' positions are checked against static masks)
    for side, factor in zip(op.operands, reversed(op.operands)):
        owner = factor.owner
        if not isinstance(owner, Constant) or dims(side) != out:
            continue
        array = constant_value(owner, store_of(owner))
        if array.dtype.kind != "f" or not np.all(np.isfinite(array)):
            continue
        values = np.unique(array)
        nonzero = values[values != 0]
        if len(nonzero) != 1 or len(values) != 2:
            continue
        zeros = np.broadcast_to(array == 0, out)
        masked = np.zeros(out)
        for term in chain.terms:
            owner_t = term.value.owner
            if term.fill is not None or term.view != out or not isinstance(owner_t, Constant):
                continue
            masked = masked + term.coefficient * np.broadcast_to(constant_value(owner_t, store_of(owner_t)), out)
        # (at the softmax's scale: the coefficients hold the factors after the masks)
        # and every row keeps a key: a row all zeros in C is softmax(M) (uniform for GPT-1's
        # -1e4 fill), where c * x + M is softmax(c * x) there (8 of 40 values 1.26 off)
        kept = ~zeros & (masked > FILL_AT_MOST)
        if np.all(masked[zeros] <= FILL_AT_MOST) and np.all(kept.any(axis=-1)):
            return side, float(nonzero[0])
    return None, 0.0


STEPS = ("nn.eltwise", "nn.reshape", "nn.select")


def reaches_matmul(value: SSAValue, depth: int = 12) -> int:
    """2: the value is a MatMul's result through at most `depth` single-use chain steps, 1: a
    MatMul with a constant operand (a projection by weights, not scores), 0: neither."""
    while depth > 0:
        owner = value.owner
        if isinstance(owner, MatMul):
            return 1 if any(isinstance(v.owner, Constant) for v in owner.operands) else 2
        if not isinstance(owner, Operation) or owner.name not in STEPS or not owner.results[0].has_one_use():
            return 0
        candidates = [v for v in owner.operands if not isinstance(v.owner, Constant)]
        if not candidates:
            return 0
        value = candidates[0]
        depth -= 1
    return 0


def scaling(value: SSAValue) -> tuple[SSAValue, float] | None:
    """value = x * c or x / c (c a finite nonzero one-value constant, value read once): x and
    the factor."""
    owner = value.owner
    if not isinstance(owner, Eltwise) or len(owner.operands) != 2 or not value.has_one_use():
        return None
    operation = owner.str_prop("operation")
    a, b = owner.operands
    if operation == "div" and scalar(b):
        return a, 1.0 / scalar(b)  # type: ignore[operator]
    if operation == "mul":
        for x, c in ((a, b), (b, a)):
            if scalar(c):
                return x, scalar(c)  # type: ignore[return-value]
    return None


def same_condition(a: SSAValue, b: SSAValue) -> bool:
    """The same value, or constants with equal elements."""
    if a is b:
        return True
    if not (isinstance(a.owner, Constant) and isinstance(b.owner, Constant)):
        return False
    x, y = constant_value(a.owner, store_of(a.owner)), constant_value(b.owner, store_of(b.owner))
    return x.shape == y.shape and bool(np.array_equal(x, y))


class ChainedAttention(RewritePattern):
    """softmax(chain(q @ k')) @ v: see the module docstring."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MatMul) or op.bool_prop("transpose_a") or op.bool_prop("transpose_b"):
            return
        probs_value, v = op.operands
        self.fuse(op, probs_value, v, rewriter)

    def fuse(self, op: MatMul, probs_value: SSAValue, v: SSAValue, rewriter: PatternRewriter,
             transposed: bool = False, prelude: tuple[Operation, ...] = (), taken: tuple[Operation, ...] = ()) -> bool:
        """Replace op = softmax(chain) @ v by one attention; False (nothing changed) if the
        chain is not one of the module's forms (the caller erases its `prelude`, the ops that
        make v). `transposed`: op computes v^T @ p^T (v is then the transposed value, and the
        result is transposed back); `taken`: ops between the probabilities and op, replaced too."""
        joins: list[Operation] = []  # views of the probabilities back to v's (heads in the batch)
        while isinstance(probs_value.owner, Reshape) and probs_value.has_one_use() and leading_only(dims(probs_value.owner.operands[0]), dims(probs_value)):
            joins.append(probs_value.owner)
            probs_value = probs_value.owner.operands[0]
        if joins and not probs_value.has_one_use():
            return False
        guard = self.guard(probs_value)
        probs = probs_value.owner if guard is None else guard[1]
        if guard is not None and not guard[0].results[0].has_one_use():
            return False
        if not isinstance(probs, SoftMax) or probs.bool_prop("log") or not probs.results[0].has_one_use():
            return False
        if probs.softmax_axis() != len(dims(probs.input)) - 1:
            return False
        found = read_chain(probs.input)
        if found is None:
            return False
        chain, scores = found
        wheres = [t for t in chain.terms if t.fill is not None]
        if any(t.whole_rows or masks_whole_rows(t.fill, t.value, t.keep) for t in wheres) or len(wheres) > 1:  # type: ignore[arg-type]
            # a row masked throughout is uniform in the source; fused, it is softmax(s + fill)
            # (a fill that does not absorb s, or scores that overflow past one that does) or
            # softmax of fills and their sums (two Wheres of float32's min add to -inf where
            # both mask): the mean of v there, when it is uniform
            chain.uniform_rows = uniform_when_masked(chain, guard is not None, from_xdsl(probs.input.type.element_type))  # type: ignore[attr-defined]
            if not chain.uniform_rows and any(t.whole_rows for t in wheres):
                return False
        chain.views.extend(dims(j.results[0]) for j in joins)
        if scores.bool_prop("transpose_a"):
            return False  # (a bare softmax(q @ k^T) @ v that attention.py left has scale 1: taken here)
        q, kt = scores.operands
        scalings: list[Operation] = []  # q * c, k^T / c (DeBERTa): their factors join the chain's
        for _ in range(2):
            for index, value in enumerate((q, kt)):
                step = scaling(value)
                if step is not None:
                    chain.factor *= step[1]
                    scalings.append(value.owner)  # type: ignore[arg-type]
                    q, kt = (step[0], kt) if index == 0 else (q, step[0])
        if any(len(s) < 3 for s in (dims(q), dims(kt), dims(v))):
            return False
        if not abs(chain.factor) <= FLOAT32_MAX or float(np.float32(chain.factor)) == 0.0:
            return False  # a scale past float32 (q * 1e37 / 0.1 * 10): no f32 property; left unfused
        shapes = (dims(q), dims(kt), dims(v))
        if not (static_but_keys(*shapes, chain.views, dims(op.results[0])) or one_view(*shapes, chain.views, [t.view for t in chain.terms])):
            return False
        if any(not fits(dims(t.value), t.view) for t in chain.terms):
            return False
        if from_xdsl(q.type.element_type).kind != "f":  # type: ignore[attr-defined]
            return False
        scores_dims = dims(scores.results[0])
        views = [w for w in chain.views if not wide(w, scores_dims)]
        view = max(views, key=len)
        lead = view[:-2]
        if any(math.prod(w[:-2]) != math.prod(lead) for w in views):
            return False
        if any(wide(w, scores_dims) and not grid_split(view, w) for w in chain.views):
            return False  # a grid view must split the attention's own view
        for t in chain.terms:
            mlead = dims(t.value)[:-2]
            if t.view != view and not wide(t.view, scores_dims) and any(d != 1 for d in mlead) and tuple(mlead) != t.view[:-2]:
                return False
            if t.view != view and not wide(t.view, scores_dims) and dims(t.value)[-2:].count(DYN) > 1:
                return False  # (its view would need two inferred sizes)
        if math.prod(dims(q)[:-2]) != math.prod(lead) or not (math.prod(dims(v)[:-2]) == math.prod(lead) or shared(dims(v), lead)):
            return False
        guard_term = None
        if guard is not None:
            # the probabilities of the masked keys zeroed again after the softmax (DeBERTa's
            # XSoftmax): the same Where as a mask of the chain, in the attention's view
            guard_term = next((t for t in chain.terms if t.fill is not None and t.keep == guard[3] and t.view == view
                               and same_condition(t.value, guard[2])), None)
            if guard_term is None:
                return False
        name = layer_name(op, "matmul")
        key = self.key(scores, kt, name)
        if key is None:
            return False
        k, ops, permute = key
        out = dims(op.results[0])
        if transposed:
            out = (*out[:-2], out[-1], out[-2])
        new_ops = self.build(chain, q, k, v, view, name, out, ops, guard_term, transposed)
        if new_ops is not None and transposed:
            rank = len(out)
            back = build(Permute, [new_ops[-1].results[0]], order=[*range(rank - 2), rank - 1, rank - 2], name=name)
            new_ops.append(back)
        if new_ops is None or new_ops[-1].results[0].type != op.results[0].type:
            for new in reversed(new_ops or ops):
                new.erase()
            return False
        new_ops = [*prelude, *new_ops]
        matched = (op, *taken, *joins, *([guard[0]] if guard is not None else []), probs, *reversed(chain.ops), scores, *scalings,
                   *([permute] if permute is not None else []))
        replace_match(rewriter, Match(op, {}, {}, {}, matched), new_ops)
        return True

    @staticmethod
    def guard(probs: SSAValue) -> tuple[Select, SoftMax, SSAValue, bool] | None:
        """Where(drop, 0, softmax) or Where(keep, softmax, 0): the Where, the softmax, the
        condition and whether it keeps; None for anything else."""
        where = probs.owner
        if not isinstance(where, Select):
            return None
        condition, yes, no = where.operands
        if scalar(yes) == 0.0 and isinstance(no.owner, SoftMax):
            return where, no.owner, condition, False
        if scalar(no) == 0.0 and isinstance(yes.owner, SoftMax):
            return where, yes.owner, condition, True
        return None

    @staticmethod
    def key(scores: MatMul, kt: SSAValue, name: str) -> tuple[SSAValue, list[Operation], Permute | None] | None:
        """k in [..., S, E], the ops that make it and the scores' Permute it replaces."""
        kt_owner = kt.owner
        if scores.bool_prop("transpose_b"):
            return kt, [], None
        if isinstance(kt_owner, Permute) and kt_owner.results[0].has_one_use():
            order = swapped(tuple(kt_owner.ints("order")))
            source = kt_owner.operands[0]
            if order == list(range(len(order))):
                return source, [], kt_owner
            restored = build(Permute, [source], order=order, name=f"{name}/key")
            return restored.output, [restored], kt_owner
        # any other k^T: channel-first keys split into heads, [B, H*E, S] -> [B, H, E, S]
        # (SqueezeBERT's from a 1x1 convolution, BoTNet's [B*H, E, S]), a slice of a fused
        # qkv in [B, H, 3E, S] (CoAtNet's NCHW attention, through torch's SDPA export, whose
        # k.transpose().transpose() cancels): q @ kt is q @ k^T with k = kt's last two axes
        # swapped, whatever made kt
        rank = len(dims(kt))
        restored = build(Permute, [kt], order=[*range(rank - 2), rank - 1, rank - 2], name=f"{name}/key")
        return restored.output, [restored], None

    def build(self, chain: Chain, q: SSAValue, k: SSAValue, v: SSAValue, view: tuple[int, ...], name: str,
              out: tuple[int, ...], ops: list[Operation], guard: Term | None = None, named_after: bool = False) -> list[Operation] | None:
        """The ops computing the attention in `out`'s shape (`named_after`: a later op takes the
        layer's name)."""
        ops = list(ops)
        dtype = from_xdsl(q.type.element_type)  # type: ignore[attr-defined]
        lead = list(view[:-2])

        def in_view(value: SSAValue, tag: str) -> SSAValue:
            shape = dims(value)
            if tuple(shape[:-2]) == tuple(lead) or (tag != "query" and shared(shape, lead)):
                return value  # (k and v shared by the heads broadcast: MobileNetV4's multi-query attention)
            reshape = build(Reshape, [value], shape=inferred([*lead, *shape[-2:]]), name=f"{name}/{tag}_view")
            ops.append(reshape)
            return reshape.output

        if math.prod(dims(q)[:-2]) != math.prod(lead) or any(math.prod(dims(x)[:-2]) != math.prod(lead) and not shared(dims(x), lead) for x in (k, v)):
            return None
        q4, k4, v4 = in_view(q, "query"), in_view(k, "key"), in_view(v, "value")
        selected = selecting_fill(chain, dtype, view)
        if selected is None and FILL_OVER_ADDED_UNFUSED and fill_over_added_mask(chain, view):
            return None
        for index, term in enumerate(chain.terms):
            if term.fill is not None and term.view == view:  # the keys a padding Where masks: 0 in k
                k4, zeroing = zero_masked_keys(term.value, term.keep, k4, f"{name}/mask{index}")
                ops.extend(zeroing)

        def scaled(value: SSAValue, coefficient: float, tag: str) -> SSAValue:
            if coefficient == 1.0:
                return value
            factor = Constant.inline(np.array(coefficient, dtype))
            product = build(Eltwise, [value, factor.output], operation="mul", name=f"{name}/{tag}_scaled")
            ops.extend([factor, product])
            return product.output

        def additive(term: Term, index: int) -> SSAValue:
            if term.fill is None:
                return term.value
            fill = term.fill
            if not chain.clamps and not math.isfinite(reached := at_softmax(chain, term, dtype)):
                # the source's fill overflows partway through the factors after it (float32's
                # min * 3 * 0.1 is -inf, min * 0.3 is not): the fused mask holds that -inf
                fill = math.copysign(math.inf, reached)
            zero, low = Constant.inline(np.zeros((), dtype)), Constant.inline(np.array(fill, dtype))
            chosen = [zero.output, low.output] if term.keep else [low.output, zero.output]
            where = build(Select, [term.value, *chosen], name=f"{name}/mask{index}_where")
            ops.extend([zero, low, where])
            return where.output

        def mask_in_view(term: Term, index: int) -> SSAValue:
            shape = dims(term.value)
            value = additive(term, index)
            if term.view == view:
                return value
            if len(term.view) == len(view) + 2:
                # a term of the [.., qh, qw, kh, kw] grid view: broadcast to the whole grid,
                # then read as [.., L, S] (the same row-major elements)
                if shape != term.view:
                    zeros = Constant.inline(np.zeros(term.view, dtype))
                    full = build(Eltwise, [value, zeros.output], operation="sum", name=f"{name}/mask{index}_grid")
                    ops.extend([zeros, full])
                    value = full.output
                reshape = build(Reshape, [value], shape=list(view), name=f"{name}/mask{index}_view")
                ops.append(reshape)
                return reshape.output
            if all(d == 1 for d in shape[:-2]):
                target = [1] * len(lead) + list(shape[-2:])
            else:
                target = [*lead, *shape[-2:]]
            reshape = build(Reshape, [value], shape=inferred(target), name=f"{name}/mask{index}_view")
            ops.append(reshape)
            return reshape.output

        def total(terms: list[tuple[int, Term]], relative_to: float) -> SSAValue | None:
            """sum of c_i / relative_to * m_i, in the attention's view."""
            result: SSAValue | None = None
            for index, term in terms:
                value = scaled(mask_in_view(term, index), term.coefficient / relative_to, f"mask{index}")
                if result is None:
                    result = value
                else:
                    both = build(Eltwise, [result, value], operation="sum", name=f"{name}/mask{index}_sum")
                    ops.append(both)
                    result = both.output
            return result

        # walking back, terms[:n] come after a clamp met when n terms had been seen; the
        # earlier clamps (larger n) apply to the terms before them
        indexed = list(enumerate(chain.terms))
        mask: SSAValue | None = None
        cut = len(indexed)
        if selected is not None:  # the Wheres' fills, per key, replacing its score
            mask, fills = nested_fills(chain, dtype, name)
            ops.extend(fills)
            indexed, cut = [], 0
        for c, after, seen in sorted(chain.clamps, key=lambda clamp: -clamp[2]):
            early = total(indexed[seen:cut], after)
            if early is None:
                return None  # a clamp of the bare scores is not a mask
            if mask is not None:
                both = build(Eltwise, [mask, scaled(early, 1.0, "early")], operation="sum", name=f"{name}/clamp_in")
                ops.append(both)
                early = both.output
            bound = Constant.inline(np.array(c, dtype))
            clamped = build(Eltwise, [early, bound.output], operation="max", name=f"{name}/clamp")
            ops.extend([bound, clamped])
            mask = scaled(clamped.output, after, "clamped")
            cut = seen
        rest = total(indexed[:cut], 1.0)
        if mask is not None and rest is not None:
            both = build(Eltwise, [mask, rest], operation="sum", name=f"{name}/mask")
            ops.append(both)
            mask = both.output
        elif rest is not None:
            mask = rest
        head = dims(q)[-1]
        scale: float | None = chain.factor
        if head != DYN and math.isclose(chain.factor, 1.0 / math.sqrt(head), rel_tol=1e-6):
            scale = None
        attention = build(ScaledDotProductAttention, [q4, k4, v4, *([mask] if mask is not None else [])], scale=scale, fill=selected,
                          name=f"{name}/attention" if view[:-2] != out[:-2] or named_after else name)
        ops.append(attention)
        result = attention.output
        if guard is not None:
            # a row whose keys are all masked: uniform probabilities zeroed, so y = 0; any
            # other row's masked probabilities are exactly 0 already (exp of the fill)
            one, zero = Constant.inline(np.ones((), dtype)), Constant.inline(np.zeros((), dtype))
            kept = build(Select, [guard.value, *([one.output, zero.output] if guard.keep else [zero.output, one.output])], name=f"{name}/kept")
            rows = build(Reduce, [kept.output], operation="max", axes=[-1], keep_dims=True, name=f"{name}/any_kept")
            zeroed = build(Eltwise, [result, rows.output], operation="mul", name=f"{name}/masked_rows")
            ops.extend([one, zero, kept, rows, zeroed])
            result = zeroed.output
        if chain.uniform_rows:
            # rows every key of which a term masks: the mask's row maximum is below 0 (kept
            # keys add exactly 0); there the source's softmax is uniform, y = mean of v
            assert mask is not None
            ops.extend(uniform_rows(mask, v4, result, name))
            result = ops[-1].results[0]
        if dims(result) != out:
            back = build(Reshape, [result], shape=list(out), name=f"{name}/view" if named_after else name)
            ops.append(back)
        return ops
