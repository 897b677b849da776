"""canonicalize: local simplifications applied to a fixed point, then dead-code elimination.

Patterns (irforge/passes/patterns): constant folding through the reference kernels, and of
prior boxes at static shapes (`fold_priors.py`);
removal of ops that forward their input (Identity/Dropout, no-op Reshape, Permute, Pad,
Slice, Tile, Concat, Split, Convert); reshape-of-reshape and permute-of-permute composition.
Ops whose results are unused are erased (all `nn` ops are pure).

    %w = nn.identity %x : (tensor<1x3xf32>) -> tensor<1x3xf32>
    %r = nn.reshape %w {shape = array<i64: 3>} : ...
    %s = nn.reshape %r {shape = array<i64: 1, 3>} : ...
    func.return %s
becomes
    func.return %x
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from irforge.passes.infer_shapes import sync_signature
from irforge.passes.patterns.compose import ComposePermutes, ComposeReshapes
from irforge.passes.patterns.fold_constants import FoldConstantOperands
from irforge.passes.patterns.fold_priors import FoldPriorBoxes
from irforge.passes.patterns.forwarding import ForwardNoOpInput
from irforge.passes.patterns.reshape_sandwich import EltwiseConstantThroughReshapes


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    name = "canonicalize"

    fold_constants: bool = True
    """Evaluate ops whose operands are all constants (`canonicalize{fold-constants=false}`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        patterns = [ForwardNoOpInput(), ComposePermutes(), ComposeReshapes(), EltwiseConstantThroughReshapes()]
        if self.fold_constants:
            patterns[:0] = [FoldConstantOperands(), FoldPriorBoxes()]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
        for func in op.walk():
            if isinstance(func, FuncOp):
                sync_signature(func)
