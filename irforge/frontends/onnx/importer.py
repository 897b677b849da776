"""ONNX graph -> `nn` module.

Nodes are imported in topological order through the extractor table. Values known at
conversion time are tracked: an op whose operands are all constants is evaluated at once by
its reference kernel, so shape computations (Shape -> Gather -> Concat -> Reshape) and
weights built by ConstantOfShape fold to constants while importing, as extractors that need
constant inputs (Reshape's shape, Slice's bounds) require. A node of an op without an
extractor folds too when its inputs are all constant, through ONNX's reference implementation
(`reference_fold.py`); the others are reported together, after the graph has been walked.
"""

from __future__ import annotations

import functools
import math
import os
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from xdsl.ir import SSAValue

from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.folding import FoldingBuilder, check_dtype
from irforge.frontends.graph_order import dependency_order
from irforge.frontends.onnx.legacy_forms import upgrade_legacy
from irforge.frontends.onnx.loader import OnnxFile, element_dtype, load_onnx_file, tensor_to_array
from irforge.frontends.onnx.reference_fold import RANDOM_OPS, fold_node
from irforge.frontends.onnx.registry import DEFAULT_DOMAINS, NodeContext, find_extractor
from irforge.frontends.onnx.sequences import OptionalValue, bad_kind, element_names, flat_outputs, is_structured, sequence_model_input, structured_input_error
from irforge.frontends.tensor_names import record_tensor_names
from irforge.model import Model
from irforge.weights.dtypes import from_xdsl

EXTENSION_HINT = (
    "make each a custom layer: `ir-extgen new --op NAME --framework onnx -o DIR` writes a "
    "working extension to fill in, loaded with --extensions PATH (or register an extractor "
    "with @irforge.frontends.onnx.onnx_extractor)"
)


class GraphImporter(FoldingBuilder):
    def __init__(self, source: OnnxFile, input_shapes: Mapping[str, Sequence[int]] | None = None) -> None:
        super().__init__()
        model = source.proto
        self.model = model
        self.graph = model.graph
        self.base_dir = source.base_dir
        self.raw_data = source.raw_data
        self.input_shapes = dict(input_shapes or {})
        self.values: dict[str, SSAValue] = {}  # and SequenceValue / OptionalValue (sequences.py)
        self.opsets = {d.domain if d.domain not in DEFAULT_DOMAINS else "": d.version for d in model.opset_import}
        self._initializers = {t.name: t for t in self.graph.initializer}
        self._names: Counter[str] = Counter()
        self.used_names = {name for node in self.graph.node for name in node.input} | {
            vi.name for vi in self.graph.output
        }
        # nodes of ops without an extractor that did not fold, and the tensors that depend on them
        self.unsupported: dict[str, list[str]] = defaultdict(list)
        self.unavailable: set[str] = set()

    # -- values ----------------------------------------------------------------------------
    def value(self, name: str) -> SSAValue:
        if name in self.values:
            found = self.values[name]
            if is_structured(found):  # a sequence or optional read by a tensor op
                raise bad_kind("the ONNX graph", name, found, "a tensor")
            return found
        tensor = self._initializers.get(name)
        if tensor is None:
            raise IrforgeError(
                f"tensor '{name}' is used but produced by no node, input or initializer",
                fix="the ONNX graph is malformed; check it with onnx.checker",
                code="E197",
            )
        self.values[name] = self.constant(tensor_to_array(tensor, self.base_dir, self.raw_data), name)
        return self.values[name]

    def any_value(self, name: str):  # type: ignore[no-untyped-def]
        """The tensor, sequence or optional value of `name` (`sequences.py`)."""
        found = self.values.get(name)
        return found if is_structured(found) else self.value(name)

    def generated_name(self, node: onnx.NodeProto) -> str:
        base = f"{node.op_type}_{node.output[0]}" if node.output else node.op_type
        self._names[base] += 1
        return base if self._names[base] == 1 else f"{base}_{self._names[base]}"

    # -- the graph -----------------------------------------------------------------------
    @functools.cached_property
    def declared_element_types(self) -> dict[str, int]:
        """The element type the file declares for each value it types (value_info, outputs)."""
        return {vi.name: vi.type.tensor_type.elem_type for vi in (*self.graph.value_info, *self.graph.output) if vi.type.HasField("tensor_type")}

    def run(self) -> Model:
        initializer_names = set(self._initializers)
        real_inputs = model_inputs(self.model)  # opset < 9 graphs list initializers as inputs too
        elements = {n for vi in self.graph.input if vi.name in real_inputs for n in element_names(vi.name, self.input_shapes)}
        unknown = sorted(set(self.input_shapes) - set(real_inputs) - elements)  # `<name>.<i>`: a sequence's elements
        if unknown:
            raise IrforgeError(f"the model has no input named {', '.join(unknown)}", fix=f"its inputs are: {', '.join(real_inputs)}", code="E140")
        for vi in self.graph.input:
            if vi.name in real_inputs:
                self.values[vi.name] = self.model_input(vi)
        first_error: IrforgeError | None = None
        for node in topological_order(self.graph, set(self.values) | initializer_names):
            try:
                self._import_node(node)
            except IrforgeError as error:
                # keep walking: an unsupported op further on is the error to report first
                first_error = first_error or error
                self.unavailable.update(node.output)
        report_unsupported(self.unsupported)
        if first_error is not None:
            raise first_error
        for vi in self.graph.output:
            for name, value in flat_outputs(vi.name, self.any_value(vi.name), f"ONNX graph output '{vi.name}'"):
                self.builder.output(value, name)
        model = self.builder.finish()
        record_tensor_names(model.module, {k: v for k, v in self.values.items() if isinstance(v, SSAValue)})  # cut points and --bisect by tensor name
        return model

    def model_input(self, vi: onnx.ValueInfoProto):  # type: ignore[no-untyped-def]
        """A tensor input; an optional tensor input is a present optional (fed a tensor)."""
        which = vi.type.WhichOneof("value")
        if which == "optional_type" and vi.type.optional_type.elem_type.HasField("tensor_type"):
            inner = onnx.ValueInfoProto(name=vi.name, type=vi.type.optional_type.elem_type)
            return OptionalValue(self.builder.input(vi.name, *self._input_type(inner)))
        if which in ("sequence_type", "optional_type"):
            bound = sequence_model_input(self, vi)  # its elements given as `<name>.<i>`
            if bound is None:
                raise structured_input_error(vi)
            return bound
        return self.builder.input(vi.name, *self._input_type(vi))

    def _input_type(self, vi: onnx.ValueInfoProto) -> tuple[list[int], np.dtype]:
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not t.HasField("elem_type"):
            raise IrforgeError(f"model input '{vi.name}' is not a tensor with a known element type", code="E140")
        if t.elem_type == onnx.TensorProto.STRING:
            raise IrforgeError(f"model input '{vi.name}' is a string tensor: irforge has no string tensors",
                               fix="tokenise text outside the model (e.g. bidaf's inputs) and feed numeric tensors", code="E138")
        dtype = element_dtype(t.elem_type, vi.name)
        check_dtype(dtype, vi.name)
        if vi.name in self.input_shapes:
            return list(self.input_shapes[vi.name]), dtype
        if not t.HasField("shape"):
            raise IrforgeError(
                f"model input '{vi.name}' has no shape (not even its rank)",
                fix=f"give it with --input_shape, e.g. --input {vi.name} --input_shape [1,3,224,224]",
                code="E140",
            )
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else DYN for d in t.shape.dim]
        return dims, dtype

    def _import_node(self, node: onnx.NodeProto) -> None:
        domain = node.domain if node.domain not in DEFAULT_DOMAINS else ""
        extractor = find_extractor(domain, node.op_type)
        if any(name in self.unavailable for name in node.input):
            if extractor is None:
                self._record_unsupported(node, domain)
            self.unavailable.update(node.output)
            return
        if extractor is None:
            self._fold_unsupported(node, domain)
            return
        if node.op_type == "Identity" and not domain and node.input and is_structured(self.values.get(node.input[0])):
            self.values[node.output[0]] = self.values[node.input[0]]  # a sequence or optional passes as is
            return
        ctx = upgrade_legacy(NodeContext(self, node, self.opsets.get(domain, 1)))
        if ctx.node.op_type != node.op_type:  # an old form written as another op (legacy_forms.py)
            extractor = find_extractor(domain, ctx.node.op_type) or extractor
        produced = extractor(ctx)
        results = [produced] if isinstance(produced, SSAValue) else list(produced)
        for index, name in enumerate(node.output):
            value = results[index] if index < len(results) else None
            if value is not None:
                check_result_extent(ctx, name, value)
                self.values[name] = value
            elif ctx.output_used(index):
                raise ctx.fail(f"output #{index} ('{name}') is not supported, and the graph reads it")


    def _fold_unsupported(self, node: onnx.NodeProto, domain: str) -> None:
        """Evaluate a node without an extractor if its inputs are all constant, else record it."""
        if any(is_structured(self.values.get(name)) for name in node.input if name):
            self._record_unsupported(node, domain)  # an op without an extractor that reads a sequence
            self.unavailable.update(node.output)
            return
        inputs = [self.constant_value(self.value(name)) if name else None for name in node.input]
        given = [array for name, array in zip(node.input, inputs) if name]
        folded = None
        if all(array is not None for array in given) and not any(
            a.type == onnx.AttributeProto.GRAPH for a in node.attribute
        ):
            folded = fold_node(node, inputs, self.opsets)
        if folded is None:
            self._record_unsupported(node, domain)
            self.unavailable.update(node.output)
            return
        for name, array in zip(node.output, folded):
            if name:
                self.values[name] = self.constant(array, name)

    def _record_unsupported(self, node: onnx.NodeProto, domain: str) -> None:
        key = f"{domain}::{node.op_type}" if domain else node.op_type
        self.unsupported[key].append(node.name or (node.output[0] if node.output else "?"))


MAX_RESULT_BYTES = 1 << 50
"""A node result of more than 1 PiB (Expand / Tile to a dim of 2**62) is a corrupt shape:
converted, it ran into numpy's 'array is too big' or a CPU-backend compile that never ends."""


def check_result_extent(ctx: NodeContext, name: str, value: SSAValue) -> None:
    """E144 for a node result whose static shape would hold more than 1 PiB."""
    kind = getattr(value, "type", None)  # sequences and optionals have none
    shape = getattr(kind, "shape", None)
    if shape is None or not hasattr(kind, "element_type"):
        return
    dims = [int(d.data) for d in shape.data if int(d.data) >= 0]
    try:
        itemsize = np.dtype(from_xdsl(kind.element_type)).itemsize
    except (TypeError, ValueError, KeyError):
        itemsize = 1
    if math.prod(dims) * itemsize > MAX_RESULT_BYTES:
        raise IrforgeError(f"output '{name}' would be a tensor of shape {dims}, more than 1 PiB", where=ctx.where,
                           fix="check the shape, repeats or sizes this node is given", code="E144")


def report_unsupported(missing: Mapping[str, list[str]]) -> None:
    """One error listing every op type that neither has an extractor nor folded, with counts
    and first nodes."""
    if missing:
        parts = [
            f"{op} x{len(nodes)} ({', '.join(nodes[:3])}{', ...' if len(nodes) > 3 else ''})"
            for op, nodes in sorted(missing.items())
        ]
        fix = EXTENSION_HINT
        random = sorted(op for op in missing if op in RANDOM_OPS)
        if random:  # no extension can make these right: say why
            fix = (f"{', '.join(random)} draw random numbers at run time: OpenVINO's RandomUniform-8 (Philox) cannot give "
                   "onnxruntime's numbers, and folding one sample would change the model; feed the random tensor as an "
                   "input instead (for unsupported others, " + EXTENSION_HINT + ")")
        raise IrforgeError(f"unsupported ONNX ops: {'; '.join(parts)}", fix=fix, code="E196")


def topological_order(graph: onnx.GraphProto, available: set[str]) -> list[onnx.NodeProto]:
    """Nodes in dependency order (ONNX requires it, but not every exporter complies)."""
    producers: dict[str, int] = {}
    for i, node in enumerate(graph.node):
        for out in node.output:
            if out:
                producers[out] = i
    deps: dict[int, list[int]] = {}
    for i, node in enumerate(graph.node):
        deps[i] = []
        # a subgraph (If branch, Loop body) may read this graph's values by name: they must
        # be imported before the node too (torchvision's mask paste Loop reads a Cast that
        # an order by explicit inputs alone put after it)
        outer = {n for n in subgraph_reads(node) if n in producers and producers[n] != i}
        for name in {n for n in node.input if n and n not in available} | outer:
            if name not in producers:
                raise IrforgeError(
                    f"ONNX node '{node.name or node.op_type}' reads '{name}', which nothing produces",
                    fix="the graph is malformed; check it with onnx.checker",
                    code="E197",
                )
            deps[i].append(producers[name])
    order, left = dependency_order(deps)
    if left:
        stuck = [graph.node[i].name or graph.node[i].op_type for i in left]
        raise IrforgeError(
            f"the ONNX graph has a cycle through nodes {', '.join(stuck[:5])}",
            fix="cycles are not allowed in ONNX graphs; re-export the model",
            code="E197",
        )
    return [graph.node[i] for i in order]


def subgraph_reads(node: onnx.NodeProto) -> set[str]:
    """The outer-scope names the node's subgraphs (at any depth) read: what a subgraph's
    nodes read minus what it defines itself (its inputs, initializers and node outputs),
    since a subgraph may reuse an outer name for a value of its own."""
    names: set[str] = set()
    for attr in node.attribute:
        graphs = [attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)
        for graph in graphs:
            local = {v.name for v in graph.input} | {t.name for t in graph.initializer}
            local |= {n for inner in graph.node for n in inner.output if n}
            reads: set[str] = set()
            for inner in graph.node:
                reads.update(n for n in inner.input if n)
                reads |= subgraph_reads(inner)
            names |= reads - local
    return names


def model_inputs(model: onnx.ModelProto) -> list[str]:
    """Names of the graph inputs that are not initializers (the model's real inputs)."""
    initializers = {t.name for t in model.graph.initializer}
    return [vi.name for vi in model.graph.input if vi.name not in initializers]


def import_onnx(
    source: str | os.PathLike[str] | onnx.ModelProto | OnnxFile,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
) -> Model:
    """Import an ONNX model (a path, a loaded `OnnxFile`, or an in-memory ModelProto)."""
    import irforge.frontends.onnx.extractors  # noqa: F401  (registers the extractors)

    if isinstance(source, onnx.ModelProto):
        source = OnnxFile(source, Path("."))
    elif not isinstance(source, OnnxFile):
        source = load_onnx_file(source)
    return GraphImporter(source, input_shapes).run()
