"""Composition of chained data-movement ops into one.

A chain of reshape-like ops (Reshape, Flatten, Squeeze, Unsqueeze) with a static final
shape becomes one Reshape; two Permutes become one Permute with the composed order (and
then vanish if the order is the identity, by the forwarding pattern).

    %a = nn.permute %x {order = array<i64: 0, 2, 3, 1>}
    %b = nn.permute %a {order = array<i64: 0, 3, 1, 2>}
becomes
    %b = nn.permute %x {order = array<i64: 0, 1, 2, 3>}
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irforge.dialects.nn.base import DYN, NNOp, build
from irforge.dialects.nn.shape import Flatten, Permute, Reshape, Squeeze, Unsqueeze

RESHAPE_LIKE = (Reshape, Flatten, Squeeze, Unsqueeze)


def layer_of(op: NNOp) -> str | None:
    """The op's layer name, None if it has none (what `build(..., name=)` takes)."""
    return op.layer_name.data if op.layer_name is not None else None


class ComposeReshapes(RewritePattern):
    def match_and_rewrite(self, op, rewriter: PatternRewriter) -> None:  # type: ignore[no-untyped-def]
        if not isinstance(op, RESHAPE_LIKE):
            return
        inner = op.operands[0].owner
        if not isinstance(inner, RESHAPE_LIKE):
            return
        result = op.results[0].type
        assert isinstance(result, TensorType)
        shape = tuple(result.get_shape())
        if DYN in shape:
            return
        new = build(Reshape, [inner.operands[0]], shape=list(shape), name=layer_of(op))
        rewriter.replace(op, new, [new.results[0]])


class ComposePermutes(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Permute, rewriter: PatternRewriter) -> None:
        inner = op.operands[0].owner
        if not isinstance(inner, Permute):
            return
        first, second = inner.ints("order"), op.ints("order")
        order = [first[i] for i in second]
        new = build(Permute, [inner.operands[0]], order=order, name=layer_of(op))
        rewriter.replace(op, new, [new.results[0]])
