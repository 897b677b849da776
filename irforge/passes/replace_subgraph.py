"""replace-subgraph: the Model Optimizer's sub-graph replacements, built in and from extensions.

Three kinds, as in the guide's "Sub-graph Replacement in the Model Optimizer":

1. one op -> a sub-graph (squared_diff -> sub, mul);
2. a pattern of ops and edges -> a new op or sub-graph: the exporters' decomposed MVN /
   LayerNorm -> nn.mvn, Gelu (erf and tanh forms), Swish/SiLU, HardSwish and HardSigmoid ->
   nn.activation, attention (MatMul(q, k^T) -> scale -> [mask] -> Softmax -> MatMul(v)) ->
   nn.scaled_dot_product_attention (irforge/passes/patterns/subgraphs/). Patterns are xDSL RewritePatterns,
   usually `DagReplacement`s over the DAG pattern language of irforge/passes/patterns/dag.py;
   an extension adds its own with `register_replacement`, and they are tried before the
   built-in ones. The walk goes from the last op to the first, so a pattern's root is met
   before its inner ops and the largest pattern wins;
3. `replace-subgraph{config="x.json"}` (ir-convert `--transformations_config x.json`): the
   JSON's "points" replacements, everything between start and end layers becomes one op
   (irforge/passes/patterns/subgraphs/points.py). They run first, while the layers still
   have the names the config gives.

    %s = nn.activation %x {kind = "sigmoid"}
    %y = nn.eltwise %x, %s {operation = "mul", name = "silu"}
becomes
    %y = nn.activation %x {kind = "swish", name = "silu"}

`replace-subgraph{patterns=false config="x.json"}` applies the config only.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker, RewritePattern

from irforge.passes.patterns.subgraphs import builtin_replacements
from irforge.passes.patterns.subgraphs.points import load_config, replace_points

_registered: list[RewritePattern] = []


def register_replacement(pattern: RewritePattern | type[RewritePattern]) -> RewritePattern | type[RewritePattern]:
    """Add a replacement to every later run of replace-subgraph; usable as a class decorator
    (the class is instantiated without arguments)."""
    _registered.append(pattern() if isinstance(pattern, type) else pattern)
    return pattern


def replacements() -> list[RewritePattern]:
    """The extensions' replacements, then the built-in ones."""
    return [*_registered, *builtin_replacements()]


@dataclass(frozen=True)
class ReplaceSubgraphPass(ModulePass):
    name = "replace-subgraph"

    config: str = ""
    """A transformations config (JSON) whose points replacements to apply first."""
    patterns: bool = True
    """Apply the pattern replacements (built-in and registered)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.config:
            for replacement in load_config(self.config):
                replace_points(ctx, op, replacement)
        if self.patterns:
            walker = PatternRewriteWalker(GreedyRewritePatternApplier(replacements()), walk_reverse=True)
            walker.rewrite_module(op)
