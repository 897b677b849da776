"""merge-pad: a Pad of the spatial axes merged into the Convolution or Pooling that reads it.

Keras writes `ZeroPadding2D` before strided convolutions and pooling (ResNetV2, MobileNet,
EfficientNet); the window op's own pads do the same job without a copy. A constant-mode Pad
that pads only the spatial axes (N and C untouched) merges into
- a Convolution when its value is 0: the pads add to the convolution's (auto_pad resolved to
  explicit first);
- an average Pooling when its value is 0, the pooling has no pads of its own and floor
  rounding: the pads become the pooling's with exclude_pad = false (the zeros count);
- a max Pooling with floor rounding when the padded value can never win: -inf, or 0 over an
  input that is never negative (a ReLU without slope, a Clamp with min >= 0).
The Pad stays for any other reader (canonicalize drops it when none is left). A Pad before a
transpose that only window ops read moves after it first.

    %p = nn.pad %x {pads_begin = array<i64: 0, 0, 1, 1>, pads_end = array<i64: 0, 0, 1, 1>}
    %y = nn.convolution %p, %w {strides = array<i64: 2, 2>, auto_pad = "valid"}
becomes
    %y = nn.convolution %x, %w {strides = array<i64: 2, 2>, pads_begin = array<i64: 1, 1>, pads_end = array<i64: 1, 1>}
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern

from irforge.dialects.nn.activation import Clamp, ReLU
from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.conv import Convolution, Pooling
from irforge.dialects.nn.shape import Pad, Permute
from irforge.passes.canonicalize import CanonicalizePass
from irforge.passes.patterns.compose import layer_of
from irforge.passes.patterns.sink_permutes import op_props


def spatial_pads(pad: Pad) -> tuple[list[int], list[int]] | None:
    """The spatial begin/end pads of a constant Pad that leaves N and C alone, else None."""
    begin, end = list(pad.ints("pads_begin")), list(pad.ints("pads_end"))
    if pad.str_prop("mode") != "constant" or len(begin) < 3 or any(begin[:2]) or any(end[:2]):
        return None
    return begin[2:], end[2:]


def never_negative(op: Operation | None) -> bool:
    if isinstance(op, ReLU):
        return op.float_prop("negative_slope") == 0.0
    if isinstance(op, Clamp):
        return op.float_prop("min") >= 0.0
    return False


class PadBeforePermuteOfWindow(RewritePattern):
    """permute(pad(x)) read by a window op -> pad'(permute(x)), so the Pad meets the window
    op (a TensorFlow model's first ZeroPadding2D pads the NHWC input before its transpose)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Permute) or not isinstance(op.operands[0].owner, Pad):
            return
        pad = op.operands[0].owner
        if not pad.output.has_one_use() or not all(isinstance(use.operation, Convolution | Pooling) for use in op.output.uses):
            return
        order = op.ints("order")
        moved = build(Permute, [pad.operands[0]], order=list(order), name=layer_of(op))
        begin, end = pad.ints("pads_begin"), pad.ints("pads_end")
        props = op_props(pad, pads_begin=[begin[k] for k in order], pads_end=[end[k] for k in order])
        new_pad = build(Pad, [moved.output], **props, name=layer_of(pad))
        rewriter.replace(op, [moved, new_pad], [new_pad.output])


class MergePadIntoWindow(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Convolution | Pooling) or not isinstance(op.operands[0].owner, Pad):
            return
        pad = op.operands[0].owner
        pads = spatial_pads(pad)
        if pads is None or DYN in op.operand_shape(0)[2:]:
            return
        value = pad.float_prop("value")
        changed: dict[str, object] = {}
        if isinstance(op, Convolution):
            if value != 0.0:
                return
            kernel = op.operand_shape(1)[2:]
        else:
            if op.bool_prop("global_pool") or op.str_prop("rounding_type") != "floor":
                return
            kernel = op.ints("kernel")
            if op.str_prop("method") == "avg":
                if value != 0.0 or any(op.explicit_pads(kernel)[0]) or any(op.explicit_pads(kernel)[1]):
                    return
                changed["exclude_pad"] = False
            elif not (value == -math.inf or (value == 0.0 and never_negative(pad.operands[0].owner))):
                return
        own_begin, own_end = op.explicit_pads(kernel)
        changed["pads_begin"] = [a + b for a, b in zip(own_begin, pads[0])]
        changed["pads_end"] = [a + b for a, b in zip(own_end, pads[1])]
        changed["auto_pad"] = "explicit"
        new = build(type(op), [pad.operands[0], *op.operands[1:]], **op_props(op, **changed), name=layer_of(op))
        if new.results[0].type != op.results[0].type:
            new.erase()
            return
        rewriter.replace(op, new, new.results)


@dataclass(frozen=True)
class MergePadPass(ModulePass):
    name = "merge-pad"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([PadBeforePermuteOfWindow(), MergePadIntoWindow()])).rewrite_module(op)
        CanonicalizePass(fold_constants=False).apply(ctx, op)
