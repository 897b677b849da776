"""Removal of ops that do not change their input: the result is replaced by the input.

Identity (and Dropout, which imports as Identity) always; Reshape/Flatten/Squeeze/Unsqueeze
when the static result type equals the input type; Permute with the identity order; Pad with
no padding; Slice that keeps every element; Tile by ones; Concat and Split of one tensor;
Convert to the same element type.

    %y = nn.permute %x {order = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    func.return %y
becomes
    func.return %x
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irforge.dialects.nn.base import DYN, NNOp
from irforge.dialects.nn.elementwise import Convert, Identity
from irforge.dialects.nn.shape import (
    Concat,
    Flatten,
    Pad,
    Permute,
    Reshape,
    Slice,
    Split,
    Squeeze,
    Tile,
    Unsqueeze,
)


def same_static_type(op: NNOp) -> bool:
    source, result = op.operands[0].type, op.results[0].type
    return (
        isinstance(result, TensorType)
        and source == result
        and DYN not in result.get_shape()
    )


FORWARDS_INPUT: dict[type[NNOp], Callable[[NNOp], bool]] = {
    Identity: lambda op: True,
    Reshape: same_static_type,
    Flatten: same_static_type,
    Squeeze: same_static_type,
    Unsqueeze: same_static_type,
    Permute: lambda op: op.ints("order") == tuple(range(len(op.ints("order")))),
    Pad: lambda op: not any(op.ints("pads_begin")) and not any(op.ints("pads_end")),
    Slice: lambda op: same_static_type(op) and all(s > 0 for s in op.ints("steps")),
    Tile: lambda op: all(r == 1 for r in op.ints("repeats")),
    Concat: lambda op: len(op.operands) == 1,
    Split: lambda op: len(op.results) == 1,
    Convert: lambda op: op.operands[0].type == op.results[0].type,
}


class ForwardNoOpInput(RewritePattern):
    """Replaces the result of an op that does not change its input by that input."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        predicate = FORWARDS_INPUT.get(type(op))  # type: ignore[arg-type]
        if predicate is None or not predicate(op):  # type: ignore[arg-type]
            return
        if op.operands[0].type != op.results[0].type:
            # a more precise declared type (static where the input is dynamic) is kept
            return
        rewriter.replace(op, [], [op.operands[0]])
