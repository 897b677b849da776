"""Recurrent nnet3 graphs (LSTM: `IfDefined(Offset(r, -1))`), unrolled frame by frame.

A node at frame t is computed when all of its required inputs are (the input node at frames
[-L, T-1+R], the model's context without its optional inputs); `IfDefined` gives zeros for an
input that is not, which is how a recurrence starts. Every value is one row, so the graph grows
with T times the nodes of the model; frames are built in increasing order, so a forward
recurrence recurses only one frame deep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Eltwise, Slice
from irforge.errors import IrforgeError
from irforge.frontends.kaldi.component import Component
from irforge.frontends.kaldi.importer import apply, dim_of
from irforge.frontends.kaldi.nnet3_config import Desc, Node

if TYPE_CHECKING:
    from irforge.frontends.kaldi.nnet3_graph import Nnet3Graph


def component_dim(component: Component) -> int | None:
    """A component's output dim from its own fields (a recurrence needs it before its input)."""
    c = component
    if c.kind == "<LstmNonlinearityComponent>":
        return 2 * c.array("<Params>", 2).shape[1]
    if c.has("<LinearParams>"):
        return int(c.array("<LinearParams>", 2).shape[0])
    if c.kind == "<LinearComponent>":
        return int(c.array("<Params>", 2).shape[0])
    if c.has("<Sizes>"):
        return int(c.array("<Sizes>", 1).shape[0])
    for key in ("<OutputDim>", "<Dim>", "<InputDim>"):
        if c.has(key):
            return c.int(key)
    return None


class FrameGraph:
    def __init__(self, graph: Nnet3Graph) -> None:
        self.g = graph
        self.builder = graph.builder
        self.memo: dict[tuple[str, int], SSAValue | None] = {}
        self.visiting: set[tuple[str, int]] = set()
        self.dims: dict[str, int] = {}

    def name(self, user: Node, t: int, what: str) -> str:
        self.g.counter += 1
        return f"{user.name}/{what}@{t}#{self.g.counter}"

    def build(self, output: Node) -> SSAValue:
        assert output.input is not None
        rows = []
        for t in range(self.g.utterance):
            row = self.desc(output.input, t, output)
            if row is None:
                raise self.g.fail(output, f"cannot compute frame {t} from the utterance", code="E511")
            rows.append(row)
        return rows[0] if len(rows) == 1 else self.builder.add(Concat, rows, name=f"{output.name}/frames", axis=0)[0]

    def value(self, node: Node, t: int) -> SSAValue | None:
        key = (node.name, t)
        if key in self.memo:
            return self.memo[key]
        if key in self.visiting:
            raise self.g.fail(node, f"depends on itself at frame {t} (a recurrence needs IfDefined(Offset(..., -n)))", code="E511")
        available = self.g.available(self.g.shrink(node))  # from its required inputs only
        if not available.lo <= t <= available.hi:
            self.memo[key] = None
            return None
        self.visiting.add(key)
        value = self.compute(node, t)
        self.visiting.discard(key)
        self.memo[key] = value
        if value is not None:
            self.dims[node.name] = dim_of(value)
        return value

    def compute(self, node: Node, t: int) -> SSAValue | None:
        if node.kind == "input":
            if not -self.g.left <= t <= self.g.utterance - 1 + self.g.right:
                return None
            x = self.g.value(node)
            row = min(max(t, 0), int(x.type.get_shape()[0]) - 1)  # type: ignore[attr-defined]
            return self.builder.add(Slice, [x], name=self.name(node, t, "frame"), begins=[row], ends=[row + 1], axes=[0])[0]
        if node.kind == "dim-range":
            source = self.g.node(node.options.get("input-node", ""), node)
            x = self.value(source, t)
            if x is None:
                return None
            offset, dim = int(node.options["dim-offset"]), int(node.options["dim"])
            return self.builder.add(Slice, [x], name=self.name(node, t, "dims"), begins=[offset], ends=[offset + dim], axes=[1])[0]
        assert node.input is not None
        component = self.g.component(node)
        first, last = self.g.time_offsets(node)
        rows = [self.desc(node.input, u, node) for u in range(t + first, t + last + 1)]
        if any(r is None for r in rows):
            return None
        x = rows[0] if len(rows) == 1 else self.builder.add(Concat, rows, name=self.name(node, t, "window"), axis=0)[0]  # type: ignore[arg-type]
        saved = component.name
        component.name = f"{saved}@{t}"  # each frame's ops get their own names
        try:
            return apply(self.builder, component, x, valid_splice=True)  # type: ignore[arg-type]
        finally:
            component.name = saved

    def desc(self, desc: Desc, t: int, user: Node) -> SSAValue | None:
        if desc.kind == "node":
            return self.value(self.g.node(desc.name, user), t)
        if desc.kind == "Offset":
            return self.desc(desc.parts[0], t + int(desc.numbers[0]), user)
        if desc.kind == "ReplaceIndex":
            return self.desc(desc.parts[0], int(desc.numbers[0]) if desc.name == "t" else t, user)
        if desc.kind == "Const":
            return self.builder.constant(np.full((1, int(desc.numbers[1])), desc.numbers[0], np.float32), self.name(user, t, "const"))
        if desc.kind == "IfDefined":
            inner = self.desc(desc.parts[0], t, user)
            if inner is not None:
                return inner
            return self.builder.constant(np.zeros((1, self.desc_dim(desc.parts[0], user)), np.float32), self.name(user, t, "undefined"))
        # required parts first: an undefined one ends the evaluation before any optional one
        order = sorted(range(len(desc.parts)), key=lambda k: desc.parts[k].kind == "IfDefined")
        found: dict[int, SSAValue] = {}
        for k in order:
            value = self.desc(desc.parts[k], t, user)
            if value is None:
                return None
            found[k] = value
        parts = [found[k] for k in range(len(desc.parts))]
        if desc.kind == "Scale":
            scale = self.builder.constant(np.array([desc.numbers[0]], np.float32), self.name(user, t, "scale_value"))
            return self.builder.add(Eltwise, [parts[0], scale], name=self.name(user, t, "scale"), operation="mul")[0]
        if len(parts) == 1:
            return parts[0]
        if desc.kind == "Append":
            return self.builder.add(Concat, parts, name=self.name(user, t, "append"), axis=1)[0]
        total = parts[0]
        for part in parts[1:]:
            total = self.builder.add(Eltwise, [total, part], name=self.name(user, t, "sum"), operation="sum")[0]
        return total

    def desc_dim(self, desc: Desc, user: Node) -> int:
        if desc.kind == "Const":
            return int(desc.numbers[1])
        if desc.kind == "Append":
            return sum(self.desc_dim(d, user) for d in desc.parts)
        if desc.kind != "node":
            return self.desc_dim(desc.parts[0], user)
        node = self.g.node(desc.name, user)
        if node.name in self.dims:
            return self.dims[node.name]
        if node.kind in ("input", "dim-range") and "dim" in node.options:
            return int(node.options["dim"])
        dim = component_dim(self.g.component(node)) if node.kind == "component" else None
        if dim is None:
            raise IrforgeError(f"cannot tell the dim of nnet3 node '{node.name}' where it is not defined", where=self.g.path, code="E508")
        return dim
