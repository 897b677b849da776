"""TensorFlow frozen GraphDef -> `nn` module, one extractor per op type.

Function calls are inlined from the graph's library first (functions.py), atrous
convolutions folded into dilated ones (atrous.py), and Keras LSTM/GRU/SimpleRNN loops
replaced by one recurrent node each (recurrent_loops.py). Placeholders
become inputs (names kept); the outputs are the nodes nothing consumes, or
those named by `outputs`. Nodes are imported in dependency order with constant folding, so
shape arithmetic and Fill-built weights become constants. The result is in NHWC with
transposes around layout-sensitive ops; `convert-layout` (in ir-convert's pipeline) makes it
NCHW.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.folding import FoldingBuilder, check_dtype
from irforge.frontends.graph_order import dependency_order
from irforge.frontends.tf.atrous import fold_atrous_convolutions
from irforge.frontends.tf.functions import inline_functions
from irforge.frontends.tf.loops import LOOP_FIX, describe_loops, is_loop_op
from irforge.frontends.tf.loader import load_graph, numpy_dtype
from irforge.frontends.tf.recurrent_loops import fold_recurrent_loops
from irforge.frontends.tf.registry import EXTRACTORS, NodeContext
from irforge.model import Model

EXTENSION_HINT = (
    "make each a custom layer: `ir-extgen new --op NAME --framework tf -o DIR` writes a "
    "working extension to fill in, loaded with --extensions PATH (or register an extractor "
    "with @irforge.frontends.tf.tf_extractor)"
)
INPUT_OPS = ("Placeholder",)
NOT_OUTPUTS = ("NoOp", "Const", "Assert", "SaveV2", "RestoreV2")


def tensor_name(name: str) -> str:
    """`node:0` and `node` are the same tensor; `node:1` is the node's second output."""
    return name[:-2] if name.endswith(":0") else name


def producer(name: str) -> str:
    return name.lstrip("^").split(":")[0]


class GraphImporter(FoldingBuilder):
    def __init__(self, graph_def: Any, input_shapes: Mapping[str, Sequence[int]] | None = None, outputs: Sequence[str] = ()) -> None:
        super().__init__()
        graph_def, self.refused_loops = fold_recurrent_loops(fold_atrous_convolutions(inline_functions(graph_def)))
        self.graph_def = graph_def
        self.nodes = {node.name: node for node in graph_def.node}
        self.input_shapes = dict(input_shapes or {})
        self.output_names = [tensor_name(o) for o in outputs]
        self.values: dict[str, SSAValue] = {}

    def value(self, name: str) -> SSAValue:
        name = tensor_name(name)
        if name not in self.values:
            raise IrforgeError(
                f"tensor '{name}' is used but not produced",
                fix="the graph is malformed or the named output of a node does not exist",
                code="E396",
            )
        return self.values[name]

    def run(self) -> Model:
        from irforge.frontends.tf.extractors.control_flow import region_whiles

        check_supported(self.graph_def, self.refused_loops, region_whiles(self.graph_def))
        unknown = sorted(set(self.input_shapes) - {n.name for n in self.graph_def.node if n.op in INPUT_OPS})
        if unknown:
            raise IrforgeError(f"the graph has no Placeholder named {', '.join(unknown)}", code="E340")
        outputs = self.output_names or self._default_outputs()
        for node in topological_order(self.graph_def, {producer(o) for o in outputs}):
            if node.op in INPUT_OPS:
                self.values[node.name] = self.builder.input(node.name, *self._placeholder_type(node))
            else:
                self._import_node(node)
        for name in outputs:
            self.builder.output(self.value(name), name)
        return self.builder.finish()

    def _default_outputs(self) -> list[str]:
        consumed = {producer(i) for node in self.graph_def.node for i in node.input}
        return [n.name for n in self.graph_def.node if n.name not in consumed and n.op not in NOT_OUTPUTS]

    def _placeholder_type(self, node: Any) -> tuple[list[int], np.dtype]:
        where = f"Placeholder '{node.name}'"
        dtype = numpy_dtype(node.attr["dtype"].type, where)
        check_dtype(dtype, node.name)
        if node.name in self.input_shapes:
            return list(self.input_shapes[node.name]), dtype
        shape = node.attr["shape"].shape if "shape" in node.attr else None
        if shape is None or shape.unknown_rank:
            raise IrforgeError(
                f"input '{node.name}' has no shape (not even its rank)",
                fix=f"give it with --input {node.name} --input_shape [1,224,224,3]",
                code="E340",
            )
        return [int(d.size) if d.size > 0 else DYN for d in shape.dim], dtype

    def _import_node(self, node: Any) -> None:
        ctx = NodeContext(self, node)
        produced = EXTRACTORS[node.op](ctx)
        results = [produced] if isinstance(produced, SSAValue) else list(produced)
        for index, value in enumerate(results):
            self.values[node.name if index == 0 else f"{node.name}:{index}"] = value


def check_supported(graph_def: Any, refused_loops: Mapping[str, str] | None = None, imported_loops: Collection[str] = ()) -> None:
    """One error listing every op type without an extractor, with counts and first nodes,
    and every loop by name with why it is not a recognised RNN (what fits a loop is not a
    custom layer)."""
    import irforge.frontends.tf.extractors  # noqa: F401  (registers the extractors)

    missing: dict[str, list[str]] = defaultdict(list)
    for node in graph_def.node:
        if node.op not in EXTRACTORS and node.op not in INPUT_OPS and not is_loop_op(node.op):
            missing[node.op].append(node.name)
    loops = describe_loops(graph_def, refused_loops or {}, imported_loops)
    if not missing and not loops:
        return
    parts = [
        f"{op} x{len(names)} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
        for op, names in sorted(missing.items())
    ]
    if not loops:
        raise IrforgeError(f"unsupported TensorFlow ops: {'; '.join(parts)}", fix=EXTENSION_HINT, code="E397")
    # the loops first: they are what a custom layer cannot fix, and a long line loses its middle
    what = f"loops irforge cannot express: {'; '.join(loops)}"
    if parts:
        what += f"; and unsupported TensorFlow ops: {'; '.join(parts)}"
    fix = LOOP_FIX + ("; make the other ops custom layers (ir-extgen new --framework tf)" if parts else "")
    raise IrforgeError(what, fix=fix, code="E363")


def topological_order(graph_def: Any, outputs: set[str]) -> list[Any]:
    """The nodes the outputs depend on (control edges included), producers first."""
    nodes = {node.name: node for node in graph_def.node}
    missing = sorted(outputs - set(nodes))
    if missing:
        raise IrforgeError(f"the graph has no node named {', '.join(missing)}", fix="check the --output names", code="E340")
    needed: set[str] = set()
    stack = list(outputs)
    while stack:
        name = stack.pop()
        if name in needed:
            continue
        if name not in nodes:
            raise IrforgeError(f"a node reads '{name}', which no node produces", fix="the graph is malformed", code="E396")
        needed.add(name)
        stack.extend(producer(i) for i in nodes[name].input)
    order, stuck = dependency_order({name: {producer(i) for i in nodes[name].input} for name in sorted(needed)})
    if stuck:
        raise IrforgeError(f"the graph has a cycle through nodes {', '.join(stuck[:5])}", fix="freeze the graph for inference", code="E396")
    return [nodes[name] for name in order]


def import_tf(
    source: str | os.PathLike[str] | Any,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    outputs: Sequence[str] = (),
    is_text: bool | None = None,
) -> Model:
    """Import a frozen GraphDef (a path, or a GraphDef message)."""
    graph_def = source if hasattr(source, "node") else load_graph(source, is_text)
    return GraphImporter(graph_def, input_shapes, outputs).run()
