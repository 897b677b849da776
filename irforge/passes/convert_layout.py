"""convert-layout: an NHWC graph (transposes around every layout-sensitive op) becomes NCHW.

`nn` ops that care about the layout (Convolution, Pooling, BatchNormalization, ...) are NCHW
only, so an NHWC frontend (TensorFlow, or an ONNX model exported from NHWC code) puts a
transpose to NCHW before each and one back to NHWC after it. This pass sinks those
transposes toward the outputs through ops that do not care about the layout (element-wise
ops, with their constants permuted at compile time; Concat, SoftMax, Pad and Reduce, with
their axes remapped), composes adjacent ones and drops the identities, and folds a
transpose before a flattening FullyConnected into the order of its weights. What remains is
at most a transpose per input and per output that really is NHWC.

    %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>}      // input NHWC -> NCHW
    %c = nn.convolution %a, %w ...
    %b = nn.permute %c {order = array<i64: 0, 2, 3, 1>}      // back to NHWC
    %r = nn.relu %b
    %d = nn.permute %r {order = array<i64: 0, 3, 1, 2>}
    %e = nn.convolution %d, %w2 ...
becomes
    %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>}
    %c = nn.convolution %a, %w ...
    %r = nn.relu %c
    %e = nn.convolution %r, %w2 ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from irforge.passes.canonicalize import CanonicalizePass
from irforge.passes.patterns.compose import ComposePermutes
from irforge.passes.patterns.forwarding import ForwardNoOpInput
from irforge.passes.patterns.sink_permutes import (
    FlattenPermuteIntoWeights,
    SinkPermuteThroughAxisOps,
    SinkPermuteThroughElementwise,
)


@dataclass(frozen=True)
class ConvertLayoutPass(ModulePass):
    name = "convert-layout"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [
            ComposePermutes(),
            ForwardNoOpInput(),
            SinkPermuteThroughElementwise(),
            SinkPermuteThroughAxisOps(),
            FlattenPermuteIntoWeights(),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
        # the sunk transposes leave their originals unused
        CanonicalizePass(fold_constants=False).apply(ctx, op)
