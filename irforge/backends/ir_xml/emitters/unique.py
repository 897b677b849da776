"""Emitter of nn.unique: OpenVINO's Unique-10 (data, and the axis as a scalar i64 constant
when the input is not flattened); its four outputs in nn.unique's order, indices and counts
as i64. The unique axis's size is -1 (known at run time)."""

from __future__ import annotations

import numpy as np

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.graph import PortType, fmt_bool
from irforge.dialects.nn.unique import Unique


@ir_xml_emitter(Unique)
def unique(ctx: EmitContext, op: Unique, inputs: list[Port]) -> list[Port]:
    operands = list(inputs)
    axis = op.unique_axis()
    if axis is not None:
        operands.append(ctx.const(np.array(axis, np.int64), ctx.name(op, "axis")))
    data = {"sorted": fmt_bool(op.bool_prop("sorted")), "index_element_type": "i64", "count_element_type": "i64"}
    outputs = [PortType.of(result.type) for result in op.results]
    return ctx.layer("Unique", operands, outputs, name=ctx.name(op), data=data, version="opset10")
