"""OpenVINO IR (`NAME.xml` + `NAME.bin`) -> `nn` model.

Layers are read in topological order through the reader table (`readers.py`). Const
layers become `nn.constant`s over views of the memory-mapped .bin, so weights are never
copied. Values a reader needs at conversion time (a Reshape's shape, after a decompression
Convert, say) are computed on demand by the reference kernels; the ops computing them stay
in the graph, and whatever nothing reads in the end is dropped.
"""

from __future__ import annotations

import heapq
import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, SSAValue
from xdsl.traits import IsTerminator

from irforge.backends.reference import evaluate
from irforge.builder import ModelBuilder
from irforge.dialects.nn.base import DYN, NNOp, build
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.frontends.ir_xml.context import READERS, LayerContext
from irforge.frontends.ir_xml.parse import ELEMENT_DTYPES, PACKED_ELEMENTS, BinFile, IrLayer, IrNet, parse_ir_xml, split_names
from irforge.frontends.ir_xml.readers_custom import custom_op_of, custom_reader
from irforge.model import Model

SPECIAL = ("Parameter", "Const", "Result")


class IrImporter:
    def __init__(self, net: IrNet, weights: BinFile) -> None:
        self.net = net
        self.weights = weights
        self.builder = ModelBuilder()
        self.constants: dict[SSAValue, np.ndarray] = {}
        self.values: dict[tuple[int, int], SSAValue] = {}
        self.pending: dict[tuple[int, int], tuple[np.ndarray, str, int]] = {}
        """Const layers not yet made `nn.constant`s: a layer may read them as values only."""
        self.squeezed: dict[SSAValue, tuple[SSAValue, list[int]]] = {}
        """Values a reader squeezed to the opset's rank -> (the `nn` value, the axes): an
        Unsqueeze of those axes gives the `nn` value back instead of undoing the squeeze."""
        self.sources: dict[tuple[int, int], tuple[int, int]] = {}
        self.consumers: dict[tuple[int, int], int] = defaultdict(int)
        for from_layer, from_port, to_layer, to_port in net.edges:
            for layer_id in (from_layer, to_layer):
                if layer_id not in net.layers:
                    raise IrforgeError(f"an edge names layer id {layer_id}, which does not exist", where=str(weights.path.with_suffix(".xml")), fix="the IR is corrupt; regenerate it", code="E641")
            self.sources[(to_layer, to_port)] = (from_layer, from_port)
            self.consumers[(from_layer, from_port)] += 1

    # -- values --------------------------------------------------------------------------
    def constant(self, array: np.ndarray, name: str, bits: int = 0) -> SSAValue:
        value = self.builder.constant(array, name, bits)
        self.constants[value] = array
        return value

    def value_at(self, key: tuple[int, int]) -> SSAValue:
        """The value of output port `key` = (layer id, port id); a Const gets its op now."""
        if key not in self.values:
            array, name, bits = self.pending[key]
            self.values[key] = self.constant(array, name, bits)
        return self.values[key]

    def constant_at(self, key: tuple[int, int]) -> np.ndarray | None:
        if key in self.pending:
            return self.pending[key][0]
        return self.constant_value(self.value_at(key))

    def constant_value(self, value: SSAValue) -> np.ndarray | None:
        """The value of `value` if it follows from constants alone (computed once, on demand)."""
        if value in self.constants:
            return self.constants[value]
        op = value.owner
        if not isinstance(op, NNOp) or isinstance(op, Constant):
            return None
        args = [self.constant_value(v) for v in op.operands]
        if any(a is None for a in args):
            return None
        self.constants.update(zip(op.results, evaluate(op, args)))  # type: ignore[arg-type]
        return self.constants[value]

    def add(self, cls: type[NNOp], operands: Sequence[SSAValue], *, num_results: int = 1, name: str, **props: object) -> list[SSAValue]:
        op = build(cls, operands, num_results=num_results, name=name, **props)
        self.builder.block.add_op(op)
        return list(op.results)

    def is_used(self, layer: IrLayer, index: int) -> bool:
        return self.consumers[(layer.id, layer.outputs[index].id)] > 0

    # -- the graph -----------------------------------------------------------------------
    def run(self) -> Model:
        check_supported(self.net)
        for layer in self.order():
            if layer.type == "Result":
                name = self.result_name(layer)  # first: it checks the Result has its one input
                self.builder.output(self.value_at(self.input_keys(layer)[0]), name)
            else:
                self.read_layer(layer)
        model = self.builder.finish(self.net.name if self.net.name.isidentifier() else "main")
        drop_unused(model.func.body.block)
        return model

    def result_name(self, layer: IrLayer) -> str:
        """The model output's name: the first tensor name of the port the Result reads."""
        if len(layer.inputs) != 1:
            raise IrforgeError(f"{layer.label} must have one input", fix="the IR is corrupt; regenerate it", code="E641")
        if layer.attrs.get("output_names"):
            return split_names(layer.attrs["output_names"])[0]
        from_layer, from_port = self.sources[(layer.id, layer.inputs[0].id)]
        source = self.net.layers[from_layer]
        names = next((p.names for p in source.outputs if p.id == from_port), [])
        if source.type == "Parameter":  # an input returned as it is: its first name is the input's
            names = names[1:] or names
        return names[0] if names else layer.name.removesuffix("/sink_port_0")

    def order(self) -> list[IrLayer]:
        """Topological order, lowest id first among the ready layers (so files written in
        topological order keep theirs)."""
        pending = {i: len(layer.inputs) for i, layer in self.net.layers.items()}
        users: dict[int, list[int]] = defaultdict(list)
        for (to_layer, _), (from_layer, _) in self.sources.items():
            users[from_layer].append(to_layer)
        for i, layer in self.net.layers.items():
            connected = sum(1 for p in layer.inputs if (i, p.id) in self.sources)
            if connected != len(layer.inputs):
                raise IrforgeError(f"{layer.label} has {len(layer.inputs) - connected} unconnected inputs", fix="the IR is corrupt; regenerate it", code="E641")
        ready = [i for i, n in pending.items() if n == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            i = heapq.heappop(ready)
            order.append(self.net.layers[i])
            for j in users[i]:
                pending[j] -= 1
                if pending[j] == 0:
                    heapq.heappush(ready, j)
        if len(order) != len(self.net.layers):
            raise IrforgeError("the IR graph has a cycle", fix="the IR is corrupt; regenerate it", code="E641")
        return order

    def input_keys(self, layer: IrLayer) -> list[tuple[int, int]]:
        keys = [self.sources[(layer.id, p.id)] for p in layer.inputs]
        for key in keys:
            if key not in self.values and key not in self.pending:
                raise IrforgeError(f"{layer.label} reads port {key[1]} of layer id {key[0]}, which has no such output", fix="the IR is corrupt; regenerate it", code="E641")
        return keys

    def read_layer(self, layer: IrLayer) -> None:
        if layer.type == "Const":
            array = self.weights.const(layer)
            if not layer.outputs or layer.outputs[0].dims != array.shape:
                raise IrforgeError(f"Const shape {list(array.shape)} differs from its output port", where=layer.label, fix="the IR is corrupt; regenerate it", code="E641")
            bits = 4 if layer.data.get("element_type") in PACKED_ELEMENTS else 0
            self.pending[(layer.id, layer.outputs[0].id)] = (array, layer.name, bits)
            return
        if layer.type == "Parameter":
            results: Sequence[SSAValue | None] = [self.parameter(layer)]
        else:
            reader = custom_reader(layer) or READERS[layer.type]
            produced = reader(LayerContext(self, layer, self.input_keys(layer)))
            results = [produced] if isinstance(produced, SSAValue) else list(produced)
        for port, value in zip(layer.outputs, results):
            if value is not None:
                check_dims(layer, port.dims, value)
                self.values[(layer.id, port.id)] = value
        for port in layer.outputs[len(results) :]:
            if self.consumers[(layer.id, port.id)]:
                raise IrforgeError(f"output port {port.id} is read but not supported", where=layer.label, code="E641")

    def parameter(self, layer: IrLayer) -> SSAValue:
        element = layer.data.get("element_type", "")
        if element not in ELEMENT_DTYPES:
            raise IrforgeError(f"input element type '{element}' is not supported", where=layer.label, fix=f"use one of {', '.join(ELEMENT_DTYPES)}", code="E641")
        dims = layer.outputs[0].dims if layer.outputs else ()
        names = layer.outputs[0].names if layer.outputs else []
        return self.builder.input(names[0] if names else layer.name, [d if d >= 0 else DYN for d in dims], ELEMENT_DTYPES[element])


def check_dims(layer: IrLayer, dims: tuple[int, ...], value: SSAValue) -> None:
    """The dims the file declares must be those `nn` infers (where both are known): a
    difference means the layer's semantics were not reproduced."""
    t = value.type
    assert isinstance(t, TensorType)
    inferred = tuple(t.get_shape())
    if len(inferred) != len(dims) or any(a >= 0 and b >= 0 and a != b for a, b in zip(inferred, dims)):
        shown = [d if d >= 0 else "?" for d in inferred]
        raise IrforgeError(f"the file declares output dims {list(dims)} but irforge infers {shown}", where=layer.label, fix="report this layer: its semantics are not reproduced", code="E641")


def check_supported(net: IrNet) -> None:
    """One error listing every layer type without a reader, with counts and first layers."""
    missing: dict[str, list[str]] = defaultdict(list)
    for layer in net.layers.values():
        if layer.type not in SPECIAL and layer.type not in READERS and custom_op_of(layer) is None:
            missing[f"{layer.type} ({layer.version})"].append(layer.name)
    if missing:
        parts = [f"{t} x{len(names)} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})" for t, names in sorted(missing.items())]
        raise IrforgeError(f"unsupported IR layer types: {'; '.join(parts)}", fix="load the extension that defines them, or register a reader with @irforge.frontends.ir_xml.ir_layer_reader(TYPE)", code="E641")


def drop_unused(block: Block) -> None:
    """Erase ops nothing reads (constants only needed as attribute values, say)."""
    for op in reversed(list(block.ops)):
        if not op.has_trait(IsTerminator) and all(not r.uses for r in op.results):
            block.erase_op(op)


def read_ir_xml(path: str | os.PathLike[str]) -> Model:
    """Read `NAME.xml` and the `NAME.bin` beside it into an `nn` model."""
    import irforge.frontends.ir_xml.readers  # noqa: F401  (fills the reader table)

    path = Path(path)
    net = parse_ir_xml(path)
    return IrImporter(net, BinFile(path.with_suffix(".bin"))).run()
