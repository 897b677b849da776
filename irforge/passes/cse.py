"""cse: identical layers computed once (common-subexpression elimination).

Two `nn` ops are the same computation when they have the same op type, the same properties
(the layer name aside), the same operands and the same result types; all `nn` ops are pure,
so every later one is replaced by the first. Constants are the same when their element type,
shape and bytes are (weight-store entries are hashed, so two Const nodes of one weight merge
and what reads them then merges too). Ops of other dialects (extension layers) are kept.

    %a = nn.relu %x {name = "relu_a"}
    %b = nn.relu %x {name = "relu_b"}
    %y = nn.eltwise %a, %b {operation = "sum"}
becomes
    %a = nn.relu %x {name = "relu_a"}
    %y = nn.eltwise %a, %a {operation = "sum"}
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass

from irforge.backends.reference import constant_value
from irforge.dialects.nn.base import NNOp
from irforge.dialects.nn.constant import Constant
from irforge.model import store_of


def _key(op: Operation) -> tuple[object, ...] | None:
    if not isinstance(op, NNOp) or op.regions or op.successors:
        return None
    types = tuple(r.type for r in op.results)
    if isinstance(op, Constant):
        array = constant_value(op, store_of(op))
        digest = hashlib.blake2b(memoryview(array.reshape(-1).view("u1") if array.size else b"")).hexdigest()
        return ("nn.constant", types, str(array.dtype), array.shape, digest)
    props = tuple(sorted((k, v) for k, v in op.properties.items() if k != "name"))
    attrs = tuple(sorted((k, v) for k, v in op.attributes.items() if k != "name"))
    return (op.name, props, attrs, tuple(op.operands), types)


def eliminate(block: Block) -> bool:
    seen: dict[tuple[object, ...], Operation] = {}
    changed = False
    for op in list(block.ops):
        key = _key(op)
        if key is None:
            continue
        first = seen.setdefault(key, op)
        if first is op:
            continue
        for old, new in zip(op.results, first.results):
            old.replace_all_uses_with(new)
        op.detach()
        op.erase()
        changed = True
    return changed


@dataclass(frozen=True)
class CSEPass(ModulePass):
    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if isinstance(func, FuncOp):
                eliminate(func.body.block)
        for nested in op.walk():  # If/Loop bodies: blocks isolated from above, each on its own
            if isinstance(nested, NNOp):
                for region in nested.regions:
                    for block in region.blocks:
                        eliminate(block)
