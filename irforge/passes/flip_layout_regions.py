"""flip-layout-regions: a region of layout-agnostic ops moved to the other layout when that
leaves fewer transposes.

convert-layout sinks transposes toward the outputs, so a chain of element-wise ops stays in
the layout its first input had. ConvNeXt's residual stream is such a chain: NHWC adds and
LayerNorms, with a transpose to NCHW before every depthwise convolution, where computing the
stream in NCHW would need a transpose after each block's last MatMul instead, and none
around the downsampling convolutions. For each connected region of rank-4 element-wise ops,
activations and MVNs next to a transpose, this pass tries the other layout on a copy: every
input x becomes permute(permute(x, p), inverse(p)), convert-layout sinks the inverse through
the region, and what meets a transpose cancels. The real module changes only when the copy
has fewer transposes.

    %s = nn.permute %c {order = [0, 2, 3, 1]}        // NCHW conv output -> NHWC stream
    %a = nn.eltwise %f, %s {operation = "sum"}       // %f: an NHWC MatMul output
    %t = nn.permute %a {order = [0, 3, 1, 2]}        // back to NCHW for the next conv
becomes
    %g = nn.permute %f {order = [0, 3, 1, 2]}
    %a = nn.eltwise %g, %c {operation = "sum"}       // the stream in NCHW: one transpose, not two
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern

from irforge.dialects.nn.base import build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.normalization import MVN
from irforge.dialects.nn.shape import Permute
from irforge.model import attach_store, store_of
from irforge.passes.convert_layout import ConvertLayoutPass
from irforge.passes.patterns.compose import layer_of
from irforge.passes.patterns.sink_permutes import ELEMENTWISE, UNARY, SinkPermuteThroughElementwise, inverse

AGNOSTIC = (*UNARY, *ELEMENTWISE, MVN)
ORDERS = ([0, 3, 1, 2], [0, 2, 3, 1])
MARK = "irforge.flip-layout-regions"
"""The layer name of the flip's own transposes while they sink."""
MAX_TRIALS = 256
"""Copies converted per run at most, so that a graph with thousands of transposed regions
keeps a bounded conversion time (the regions past the budget stay as convert-layout left them)."""


def rank4(op: Operation) -> bool:
    return all(isinstance(r.type, TensorType) and len(r.type.get_shape()) == 4 for r in op.results)


def regions(module: ModuleOp) -> list[list[int]]:
    """Connected regions of rank-4 layout-agnostic ops next to a transpose, as indices into
    `list(module.walk())`."""
    ops = list(module.walk())
    index = {id(op): k for k, op in enumerate(ops)}
    members = [k for k, op in enumerate(ops) if isinstance(op, AGNOSTIC) and rank4(op)]
    parent = {k: k for k in members}

    def find(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for k in members:
        for operand in ops[k].operands:
            j = index.get(id(operand.owner))
            if j in parent:
                parent[find(j)] = find(k)
    grouped: dict[int, list[int]] = {}
    for k in members:
        grouped.setdefault(find(k), []).append(k)
    return [g for g in grouped.values() if any(touches_permute(ops[k]) for k in g)]


def touches_permute(op: Operation) -> bool:
    return any(isinstance(v.owner, Permute) for v in op.operands) or any(isinstance(u.operation, Permute) for r in op.results for u in r.uses)


def permutes(module: ModuleOp) -> int:
    return sum(isinstance(op, Permute) for op in module.walk())


def flip(ctx: Context, module: ModuleOp, region: list[int], order: list[int]) -> None:
    """Feed the region's outside inputs through permute(permute(x, order), inverse) and let
    convert-layout sink the inverse through it."""
    ops = list(module.walk())
    inside = {id(ops[k]) for k in region}
    for k in region:
        op = ops[k]
        for i, operand in enumerate(op.operands):
            owner = operand.owner
            if id(owner) in inside or isinstance(owner, Constant) or not isinstance(operand.type, TensorType) or len(operand.type.get_shape()) != 4:
                continue
            there = build(Permute, [operand], order=order)
            back = build(Permute, [there.output], order=inverse(order), name=MARK)
            op.parent_block().insert_ops_before([there, back], op)  # type: ignore[union-attr]
            op.operands[i] = back.output
    # sink the marked inverses alone first: convert-layout would compose each pair at once,
    # or sink the new transposes back down
    PatternRewriteWalker(GreedyRewritePatternApplier([SinkMarkedThroughElementwise(), SinkMarkedThroughMVN()])).rewrite_module(module)
    for permute in [o for o in module.walk() if isinstance(o, Permute) and layer_of(o) == MARK]:
        permute.layer_name = None
    ConvertLayoutPass().apply(ctx, module)


def marked(value: SSAValue) -> bool:
    return isinstance(value.owner, Permute) and layer_of(value.owner) == MARK


class SinkMarkedThroughElementwise(SinkPermuteThroughElementwise):
    """Sinking of the flip's own transposes only (the outer one keeps the mark)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        permuted = [v for v in op.operands if isinstance(v.owner, Permute)]
        if permuted and all(marked(v) for v in permuted):
            super().match_and_rewrite(op, rewriter)


class SinkMarkedThroughMVN(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MVN) or not marked(op.operands[0]):
            return
        permute = op.operands[0].owner
        assert isinstance(permute, Permute)
        order = permute.ints("order")
        props = {k: op.property_value(k) for k in ("normalize_variance", "eps", "eps_mode")}
        inner = build(MVN, [permute.operands[0]], axes=sorted(order[a] for a in op.reduced_axes()), **props, name=layer_of(op))
        outer = build(Permute, [inner.results[0]], order=list(order), name=MARK)
        rewriter.replace(op, [inner, outer], [outer.output])


@dataclass(frozen=True)
class FlipLayoutRegionsPass(ModulePass):
    name = "flip-layout-regions"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tried: set[tuple[int, ...]] = set()
        budget = MAX_TRIALS
        while budget > 0:
            flipped = False
            for region in regions(op):
                if tuple(region) in tried or budget <= 0:
                    continue
                tried.add(tuple(region))
                before = permutes(op)
                for order in ORDERS:
                    budget -= 1
                    trial = op.clone()
                    # the copy reads the real weights (a constant operand is permuted at
                    # compile time) but its own additions stay out of the real store
                    attach_store(trial, store_of(op).branch())
                    flip(ctx, trial, region, order)
                    if permutes(trial) < before:
                        flip(ctx, op, region, order)
                        tried.clear()  # indices moved: every region is new again
                        flipped = True
                        break
                if flipped:
                    break
            if not flipped:
                return
