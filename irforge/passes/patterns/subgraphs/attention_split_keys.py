"""Attention over keys given in parts, written back with the keys and values joined, so that
`attention_chains.py` fuses it into one `nn.scaled_dot_product_attention`.

PEGASUS-X's local attention (block-local tokens attend to the global tokens and to their own
block) computes the scores of each key set with its own product, joins them along the keys
axis, masks and normalises them together, then splits the probabilities again, one value
product per key set, and adds the two results:

    s_i = view_i(q_i @ k_i^T)          (q_i views of one q; k_i broadcast over q's blocks)
    p   = softmax(chain(concat(s_1, .., s_n, last axis)))   (any attention_chains chain)
    y   = view_1(view(p[.., S_1]) @ v_1) + .. + view_n(view(p[.., S_n]) @ v_n)

where the slices S_i of p are the concat's parts in order. That is softmax(chain(q @ k^T)) @ v
with k = concat(k_1, .., k_n) and v = concat(v_1, .., v_n) along the keys axis (each part
broadcast over q's blocks): the same sums in another order. This pattern, rooted at the sum,
rewrites the scores to q @ k^T (transpose_b) and the value products to p @ v; the chain
pattern then reads one attention. Each view_i must only split or merge the rows ([P', R'] of
the product <-> [P, R] of the join, P' a prefix of P and R' = prod(P[len(P'):]) * R: the
same rows in the same order); a k_i or v_i without those blocks is broadcast over them.

    %s1 = nn.matmul %q, %kg {transpose_b}          [B, H, N*K, G]   (global keys)
    %r1 = nn.reshape %s1                           [B, H, N, K, G]
    %s2 = nn.matmul %qb, %kb {transpose_b}         [B, H, N, K, K]  (%qb = %q in blocks)
    %c  = nn.concat %r1, %s2 {axis = -1}           (+ mask, softmax: %p)
    %y  = nn.eltwise view(view(slice(%p, :G)) @ %vg), slice(%p, G:) @ %vb {sum}
becomes
    %k  = nn.concat tile(reshape(%kg, [B, H, 1, G, E])), %kb {axis = -2}   (v alike)
    %c  = nn.matmul %qb, %k {transpose_b}          (+ the same mask, softmax: %p)
    %y  = nn.matmul %p, %v
"""

from __future__ import annotations

import math

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irforge.dialects.nn.base import build
from irforge.dialects.nn.elementwise import Eltwise
from irforge.dialects.nn.linear import MatMul
from irforge.dialects.nn.normalization import SoftMax
from irforge.dialects.nn.shape import Concat, Permute, Reshape, Slice, Tile
from irforge.passes.patterns.affine import layer_name
from irforge.passes.patterns.subgraphs.attention_chains import STEPS, dims
from irforge.passes.patterns.subgraphs.base import erase_unused

SEARCH_DEPTH = 12
"""Chain steps walked from the softmax back to the scores' concat (attention_chains' reach)."""


def through_views(value: SSAValue) -> tuple[SSAValue, list[Operation]]:
    """value with its single-use Reshapes stripped, and those Reshapes."""
    views: list[Operation] = []
    while isinstance(value.owner, Reshape) and value.has_one_use():
        views.append(value.owner)
        value = value.owner.operands[0]
    return value, views


def lifted(operand: tuple[int, ...], rows: tuple[int, ...], lead: tuple[int, ...]) -> tuple[int, ...] | None:
    """The shape of a product's right operand [*Pk, S, E] in the join's view, for a product
    whose left operand has leading dims and rows `rows` ([*P', R']) and a join of leading dims
    `lead` ([*P, R] without R): P' a prefix of P and R' = prod(P[len(P'):]) * R, the blocks
    P[len(P'):] then unit dims of the operand (broadcast over them); None otherwise."""
    prefix = rows[:-1]
    if len(operand) - 2 > len(prefix) or tuple(lead[:len(prefix)]) != prefix:
        return None
    padded = (1,) * (len(prefix) - (len(operand) - 2)) + operand[:-2]
    if any(d not in (1, n) for d, n in zip(padded, prefix)):
        return None
    return (*padded, *(1,) * (len(lead) - len(prefix)), *operand[-2:])


def in_join(value: SSAValue, shape: tuple[int, ...], lead: tuple[int, ...], name: str, ops: list[Operation]) -> SSAValue:
    """value reshaped to `shape` (its lifted view) and tiled over the join's leading dims."""
    if dims(value) != shape:
        reshape = build(Reshape, [value], shape=list(shape), name=f"{name}_view")
        ops.append(reshape)
        value = reshape.output
    repeats = [n // d for d, n in zip(shape[:-2], lead)] + [1, 1]
    if any(r != 1 for r in repeats):
        tile = build(Tile, [value], repeats=repeats, name=f"{name}_blocks")
        ops.append(tile)
        value = tile.output
    return value


def part_slices(p: SSAValue) -> list[tuple[int, int, Slice]] | None:
    """The slices of p along its last axis, (begin, end, op) in order, when they are p's only
    uses and tile that axis; None otherwise."""
    rank, size = len(dims(p)), dims(p)[-1]
    parts = []
    for use in p.uses:
        op = use.operation
        if not isinstance(op, Slice) or not op.results[0].has_one_use():
            return None
        specs = op.slice_specs()
        if set(specs) != {rank - 1} or specs[rank - 1][2] != 1:
            return None
        begin, end, _ = op.bounds(dims(p))[rank - 1]
        parts.append((begin, end, op))
    parts.sort(key=lambda part: part[0])
    ends = [0, *(end for _, end, _ in parts)]
    if len(parts) < 2 or [b for b, _, _ in parts] != ends[:-1] or ends[-1] != size:
        return None
    return parts


def scores_concat(x: SSAValue) -> Concat | None:
    """The concat (last axis, used once) the softmax input reaches through single-use chain
    steps (attention_chains' STEPS), None if there is none or more than one."""
    found: list[Concat] = []
    pending = [(x, 0)]
    while pending:
        value, depth = pending.pop()
        owner = value.owner
        if not isinstance(owner, Operation) or not value.has_one_use() or depth > SEARCH_DEPTH:
            continue
        if isinstance(owner, Concat):
            if owner.int_prop("axis") in (-1, len(dims(value)) - 1):
                found.append(owner)
        elif owner.name in STEPS:
            pending.extend((v, depth + 1) for v in owner.operands)
    return found[0] if len(found) == 1 else None


class SplitKeyAttention(RewritePattern):
    """See the module docstring."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Eltwise) or op.str_prop("operation") != "sum" or len(op.operands) != 2:
            return
        products = []
        for term in op.operands:
            value, views = through_views(term)
            if not isinstance(value.owner, MatMul) or not value.has_one_use() or dims(term) != dims(op.results[0]):
                return
            product = value.owner
            if product.bool_prop("transpose_a") or product.bool_prop("transpose_b") or dims(value)[-1] != dims(term)[-1]:
                return
            left, left_views = through_views(product.operands[0])
            if not isinstance(left.owner, Slice) or dims(left)[-1] != dims(product.operands[0])[-1]:
                return  # (the views keep the last axis: the same rows in the same order)
            products.append((product, left.owner, [*views, *left_views]))
        p = products[0][1].operands[0]
        if not isinstance(p.owner, SoftMax) or p.owner.bool_prop("log") or p.owner.softmax_axis() != len(dims(p)) - 1:
            return
        parts = part_slices(p)
        concat = scores_concat(p.owner.operands[0])
        if parts is None or concat is None or dims(concat.results[0]) != dims(p) or len(concat.operands) != len(parts):
            return
        if sorted(id(s) for _, _, s in parts) != sorted(id(s) for _, s, _ in products):
            return
        widths = [dims(s)[-1] for s in concat.operands]
        if widths != [end - begin for begin, end, _ in parts]:
            return
        rewrite = self.rewrite(op, concat, parts, {id(s): (m, views) for m, s, views in products})
        if rewrite is None:
            return
        scores_ops, values_ops, dead = rewrite
        rewriter.replace(concat, scores_ops, [scores_ops[-1].results[0]])
        rewriter.replace(op, values_ops, [values_ops[-1].results[0]])
        erase_unused(rewriter, dead)  # the parts' products, views and slices, now unused

    def rewrite(self, op: Eltwise, concat: Concat, parts: list[tuple[int, int, Slice]],
                by_slice: dict[int, tuple[MatMul, list[Operation]]]) -> tuple[list[Operation], list[Operation], list[Operation]] | None:
        """(ops making the joined scores, ops making y, the ops left dead), None if a part is
        not one of the module's forms."""
        joined = dims(concat.results[0])
        lead = joined[:-2]
        name = layer_name(op, "sum")
        scores_ops: list[Operation] = []
        keys, sources, dead_scores = [], [], []
        width = 0  # q's row width, the same for every part
        for index, part in enumerate(concat.operands):
            value, views = through_views(part)
            product = value.owner
            if not isinstance(product, MatMul) or not value.has_one_use() or product.bool_prop("transpose_a"):
                return None
            q, k = product.operands
            width = width or dims(q)[-1]
            if dims(value)[-1] != dims(part)[-1] or dims(q)[-1] != width:
                return self.abandon(scores_ops)  # (rows kept by the views; one query width)
            if not product.bool_prop("transpose_b"):
                rank = len(dims(k))
                k = build(Permute, [k], order=[*range(rank - 2), rank - 1, rank - 2], name=f"{name}/key{index}_t").output
                scores_ops.append(k.owner)  # type: ignore[arg-type]
            shape = lifted(dims(k), dims(q)[:-1], lead)
            if shape is None or dims(q)[-1] != dims(k)[-1]:
                return self.abandon(scores_ops)
            keys.append(in_join(k, shape, lead, f"{name}/key{index}", scores_ops))
            sources.append(through_views(q)[0])
            dead_scores += [*views, product]
        query = sources[0]
        rows = (*lead, joined[-2], dims(query)[-1])
        if any(s is not query for s in sources) or math.prod(dims(query)) != math.prod(rows):
            return self.abandon(scores_ops)
        if dims(query) != rows:
            reshape = build(Reshape, [query], shape=list(rows), name=f"{name}/query_view")
            scores_ops.append(reshape)
            query = reshape.output
        key = build(Concat, keys, axis=-2, name=f"{name}/keys")
        scores = build(MatMul, [query, key.output], transpose_b=True, name=f"{name}/scores")
        scores_ops += [key, scores]
        values_ops: list[Operation] = []
        values, dead_values = [], []
        for index, (_, _, piece) in enumerate(parts):
            product, views = by_slice[id(piece)]
            v = product.operands[1]
            shape = lifted(dims(v), dims(product.operands[0])[:-1], lead)
            if shape is None:
                return self.abandon(scores_ops + values_ops)
            values.append(in_join(v, shape, lead, f"{name}/value{index}", values_ops))
            dead_values += [product, *views, piece]
        value = build(Concat, values, axis=-2, name=f"{name}/values")
        probs = parts[0][2].operands[0]
        y = build(MatMul, [probs, value.output], name=f"{name}/joined")
        values_ops += [value, y]
        if dims(scores.results[0]) != joined or dims(y.results[0]) != dims(op.results[0]):
            return self.abandon(scores_ops + values_ops)
        return scores_ops, values_ops, dead_scores + dead_values

    @staticmethod
    def abandon(built: list[Operation]) -> None:
        """Nothing changes: the ops built so far (not inserted yet) are dropped."""
        for new in reversed(built):
            new.erase()
        return None
