"""nn.if -> opset8 If, nn.loop -> opset5 Loop, their bodies as nested nets.

Laid out as OpenVINO's serializer writes them: the port maps and back edges before the
ports, the bodies after. A body's Parameters and Results are referred to by their layer ids
inside the body; outer ports by `external_port_id` (inputs by index, outputs by port id).

nn.loop has ONNX's semantics, OpenVINO's Loop differs in three ways that the emitter
bridges: its trip count and condition inputs are both required (absent: -1, "no limit", and
true); its body has no condition input (the body argument reads a Const true: an iteration
only runs while the condition holds); scan outputs are concatenated along an axis, so the
body's Result of a scan output is the value unsqueezed at axis 0.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Block, SSAValue

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter, unsupported_ops
from irforge.backends.ir_xml.graph import IrGraph, PortType
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.control_flow import If, Loop, Yield
from irforge.model import store_of


class Body:
    """One emitted body: its net, the Parameter layer id of each block argument (None where
    the argument was given a constant) and the Result layer id of each yielded value."""

    def __init__(self, parent: EmitContext, block: Block, name: str, constants: dict[int, np.ndarray] | None = None, scans_from: int | None = None) -> None:
        from irforge.backends.ir_xml.writer import emit_ops  # the writer imports the emitters

        error = unsupported_ops([op for op in block.ops if not isinstance(op, Yield | Constant)])
        if error is not None:
            raise error
        ctx = EmitContext(name, compress_to_fp16=parent.compress_to_fp16)
        ports: dict[SSAValue, Port] = {}
        self.parameters: list[int | None] = []
        for i, arg in enumerate(block.args):
            if constants and i in constants:
                ports[arg] = ctx.const(constants[i], f"{name}/arg{i}")
                self.parameters.append(None)
                continue
            ports[arg] = ctx.parameter(f"{name}/arg{i}", PortType.of(arg.type))
            self.parameters.append(ports[arg].layer)
        parent_op = block.parent_op()
        assert parent_op is not None
        emit_ops(ctx, block.ops, ports, store_of(parent_op))
        terminator = block.last_op
        assert isinstance(terminator, Yield)
        self.results: list[int] = []
        for k, value in enumerate(terminator.values):
            port = ctx.materialize(ports[value])
            if scans_from is not None and k >= scans_from:  # one slice of the concatenation
                t = port.type
                port = ctx.single("Unsqueeze", [port, ctx.ints([0], f"{name}/scan{k}/axis")], t.with_dims((1, *t.dims)), name=f"{name}/scan{k}")
            ctx.layer("Result", [port], [], name=f"{name}/out{k}")
            self.results.append(len(ctx.graph.layers) - 1)
        self.graph: IrGraph = ctx.graph


def port_entry(tag: str, external: int, internal: int | None, **extra: str) -> tuple[str, dict[str, str]]:
    assert internal is not None
    return tag, {**({} if "axis" not in extra else {"axis": extra.pop("axis")}), "external_port_id": str(external), "internal_layer_id": str(internal), **extra}


@ir_xml_emitter(If)
def if_(ctx: EmitContext, op: If, inputs: list[Port]) -> list[Port]:
    name = ctx.name(op)
    bodies = [Body(ctx, op.then_region.blocks[0], f"{name}/then"), Body(ctx, op.else_region.blocks[0], f"{name}/else")]
    outputs = ctx.layer("If", inputs, [PortType.of(r.type) for r in op.results], name=name, version="opset8")
    layer = ctx.graph.layers[-1]
    for tag, body in zip(("then", "else"), bodies):
        entries = [port_entry("input", 1 + i, pid) for i, pid in enumerate(body.parameters)]
        entries += [port_entry("output", len(inputs) + k, rid) for k, rid in enumerate(body.results)]
        layer.maps.append((f"{tag}_port_map", entries))
    layer.bodies = [("then_body", bodies[0].graph), ("else_body", bodies[1].graph)]
    return outputs


@ir_xml_emitter(Loop)
def loop(ctx: EmitContext, op: Loop, inputs: list[Port]) -> list[Port]:
    name = ctx.name(op)
    given = list(inputs)
    trip = given.pop(0) if op.trip_count is not None else ctx.const(np.array(-1, np.int64), f"{name}/no_trip_count")
    condition = given.pop(0) if op.initial_condition is not None else ctx.const(np.array(True), f"{name}/no_condition")
    n = op.num_carried
    body = Body(ctx, op.body.blocks[0], f"{name}/body", constants={1: np.array(True)}, scans_from=1 + n)
    all_inputs = [trip, condition, *given]
    outputs = ctx.layer("Loop", all_inputs, [PortType.of(r.type) for r in op.results], name=name, version="opset5")
    layer = ctx.graph.layers[-1]
    first_out = len(all_inputs)
    entries = [port_entry("input", 2 + i, body.parameters[2 + i]) for i in range(len(given))]
    entries += [port_entry("output", first_out + k, body.results[1 + k]) for k in range(n)]
    entries += [
        port_entry("output", first_out + k, body.results[1 + k], axis="0", start="0", end="-1", stride="1", part_size="1")
        for k in range(n, len(op.results))
    ]
    if body.parameters[0] is not None:
        entries.append(port_entry("input", -1, body.parameters[0], purpose="current_iteration"))
    entries.append(port_entry("output", -1, body.results[0], purpose="execution_condition"))
    layer.maps = [("port_map", entries), ("back_edges", [("edge", {"from-layer": str(body.results[1 + k]), "to-layer": str(body.parameters[2 + k])}) for k in range(n)])]
    layer.bodies = [("body", body.graph)]
    return outputs
