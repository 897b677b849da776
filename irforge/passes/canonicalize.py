"""canonicalize: local simplifications (being written)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@dataclass(frozen=True)
class CanonicalizePass(ModulePass):
    name = "canonicalize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise NotImplementedError
