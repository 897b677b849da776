"""Sub-graph replacements as xDSL RewritePatterns: a DAG pattern and what replaces its match.

A `DagReplacement` names a `pattern` (irforge/passes/patterns/dag.py), may refuse a match in
`accept` (axes that differ, a constant that is not a scalar...), and `build`s the new ops with
the value that replaces the root's result. The root's layer name goes to that value's op, so
`--output` and the IR keep naming the layer; the matched ops become dead and are erased, with
the constants only they read.

    class Swish(DagReplacement):
        pattern = P("eltwise", operation="mul", operands=[Any("x"), P("activation", kind="sigmoid", operands=[Same("x")])])

        def build(self, m: Match, name: str) -> list[Operation]:
            return [build(Activation, [m["x"]], kind="swish", name=name)]
"""

from __future__ import annotations

from functools import cached_property
from collections.abc import Sequence
from typing import ClassVar

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irforge.dialects.nn.constant import Constant
from irforge.passes.patterns.affine import layer_name
from irforge.passes.patterns.dag import Match, OneOf, P, match, root_names


class DagReplacement(RewritePattern):
    """Replaces every self-contained match of `pattern` by the ops of `build`."""

    pattern: ClassVar[P | OneOf]

    def accept(self, m: Match) -> bool:
        """Checks beyond the pattern's own (by default none)."""
        return True

    def build(self, m: Match, name: str) -> list[Operation]:
        """The new ops, in order; the last one's result replaces the root's."""
        raise NotImplementedError

    @cached_property
    def roots(self) -> frozenset[str] | None:
        return root_names(self.pattern)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if self.roots is not None and op.name not in self.roots:
            return  # what most ops are decided by, before any matching
        found = match(self.pattern, op, self.accept)
        if found is None:
            return
        new_ops = self.build(found, layer_name(op, op.name.removeprefix("nn.")))
        if new_ops[-1].results[0].type != op.results[0].type:
            for new in reversed(new_ops):
                new.erase()  # a replacement must not change the type its users see
            return
        replace_match(rewriter, found, new_ops)


def erase_unused(rewriter: PatternRewriter, ops: Sequence[Operation]) -> None:
    """Erase `ops`, every use of which lies among them (what a replacement left dead): those
    without uses left go first."""
    pending = list(ops)
    while pending:
        dead = [op for op in pending if all(not r.uses for r in op.results)]
        assert dead, "a self-contained set of ops always has a dead op left"
        for op in dead:
            pending.remove(op)
            rewriter.erase(op)


def replace_match(rewriter: PatternRewriter, found: Match, new_ops: list[Operation]) -> None:
    """Replace the root by `new_ops` (the last one's result), then erase the dead matched ops
    and the constants they alone read."""
    operands = {v.owner for op in found.matched for v in op.operands}
    rewriter.replace(found.root, new_ops, [new_ops[-1].results[0]])
    erase_unused(rewriter, found.matched[1:])
    for owner in operands:
        if isinstance(owner, Constant) and owner.parent is not None and not owner.output.uses:
            rewriter.erase(owner)
