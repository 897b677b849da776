"""An nnet3 graph of config lines and components -> the `nn` ops of a whole utterance.

Each node is computed over the frames its consumers need. The model's left/right context
(L, R) is found as Kaldi's nnet3-compute finds it: the frames each node lacks at the edges
of an input of frames [-L, T-1+R] ("shrink"), from its descriptors (an Offset shifts them,
Append and Sum take the larger, IfDefined and ReplaceIndex(t) need none). The input is
read at [-L, T-1+R] with its frame indices clamped to [0, T-1] (Kaldi repeats the edge
frames), every other node over exactly the frames it can compute, and the output node at
[0, T-1]. An Offset is then a Gather of the producing node's rows; IfDefined gives zeros where
its frames are not computable, as in Kaldi. A graph with a recurrence (a node reading its own
earlier frames through IfDefined(Offset(...))) is unrolled frame by frame instead
(`nnet3_frames.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Eltwise, Gather, Slice
from irforge.errors import IrforgeError
from irforge.frontends.folding import FoldingBuilder
from irforge.frontends.kaldi.component import Component
from irforge.frontends.kaldi.importer import input_shape_for, apply, dim_of
from irforge.frontends.kaldi.nnet3 import Nnet3
from irforge.frontends.kaldi.nnet3_config import Desc, Node, parse_nodes

Shrink = tuple[int | None, int | None]
"""Frames a node lacks at the left and right edge of the padded input (None: it has all)."""


@dataclass
class Range:
    lo: int
    hi: int


class Nnet3Graph:
    def __init__(self, builder: FoldingBuilder, nnet: Nnet3, path: str, frames: int | None, shapes: dict[str, list[int]]) -> None:
        self.builder, self.nnet, self.path = builder, nnet, path
        self.where = f"{path}, nnet3 config"
        self.nodes: dict[str, Node] = {}
        for node in parse_nodes(nnet.config_lines, self.where):
            if node.name in self.nodes:
                raise self.fail(node, "repeats the name of an earlier node")
            self.nodes[node.name] = node
        self.frames, self.shapes = frames, shapes
        self.shrinks: dict[str, Shrink] = {}
        self.visiting: set[str] = set()
        self.values: dict[str, SSAValue] = {}
        self.ranges: dict[str, Range] = {}
        self.left = self.right = 0
        self.utterance = 0
        self.counter = 0

    def fail(self, node: Node, what: str, code: str = "E507", fix: str | None = None) -> IrforgeError:
        return IrforgeError(f"nnet3 node '{node.name}' (config line {node.line}) {what}", where=self.path, fix=fix, code=code)

    def node(self, name: str, user: Node) -> Node:
        if name not in self.nodes:
            raise self.fail(user, f"reads the unknown node '{name}'")
        return self.nodes[name]

    # -- context ---------------------------------------------------------------------------
    def shrink(self, node: Node) -> Shrink:
        if node.name in self.shrinks:
            return self.shrinks[node.name]
        if node.name in self.visiting:
            raise self.fail(
                node, "depends on itself at the same frame (a recurrence without IfDefined(Offset(..., -n)))", code="E511",
                fix="a recurrence must read an earlier or later frame through IfDefined, as Kaldi's LSTM layers do",
            )
        self.visiting.add(node.name)
        if node.kind == "input":
            result: Shrink = (0, 0)
        elif node.kind == "dim-range":
            result = self.shrink(self.node(node.options.get("input-node", ""), node))
        else:
            assert node.input is not None
            result = self.desc_shrink(node.input, node)
            lo, hi = self.time_offsets(node)
            result = (None if result[0] is None else result[0] - lo, None if result[1] is None else result[1] + hi)
        self.visiting.discard(node.name)
        self.shrinks[node.name] = result
        return result

    def desc_shrink(self, desc: Desc, user: Node) -> Shrink:
        if desc.kind == "node":
            return self.shrink(self.node(desc.name, user))
        if desc.kind in ("IfDefined", "Const") or (desc.kind == "ReplaceIndex" and desc.name == "t"):
            return (None, None)  # optional frames: no context, and a recurrence ends here
        inner = [self.desc_shrink(d, user) for d in desc.parts]
        if desc.kind == "Offset":
            (l, r), t = inner[0], int(desc.numbers[0])
            return (None if l is None else l - t, None if r is None else r + t)
        lefts = [s[0] for s in inner if s[0] is not None]
        rights = [s[1] for s in inner if s[1] is not None]
        return (max(lefts) if lefts else None, max(rights) if rights else None)

    def available(self, shrink: Shrink) -> Range:
        l, r = shrink
        return Range(-self.left + (0 if l is None else l), self.utterance - 1 + self.right - (0 if r is None else r))

    # -- values ----------------------------------------------------------------------------
    def value(self, node: Node) -> SSAValue:
        if node.name in self.values:
            return self.values[node.name]
        if node.kind == "input":
            try:
                dim = int(node.options["dim"]) if "dim" in node.options else self.shapes.get(node.name, [0, 0])[-1]
            except ValueError:
                raise self.fail(node, f"has a bad dim= '{node.options['dim'][:20]}'") from None
            value = self.builder.builder.input(node.name, input_shape_for(node.name, self.frames, self.shapes, dim, self.path))
        elif node.kind == "dim-range":
            value = self.dim_range(node)
        else:
            self.ranges[node.name] = self.available(self.shrink(node))
            rng = self.ranges[node.name]
            if rng.hi < rng.lo:
                raise self.fail(node, "has no computable frames", code="E508")
            assert node.input is not None
            first, last = self.time_offsets(node)
            x = self.desc(node.input, rng.lo + first, rng.hi + last, node)
            value = apply(self.builder, self.component(node), x, valid_splice=True)
        self.values[node.name] = value
        return value

    def component(self, node: Node) -> Component:
        component = self.nnet.components.get(node.options.get("component", ""))
        if component is None:
            raise self.fail(node, f"uses the unknown component '{node.options.get('component', '')}'")
        return component

    def time_offsets(self, node: Node) -> tuple[int, int]:
        """The first and last frame offsets a component reads itself (TdnnComponent's
        time-offsets, a convolution's time offsets; 0, 0 for the frame-local rest)."""
        if node.kind != "component":
            return 0, 0
        component = self.component(node)
        if component.kind == "<TdnnComponent>":
            offsets = component.array("<TimeOffsets>", 1)
        elif component.kind == "<TimeHeightConvolutionComponent>":
            offsets = component.array("<Offsets>", 2)[:, 0]
        else:
            return 0, 0
        if offsets.size == 0:
            raise component.error("has no time offsets", code="E508")
        return int(offsets.min()), int(offsets.max())

    def dim_range(self, node: Node) -> SSAValue:
        source = self.node(node.options.get("input-node", ""), node)
        x = self.value(source)
        if source.name in self.ranges:
            self.ranges[node.name] = self.ranges[source.name]
        try:
            offset, dim = int(node.options["dim-offset"]), int(node.options["dim"])
        except (KeyError, ValueError):
            raise self.fail(node, "needs integer dim-offset= and dim=") from None
        if offset < 0 or dim <= 0 or offset + dim > dim_of(x):
            raise self.fail(node, f"takes features [{offset}, {offset + dim}) of {dim_of(x)}", code="E508")
        return self.builder.add(Slice, [x], name=node.name, begins=[offset], ends=[offset + dim], axes=[1])[0]

    def frames_of(self, node: Node, lo: int, hi: int, user: Node) -> SSAValue:
        """Rows for frames lo..hi of `node`."""
        x = self.value(node)
        if node.kind == "input" or (node.kind == "dim-range" and node.name not in self.ranges):
            rows = int(x.type.get_shape()[0])  # type: ignore[attr-defined]
            indices = np.clip(np.arange(lo, hi + 1), 0, rows - 1)
        else:
            rng = self.ranges[node.name]
            if lo < rng.lo or hi > rng.hi:
                raise self.fail(user, f"needs frames {lo}..{hi} of '{node.name}', which has {rng.lo}..{rng.hi}", code="E511")
            if (lo, hi) == (rng.lo, rng.hi):
                return x
            indices = np.arange(lo - rng.lo, hi - rng.lo + 1)
        self.counter += 1
        name = f"{user.name}/{node.name}@{lo}#{self.counter}"
        return self.builder.add(Gather, [x, self.builder.constant(indices.astype(np.int32), name + "/frames")], name=name, axis=0)[0]

    def desc(self, desc: Desc, lo: int, hi: int, user: Node) -> SSAValue:
        """The descriptor's value for frames lo..hi."""
        self.counter += 1  # names unique and the same on every run (ids are not)
        name = f"{user.name}/{desc.kind}{self.counter}"
        if desc.kind == "node":
            return self.frames_of(self.node(desc.name, user), lo, hi, user)
        if desc.kind == "Offset":
            if len(desc.numbers) > 1 and desc.numbers[1] != 0:
                raise self.fail(user, "uses an Offset in x, which a whole-utterance graph (x = 0) has no frames for")
            t = int(desc.numbers[0])
            return self.desc(desc.parts[0], lo + t, hi + t, user)
        if desc.kind == "Append":
            parts = [self.desc(d, lo, hi, user) for d in desc.parts]
            return parts[0] if len(parts) == 1 else self.builder.add(Concat, parts, name=name, axis=1)[0]
        if desc.kind == "Sum":
            total = self.desc(desc.parts[0], lo, hi, user)
            for i, d in enumerate(desc.parts[1:]):
                total = self.builder.add(Eltwise, [total, self.desc(d, lo, hi, user)], name=f"{name}/{i}", operation="sum")[0]
            return total
        if desc.kind == "Scale":
            x = self.desc(desc.parts[0], lo, hi, user)
            scale = self.builder.constant(np.array([desc.numbers[0]], np.float32), name + "/scale")
            return self.builder.add(Eltwise, [x, scale], name=name, operation="mul")[0]
        if desc.kind == "Const":
            return self.builder.constant(np.full((hi - lo + 1, int(desc.numbers[1])), desc.numbers[0], np.float32), name)
        if desc.kind == "ReplaceIndex":
            if desc.name == "x":
                return self.desc(desc.parts[0], lo, hi, user)
            row = self.desc(desc.parts[0], int(desc.numbers[0]), int(desc.numbers[0]), user)
            indices = self.builder.constant(np.zeros(hi - lo + 1, np.int32), name + "/frames")
            return self.builder.add(Gather, [row, indices], name=name, axis=0)[0]
        return self.if_defined(desc, lo, hi, user, name)

    def if_defined(self, desc: Desc, lo: int, hi: int, user: Node, name: str) -> SSAValue:
        """The inner descriptor where its frames are computable, zeros elsewhere."""
        avail = self.available(self.desc_shrink(desc.parts[0], user))
        a, b = max(lo, avail.lo), min(hi, avail.hi)
        dim = self.desc_dim(desc.parts[0], user)
        if a > b:
            return self.builder.constant(np.zeros((hi - lo + 1, dim), np.float32), name)
        parts = [self.desc(desc.parts[0], a, b, user)]
        if a > lo:
            parts.insert(0, self.builder.constant(np.zeros((a - lo, dim), np.float32), name + "/before"))
        if b < hi:
            parts.append(self.builder.constant(np.zeros((hi - b, dim), np.float32), name + "/after"))
        return parts[0] if len(parts) == 1 else self.builder.add(Concat, parts, name=name, axis=0)[0]

    def desc_dim(self, desc: Desc, user: Node) -> int:
        if desc.kind == "node":
            return dim_of(self.value(self.node(desc.name, user)))
        if desc.kind == "Const":
            return int(desc.numbers[1])
        if desc.kind == "Append":
            return sum(self.desc_dim(d, user) for d in desc.parts)
        return self.desc_dim(desc.parts[0], user)

    # -- the whole graph -------------------------------------------------------------------
    def output_node(self) -> Node:
        outputs = [n for n in self.nodes.values() if n.kind == "output"]
        chosen = [n for n in outputs if n.name == "output"] or outputs
        if len(chosen) != 1:
            raise IrforgeError(
                f"the nnet3 model has {len(outputs)} output nodes ({', '.join(n.name for n in outputs)}) and none is named 'output'",
                where=self.path, fix="keep one output node (nnet3-copy --edits)", code="E507",
            )
        return chosen[0]

    def recurrent(self) -> bool:
        """Whether some node depends on itself (through IfDefined(Offset(...)), as LSTMs do)."""
        state: dict[str, int] = {}

        def visit(node: Node) -> bool:
            if state.get(node.name) == 1:
                return True
            if state.get(node.name) == 2:
                return False
            state[node.name] = 1
            names = [node.options.get("input-node", "")] if node.kind == "dim-range" else descriptor_nodes(node.input)
            found = any(visit(self.node(name, node)) for name in names)
            state[node.name] = 2
            return found

        return any(visit(n) for n in self.nodes.values())

    def build(self) -> SSAValue:
        output = self.output_node()
        l, r = self.shrink(output)
        self.left, self.right = max(0, l or 0), max(0, r or 0)
        inputs = [n for n in self.nodes.values() if n.kind == "input"]
        if not inputs:
            raise IrforgeError("the nnet3 model has no input node", where=self.path, code="E507")
        main = next((n for n in inputs if n.name == "input"), inputs[0])
        self.utterance = int(self.value(main).type.get_shape()[0])  # type: ignore[attr-defined]
        assert output.input is not None
        if self.recurrent():
            from irforge.frontends.kaldi.nnet3_frames import FrameGraph

            return FrameGraph(self).build(output)
        return self.desc(output.input, 0, self.utterance - 1, output)


def descriptor_nodes(desc: Desc | None) -> list[str]:
    if desc is None:
        return []
    if desc.kind == "node":
        return [desc.name]
    return [name for part in desc.parts for name in descriptor_nodes(part)]


def build_nnet3(builder: FoldingBuilder, nnet: Nnet3, path: str, frames: int | None, shapes: dict[str, list[int]]) -> SSAValue:
    return Nnet3Graph(builder, nnet, path, frames, shapes).build()
