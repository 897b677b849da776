"""MViT v2's decomposed relative positions, written into the scores by a ScatterND, as an
added mask, so that attention_chains.py fuses the attention around them.

timm's and torchvision's MViT v2 add the relative-position terms to a block of the scores in
place, `attn[:, :, sp:, sp:] = (attn[:, :, sp:, sp:].view(B, H, qh, qw, kh, kw) + rel_h +
rel_w).view(...)` (sp = 1 with a class token, else 0), which the exporters write as

    u = reshape(reshape(slice(s)) + t1 + t2 ...)    slice(s): the block (s itself when sp = 0)
    x = ScatterND(s, idx, u)                        idx: the block's coordinates, constant

where each t_i broadcasts to the view it is added in (terms computed from q: BoTNet- and
ViTDet-like relative logits), and slice(s) may be one Slice per axis. dynamo writes a
slice_scatter along one axis as Permute(ScatterND(Permute(s, P), rows, Permute(u, P)), P^-1),
rows [n, 1] a range along axis P[0]: read the same way. That is x = s + pad(T), T = the sum
of the terms broadcast to their view and read in u's shape, padded with zeros to s outside
the block (the class token's row and column; no pad without a class token): the scores plus
an additive mask, the same sums up to their order.

dynamo's block on two axes (`attn[:, :, 1:, 1:]` with a class token: timm's mvitv2_*_cls,
torchvision's MViT v2) nests two such scatters, and canonicalize composes the inner one's
closing Permute with the outer one's opening one: `SplitScatterPermute` splits that Permute
back in two, so the inner scatter is read in the scores' frame (rewritten first), then the
outer one. torchvision's MViT v2 writes the block twice; the second write's data is the first
one's ScatterND read directly (canonicalize cancelled the Permutes between them), read again
through the first one's closing Permute; its update is the block through views only (no
term): a write of the block onto itself, the scores as they are.

    %r = nn.reshape %s {shape = [B, H, qh, qw, kh, kw]}
    %a = nn.eltwise %r, %rel_h {operation = "sum"}
    %b = nn.eltwise %a, %rel_w {operation = "sum"}
    %u = nn.reshape %b {shape = [B, H, L, S]}
    %x = nn.scatter_nd %s, %idx, %u
becomes
    %t = (rel_h + rel_w broadcast to [B, H, qh, qw, kh, kw], reshaped to [B, H, L, S])
    %x = nn.eltwise %s, %t {operation = "sum"}

Only when every step is read once, the ScatterND has no reduction, the slices have unit
steps and idx is exactly the block's coordinates in order; otherwise nothing changes.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irforge.backends.reference import constant_value
from irforge.dialects.nn.base import build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Eltwise
from irforge.dialects.nn.indexing import ScatterND
from irforge.dialects.nn.shape import Pad, Permute, Reshape, Slice
from irforge.model import store_of
from irforge.passes.patterns.affine import layer_name
from irforge.passes.patterns.dag import Match
from irforge.passes.patterns.subgraphs.attention_chains import dims
from irforge.passes.patterns.subgraphs.attention_sizes import fits
from irforge.passes.patterns.subgraphs.base import replace_match
from irforge.weights.dtypes import from_xdsl

MAX_STEPS = 8
"""Reshapes and added terms between the block of the scores and the ScatterND's updates."""


def block_of(scores: SSAValue, start: SSAValue) -> tuple[tuple[slice, ...], list[Slice]] | None:
    """The block of `scores` that `start` is (unit-step Slices of it, one per axis or one for
    several, as the exporters write `attn[:, :, 1:, 1:]`; or scores itself), and those
    Slices; None otherwise."""
    cuts: list[Slice] = []
    x = start
    while x is not scores:
        owner = x.owner
        if not isinstance(owner, Slice) or not x.has_one_use() or len(cuts) == len(dims(scores)):
            return None
        cuts.append(owner)
        x = owner.input
    region = [slice(0, d) for d in dims(scores)]
    for cut in reversed(cuts):  # outermost first: each slice's bounds are in its input's box
        bounds = cut.bounds(dims(cut.input))
        if any(step != 1 for _, _, step in bounds):
            return None
        region = [slice(r.start + begin, r.start + end) for r, (begin, end, _) in zip(region, bounds)]
    return tuple(region), cuts


def block_indices(region: tuple[slice, ...]) -> np.ndarray:
    """The coordinates of a box of a tensor, in row-major order, as ScatterND indices."""
    grids = np.meshgrid(*(np.arange(r.start, r.stop) for r in region), indexing="ij")
    return np.stack(grids, axis=-1)


def box_of(indices: np.ndarray) -> tuple[slice, ...] | None:
    """The box whose coordinates, in row-major order, `indices` ([.., rank]) is; None if it is
    not one."""
    if indices.ndim < 2 or indices.size == 0:
        return None
    flat = indices.reshape(-1, indices.shape[-1])
    region = tuple(slice(int(lo), int(hi) + 1) for lo, hi in zip(flat.min(axis=0), flat.max(axis=0)))
    wanted = block_indices(region)
    return region if wanted.shape == indices.shape and np.array_equal(wanted, indices) else None


def inverse(order: list[int]) -> list[int]:
    return [order.index(i) for i in range(len(order))]


def scattered(op: Operation) -> tuple[SSAValue, SSAValue, tuple[slice, ...], list[Operation]] | None:
    """(data, updates, the box of data the updates replace, the ops that do it) of a copy of
    data with a box replaced: ScatterND(data, box coordinates, updates) (TorchScript), or
    dynamo's slice_scatter along one axis, Permute(ScatterND(Permute(data, P), rows [n, 1],
    Permute(updates, P)), P^-1) with rows a range along axis P[0]."""
    if isinstance(op, ScatterND):
        data, indices, updates = op.operands
        if op.str_prop("reduction") != "none" or not isinstance(indices.owner, Constant):
            return None
        region = box_of(constant_value(indices.owner, store_of(indices.owner)))
        if region is None or len(region) != len(dims(data)) or dims(updates) != tuple(r.stop - r.start for r in region):
            return None
        return data, updates, region, [op]
    if not isinstance(op, Permute) or not isinstance(op.input.owner, ScatterND):
        return None
    scatter = op.input.owner
    data_t, indices, updates_t = scatter.operands
    order = list(op.ints("order"))
    into, back = data_t.owner, updates_t.owner
    if (scatter.str_prop("reduction") != "none" or not op.input.has_one_use() or not isinstance(indices.owner, Constant)
            or not all(isinstance(p, Permute) and p.results[0].has_one_use() and list(p.ints("order")) == inverse(order)
                       for p in (into, back))):
        return None
    rows = constant_value(indices.owner, store_of(indices.owner))
    if rows.ndim != 2 or rows.shape[1] != 1 or rows.shape[0] == 0:
        return None
    start, n = int(rows[0, 0]), rows.shape[0]
    if not np.array_equal(rows[:, 0], np.arange(start, start + n)):
        return None
    data, updates = into.operands[0], back.operands[0]  # type: ignore[union-attr]
    axis = inverse(order)[0]
    region = tuple(slice(start, start + n) if a == axis else slice(0, d) for a, d in enumerate(dims(data)))
    if dims(updates) != tuple(r.stop - r.start for r in region):
        return None
    return data, updates, region, [op, scatter, into, back]  # type: ignore[list-item]


class SplitScatterPermute(RewritePattern):
    """Dynamo's nested slice_scatters (a block on two axes) after canonicalize: the outer
    ScatterND(Permute(d, P), rows, Permute(y, Q)) reads the inner one's result through one
    Permute composed of the inner's closing and the outer's opening ones. Split it back into
    Permute(Permute(y, R), P) (R = Q read through P^-1: the same elements), so that
    Permute(y, R) is the inner slice_scatter in d's frame, which `scattered` reads. A later
    canonicalize merges the two again where nothing was fused."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ScatterND) or not isinstance(op.indices.owner, Constant) or len(dims(op.indices)) != 2:
            return
        if isinstance(op.data.owner, ScatterND):
            self.split_data(op, rewriter)
            return
        into, back = op.data.owner, op.updates.owner
        if not (isinstance(into, Permute) and isinstance(back, Permute) and op.updates.has_one_use()):
            return
        order, composed = list(into.ints("order")), list(back.ints("order"))
        if composed == order or not isinstance(back.operands[0].owner, (ScatterND, Permute)):
            return  # already split, or not a scatter's result (nothing to read through)
        undo = inverse(order)
        frame = [composed[undo[j]] for j in range(len(order))]  # Permute(Permute(y, frame), order) == Permute(y, composed)
        name = layer_name(back, "permute")
        first = build(Permute, [back.operands[0]], order=frame, name=f"{name}/frame")
        second = build(Permute, [first.output], order=order, name=name)
        rewriter.replace(back, [first, second], [second.output])


    @staticmethod
    def split_data(op: ScatterND, rewriter: PatternRewriter) -> None:
        """Two writes in a row (torchvision's MViT v2): the second scatter's data is the first
        one's result read directly, where canonicalize cancelled the first one's closing
        Permute against the second one's opening one. Read it through that closing Permute
        again, C = Permute(first, P^-1), as Permute(C, P): the first write is then a
        slice_scatter with one user, and the second one reads its data through a Permute."""
        first = op.data
        closing = [u.operation for u in first.uses if isinstance(u.operation, Permute)]
        if len(closing) != 1 or sum(1 for _ in first.uses) != 2:
            return
        (close,) = closing
        earlier = op.prev_op
        while earlier is not None and earlier is not close:
            earlier = earlier.prev_op
        if earlier is None:
            return  # the closing Permute comes after this scatter: it cannot be read here
        name = layer_name(op, "scatter_nd")
        reopen = build(Permute, [close.results[0]], order=inverse(list(close.ints("order"))), name=f"{name}/data")
        again = build(ScatterND, [reopen.output, op.indices, op.updates], reduction=op.str_prop("reduction"), name=name)
        rewriter.replace(op, [reopen, again], [again.results[0]])


class ScatteredRelativePositions(RewritePattern):
    """ScatterND(s, idx, reshape(block(s) + terms)) -> s + mask: see the module docstring."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        found_scatter = scattered(op) if isinstance(op, (ScatterND, Permute)) else None
        if found_scatter is None:
            return
        scores, updates, region, scatter_ops = found_scatter
        if from_xdsl(scores.type.element_type).kind != "f":  # type: ignore[attr-defined]
            return
        if any(d < 0 for d in dims(scores)) or sum(1 for _ in scores.uses) != 2:
            return  # the data is read here and by the block's slice / view alone
        terms: list[tuple[SSAValue, tuple[int, ...]]] = []
        walked: list[Operation] = []
        x = updates
        for _ in range(MAX_STEPS):
            owner = x.owner
            if x is scores or isinstance(owner, Slice):
                break  # the block's first slice
            if not x.has_one_use() or not isinstance(owner, (Reshape, Eltwise)):
                return
            if isinstance(owner, Eltwise):
                if owner.str_prop("operation") != "sum" or len(owner.operands) != 2:
                    return
                a, b = owner.operands
                side = a if self.leads_to(a, scores) else b if self.leads_to(b, scores) else None
                if side is None:
                    return
                term = b if side is a else a
                if not fits(dims(term), dims(x)):
                    return
                terms.append((term, dims(x)))
                x = side
            else:
                x = owner.operands[0]
            walked.append(owner)
        else:
            return
        if not terms and any(isinstance(w, Eltwise) for w in walked):
            return
        found = block_of(scores, x)
        if found is None:
            return
        block, cuts = found
        if block != region:
            return  # the updates were read from another box than they are written to
        name = layer_name(op, "scatter_nd")
        new_ops = self.build(scores, terms, dims(updates), region, name) if terms else []
        matched = (*scatter_ops, *walked, *cuts)
        if not terms:
            # the block written back onto itself (torchvision's second write, through views
            # only): the scores as they are
            rewriter.replace(op, [], [scores])
            pending = list(matched[1:])
            while pending:
                dead = [o for o in pending if all(not r.uses for r in o.results)]
                if not dead:
                    break
                for o in dead:
                    pending.remove(o)
                    rewriter.erase(o)
            return
        replace_match(rewriter, Match(op, {}, {}, {}, matched), new_ops)

    @staticmethod
    def leads_to(value: SSAValue, scores: SSAValue) -> bool:
        """The value comes from the scores' block through reshapes and sums (read once)."""
        for _ in range(MAX_STEPS):
            if value is scores:
                return True
            owner = value.owner
            if isinstance(owner, Slice):
                value = owner.input  # (a block of the scores: one slice per axis, or one for all)
                continue
            if not isinstance(owner, (Reshape, Eltwise)) or not value.has_one_use():
                return False
            candidates = [v for v in owner.operands if not isinstance(v.owner, Constant)]
            if not candidates:
                return False
            value = candidates[0]
        return False

    @staticmethod
    def build(scores: SSAValue, terms: list[tuple[SSAValue, tuple[int, ...]]], shape: tuple[int, ...],
              region: tuple[slice, ...], name: str) -> list[Operation]:
        dtype = from_xdsl(scores.type.element_type)  # type: ignore[attr-defined]
        ops: list[Operation] = []
        total: SSAValue | None = None
        groups: list[tuple[tuple[int, ...], list[SSAValue]]] = []  # consecutive terms of one view
        for term, view in reversed(terms):
            if groups and groups[-1][0] == view:
                groups[-1][1].append(term)
            else:
                groups.append((view, [term]))
        for index, (view, values) in enumerate(groups):
            value = values[0]
            for other in values[1:]:  # rel_h + rel_w broadcast against each other in their view
                both = build(Eltwise, [value, other], operation="sum", name=f"{name}/term{index}_sum")
                ops.append(both)
                value = both.output
            if dims(value) != view:  # broadcast to the view they were added in
                zeros = Constant.inline(np.zeros(view, dtype))
                full = build(Eltwise, [value, zeros.output], operation="sum", name=f"{name}/term{index}_grid")
                ops.extend([zeros, full])
                value = full.output
            if view != shape:  # read in u's shape (the same row-major elements)
                view_op = build(Reshape, [value], shape=list(shape), name=f"{name}/term{index}_view")
                ops.append(view_op)
                value = view_op.output
            if total is None:
                total = value
            else:
                both = build(Eltwise, [total, value], operation="sum", name=f"{name}/terms{index}")
                ops.append(both)
                total = both.output
        assert total is not None
        if shape != dims(scores):  # zero outside the block (the class token's row and column)
            placed = build(Pad, [total], pads_begin=[r.start for r in region],
                           pads_end=[d - r.stop for d, r in zip(dims(scores), region)], name=f"{name}/mask")
            ops.append(placed)
            total = placed.output
        ops.append(build(Eltwise, [scores, total], operation="sum", name=name))
        return ops
