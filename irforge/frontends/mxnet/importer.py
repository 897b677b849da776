"""MXNet symbol + weights -> `nn` module.

`null` nodes are weights when the .params holds an array of their name (`arg:NAME` or
`aux:NAME`, or NAME in gluon files), and model inputs otherwise. The outputs are the
symbol's heads, or the nodes named by `outputs` (`name` or `name:port`); only the nodes
they depend on are imported, so an unsupported op past a cut point is no obstacle. Loss
layers' labels (SoftmaxOutput's second input) are never inputs. Every op without an
extractor, and every weight missing from the .params, is reported in one error before
anything is built; an attribute that no extractor reads and that may change the numbers is
an error naming it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.ir import SSAValue

from irforge.errors import IrforgeError
from irforge.frontends.folding import FoldingBuilder
from irforge.frontends.mxnet.loader import as_float32
from irforge.frontends.mxnet.registry import EXTRACTORS, IGNORED_INPUTS, WEIGHT_INPUTS, NodeContext
from irforge.frontends.mxnet.symbol import Node, Symbol
from irforge.model import Model

EXTENSION_HINT = (
    "make each a custom layer (loaded with --extensions PATH) that registers an extractor "
    "with @irforge.frontends.mxnet.mxnet_extractor(\"Op\")"
)
Entry = tuple[int, int]


@dataclass
class Weights:
    """The arrays of a model by node name (prefixes stripped), and which hold bfloat16 bits."""

    arrays: dict[str, np.ndarray]
    bfloat16: set[str] = field(default_factory=set)

    @staticmethod
    def from_named(named: Mapping[str, np.ndarray], bfloat16: set[str] | None = None) -> Weights:
        """`arg:NAME`/`aux:NAME` (module checkpoints) or bare names (gluon's save_parameters)."""
        arrays: dict[str, np.ndarray] = {}
        raw16 = set()
        for key, array in named.items():
            name = key.split(":", 1)[1] if key.startswith(("arg:", "aux:")) else key
            if name in arrays:
                raise IrforgeError(f"the weights name '{name}' twice (as arg: and aux:)", fix="give a .params file MXNet saved", code="E407")
            arrays[name] = array
            if bfloat16 and key in bfloat16:
                raw16.add(name)
        return Weights(arrays, raw16)


class SymbolImporter(FoldingBuilder):
    def __init__(
        self,
        symbol: Symbol,
        weights: Weights,
        input_shapes: Mapping[str, Sequence[int]] | None = None,
        outputs: Sequence[str] = (),
    ) -> None:
        import irforge.frontends.mxnet.extractors  # noqa: F401  (registers the extractors)

        super().__init__()
        self.symbol = symbol
        self.nodes = symbol.nodes
        self.weights = weights
        self.input_shapes = {k: list(v) for k, v in (input_shapes or {}).items()}
        self.targets = [self.resolve_output(o) for o in outputs] if outputs else list(symbol.heads)
        self.values: dict[Entry, SSAValue] = {}
        self.weight_values: dict[int, SSAValue] = {}

    # -- the graph -------------------------------------------------------------------------
    def resolve_output(self, text: str) -> Entry:
        by_name = {n.name: n.index for n in self.nodes}
        name, port = text, 0
        if text not in by_name and ":" in text:
            head, _, tail = text.rpartition(":")
            if tail.isdigit():
                name, port = head, int(tail)
        if name not in by_name:
            raise IrforgeError(f"--output names '{text}', which is no node of the symbol", fix="give node names from the -symbol.json (name or name:port)", code="E408")
        return by_name[name], port

    def needed(self) -> list[Node]:
        """The nodes the targets depend on, in the file's (topological) order."""
        seen: set[int] = set()
        stack = [source for source, _ in self.targets]
        while stack:
            index = stack.pop()
            if index in seen:
                continue
            seen.add(index)
            node = self.nodes[index]
            skipped = IGNORED_INPUTS.get(node.op, frozenset())
            stack.extend(source for i, (source, _) in enumerate(node.inputs) if i not in skipped)
        return [self.nodes[i] for i in sorted(seen)]

    def is_weight(self, node: Node) -> bool:
        return node.op == "null" and node.name in self.weights.arrays

    def input_nodes(self, needed: Sequence[Node]) -> list[Node]:
        """The null nodes without an array that the targets read as data (the model's
        inputs); one read only where weights go is a missing weight, which `check` reports."""
        as_data = {index for index, _ in self.targets}
        for node in needed:
            weights = WEIGHT_INPUTS.get(node.op, frozenset()) | IGNORED_INPUTS.get(node.op, frozenset())
            as_data.update(source for i, (source, _) in enumerate(node.inputs) if i not in weights)
        return [n for n in needed if n.op == "null" and not self.is_weight(n) and n.index in as_data]

    def check(self, needed: Sequence[Node]) -> None:
        """One error for every op without an extractor, one for every missing weight."""
        missing: dict[str, list[str]] = defaultdict(list)
        for node in needed:
            if node.op != "null" and node.op not in EXTRACTORS:
                missing[node.op].append(node.name)
        if missing:
            parts = [f"{op} x{len(names)} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})" for op, names in sorted(missing.items())]
            raise IrforgeError(f"unsupported MXNet ops: {'; '.join(parts)}", fix=EXTENSION_HINT, code="E403")
        absent = []
        for node in needed:
            for position in WEIGHT_INPUTS.get(node.op, ()):
                if position < len(node.inputs):
                    source = self.nodes[node.inputs[position][0]]
                    if source.op == "null" and not self.is_weight(source) and source.name not in absent:
                        absent.append(source.name)
        if absent:
            raise IrforgeError(
                f"the weights have no array for {', '.join(absent)}",
                fix="give the .params file saved with this symbol file (names are arg:NAME/aux:NAME or NAME)",
                code="E406",
            )

    # -- values ----------------------------------------------------------------------------
    def node_name(self, entry: Entry) -> str:
        return self.nodes[entry[0]].name

    def value(self, entry: Entry, ctx: NodeContext) -> SSAValue:
        index, port = entry
        node = self.nodes[index]
        if self.is_weight(node):
            if index not in self.weight_values:
                array = self.weights.arrays[node.name]
                if node.name in self.weights.bfloat16:
                    array = as_float32(array, True)
                self.weight_values[index] = self.constant(np.asarray(array), node.name)
            return self.weight_values[index]
        if entry not in self.values:
            raise ctx.fail(f"reads output {port} of '{node.name}', which has no such output in irforge")
        return self.values[entry]

    def weight_of(self, entry: Entry, ctx: NodeContext) -> np.ndarray:
        node = self.nodes[entry[0]]
        if self.is_weight(node):
            return as_float32(self.weights.arrays[node.name], node.name in self.weights.bfloat16)
        known = self.constant_value(self.value(entry, ctx)) if node.op != "null" else None
        if known is None:
            raise ctx.fail(f"needs '{node.name}' as a weight from the .params, but it is computed or a model input")
        return np.asarray(known, np.float32)

    def named_weight(self, name: str) -> np.ndarray | None:
        if name not in self.weights.arrays:
            return None
        return as_float32(self.weights.arrays[name], name in self.weights.bfloat16)

    def add_input(self, node: Node) -> None:
        shape = self.input_shapes.get(node.name)
        if shape is None:
            shape = node.attrs.ints("__shape__")
        if not shape or any(d < 1 for d in shape):
            raise IrforgeError(
                f"the symbol file does not say the shape of input '{node.name}'" if not shape else f"input '{node.name}' has an unknown dimension in {shape}",
                fix=f"give it with --input {node.name} --input_shape [1,3,224,224] (MXNet symbols carry no input shapes)",
                code="E405",
            )
        dtype = node.attrs.int("__dtype__", 0)
        if dtype != 0:
            raise IrforgeError(f"input '{node.name}' has MXNet type flag {dtype}; irforge takes float32 inputs", code="E405")
        self.values[(node.index, 0)] = self.builder.input(node.name, shape)

    # -- the run ---------------------------------------------------------------------------
    def run(self) -> Model:
        needed = self.needed()
        self.check(needed)
        inputs = self.input_nodes(needed)
        unknown = sorted(set(self.input_shapes) - {n.name for n in inputs})
        if unknown:
            raise IrforgeError(f"the model has no input named {', '.join(unknown)}", fix=f"its inputs are: {', '.join(n.name for n in inputs)}", code="E405")
        for node in inputs:
            self.add_input(node)
        for node in needed:
            if node.op != "null":
                self.import_node(node)
        for entry in self.targets:
            node = self.nodes[entry[0]]
            if entry not in self.values:
                raise IrforgeError(f"output {entry[1]} of '{node.name}' does not exist in irforge's import", code="E408")
            self.builder.output(self.values[entry], node.name if entry[1] == 0 else f"{node.name}:{entry[1]}")
        return self.builder.finish()

    def import_node(self, node: Node) -> None:
        ctx = NodeContext(self, node)
        produced = EXTRACTORS[node.op](ctx)
        results = [produced] if isinstance(produced, SSAValue) else list(produced)
        unread = node.attrs.unread()
        if unread:
            raise IrforgeError(
                f"attribute{'s' if len(unread) > 1 else ''} {', '.join(f'{k}={node.attrs.values[k]!r}' for k in unread)} not supported",
                where=ctx.where,
                fix="irforge would ignore it and compute something else; remove it if it has no effect, or register an extractor that honours it",
                code="E413",
            )
        for port, value in enumerate(results):
            self.values[(node.index, port)] = value


def import_mxnet(
    symbol: Symbol,
    weights: Weights,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    outputs: Sequence[str] = (),
) -> Model:
    """Import a loaded MXNet symbol with its weights."""
    return SymbolImporter(symbol, weights, input_shapes, outputs).run()
