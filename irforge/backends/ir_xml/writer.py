"""`nn` model -> OpenVINO IR v11 (`NAME.xml` + `NAME.bin`).

The function's ops are turned into layers through the emitter table (`mapping.py`), with
the model inputs as Parameters first and the outputs as Results last. The whole graph is
built before anything touches the disk; then the .bin is streamed from the weight store
and the .xml printed, both into temporary files beside the targets that replace them only
when both are complete, so a failure leaves the previous files as they were.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import IsTerminator

from irforge.backends.ir_xml import mapping  # noqa: F401  (fills the emitter table)
from irforge.backends.ir_xml.bin import BinWriter
from irforge.backends.ir_xml.context import EMITTERS, EmitContext, Port, unsupported_ops
from irforge.backends.ir_xml.graph import IrGraph, PortType
from irforge.backends.ir_xml.xml_text import graph_xml
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.model import Model, input_names, output_names, returned_values
from irforge.output_files import write_files
from irforge.weights import WeightStore

DATA_TYPES = ("FP32", "FP16")


def emit_graph(model: Model, data_type: str = "FP32") -> IrGraph:
    """The IR graph of `model`; with FP16, f32 Consts are stored as f16 plus a Convert."""
    if data_type not in DATA_TYPES:
        raise IrforgeError(f"unknown IR data type '{data_type}'", fix=f"use one of {', '.join(DATA_TYPES)}", code="E852")
    func = model.func
    ops = [op for op in func.body.block.ops if not isinstance(op, ReturnOp | Constant)]
    error = unsupported_ops(ops)
    if error is not None:
        raise error
    ctx = EmitContext(func.sym_name.data, compress_to_fp16=data_type == "FP16")
    ports: dict[SSAValue, Port] = {}
    for name, arg in zip(input_names(func), func.args):
        ports[arg] = ctx.parameter(name, PortType.of(arg.type))
    emit_ops(ctx, func.body.block.ops, ports, model.store)
    for name, value in zip(output_names(func), returned_values(func)):
        ctx.result(ports[value], name)
    return ctx.graph


def emit_ops(ctx: EmitContext, ops: Iterable[Operation], ports: dict[SSAValue, Port], store: WeightStore) -> None:
    """Emit `ops` (a function's or an If/Loop body's, up to its terminator) into `ctx`,
    reading their operands from `ports` and adding their results to it."""
    for op in ops:
        if op.has_trait(IsTerminator):
            break
        if isinstance(op, Constant):
            array = store[op.weight_name] if op.weight_name is not None else op.inline_array()
            ports[op.output] = ctx.const(array, ctx.name(op) if op.layer_name else op.weight_name or "Constant", op.packed_bits)
            continue
        outputs = list(EMITTERS[type(op)](ctx, op, [ports[v] for v in op.operands]))
        if len(outputs) != len(op.results):
            raise IrforgeError(f"the IR XML emitter of {op.name} gave {len(outputs)} outputs for {len(op.results)} results", code="E852")
        ports.update(zip(op.results, outputs))


def write_bin(graph: IrGraph, f) -> None:  # type: ignore[no-untyped-def]
    """Stream every Const's blob into `f` and record its offset and size in the layer."""
    bin_writer = BinWriter(f)
    for layer in graph.all_layers():  # If/Loop bodies' Consts share the one .bin
        if layer.blob is None:
            continue
        offset, size = bin_writer.add(layer.blob, layer.outputs[0].dtype, layer.blob_bits)
        layer.data["offset"] = str(offset)
        layer.data["size"] = str(size)


def write_ir_xml(model: Model, xml_path: str | os.PathLike[str], data_type: str = "FP32") -> tuple[Path, Path]:
    """Write `model` as `xml_path` and the .bin beside it, both or neither; returns both paths."""
    xml_path = Path(xml_path)
    bin_path = xml_path.with_suffix(".bin")
    graph = emit_graph(model, data_type)
    # the .bin first: writing it fills in the Const layers' offsets the .xml names
    write_files([
        (bin_path, lambda f: write_bin(graph, f)),
        (xml_path, lambda f: f.write(graph_xml(graph).encode("utf-8"))),
    ])
    return xml_path, bin_path


__all__ = ["DATA_TYPES", "emit_graph", "write_ir_xml"]
