"""Attention probabilities shared by several value products: one score chain per product, so
each fuses into its own `nn.scaled_dot_product_attention`.

Differential attention (DiffLlama: `softmax(Q K^T) V1` and `softmax(Q K^T) V2`, two SDPA calls
on the same q and k) exports two identical score chains; the exporter's or our CSE merges
them, and the one softmax then feeds two MatMuls. The attention patterns fuse only a
self-contained chain (its interior used by nothing else), so neither product fused and the
model ran its decomposed attention. This pattern, rooted at a value product whose
probabilities other value products also read, gives it a copy of the chain the attention
pattern would absorb (checked by that pattern's own `accept`); the copy fuses with this
product, and the original with the last one left.

    %p = nn.softmax %s {axis = -1}          (and the scores, scale and mask before it)
    %y1 = nn.matmul %p, %v1
    %y2 = nn.matmul %p, %v2
becomes
    %y1 = nn.scaled_dot_product_attention %q, %k, %v1, %mask
    %y2 = nn.scaled_dot_product_attention %q, %k, %v2, %mask
"""

from __future__ import annotations

from functools import cached_property

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint

from irforge.dialects.nn.linear import MatMul
from irforge.passes.patterns.dag import Match, _match, _State
from irforge.passes.patterns.subgraphs.base import DagReplacement


def shared_products(probs: SSAValue) -> bool:
    """Whether every user of `probs` is a MatMul taking it as its left operand (and there are
    several)."""
    uses = list(probs.uses)
    return len(uses) > 1 and all(isinstance(u.operation, MatMul) and u.index == 0 for u in uses)


class SharedAttentionProbs(RewritePattern):
    @cached_property
    def fusions(self) -> tuple[DagReplacement, ...]:
        from irforge.passes.patterns.subgraphs.attention import ScaledDotProductAttentionPattern
        from irforge.passes.patterns.subgraphs.attention_exports import ExportedAttention

        return (ScaledDotProductAttentionPattern(), ExportedAttention())

    def chain(self, root: MatMul) -> list[Operation] | None:
        """The ops (root excluded) an attention pattern would fuse with `root` if its
        probabilities were not shared, or None."""
        probs = root.operands[0].owner
        for fusion in self.fusions:
            for state in _match(fusion.pattern, root.results[0], _State()):
                matched = state.matched
                if not matched or matched[0] is not root or probs not in matched:
                    continue
                inside = set(matched)
                # every interior use stays inside, but the probabilities' other value products
                if not all(use.operation in inside for op in matched[1:] if op is not probs for r in op.results for use in r.uses):
                    continue
                if fusion.accept(Match(root, state.values, state.ops, state.constants, matched)):
                    return list(matched[1:])
        return None

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MatMul) or not shared_products(op.operands[0]):
            return
        chain = self.chain(op)
        if chain is None:
            return
        block = op.parent_block()
        assert block is not None
        order = {o: i for i, o in enumerate(block.ops)}
        mapping: dict[SSAValue, SSAValue] = {}
        copies: list[Operation] = []
        for original in sorted(chain, key=order.__getitem__):  # operands before their users
            copy = original.clone(value_mapper=mapping)
            mapping.update(zip(original.results, copy.results))
            copies.append(copy)
        rewriter.insert(copies, InsertPoint.before(op))
        op.operands = [mapping[op.operands[0]], *op.operands[1:]]
        rewriter.handle_operation_modification(op)
