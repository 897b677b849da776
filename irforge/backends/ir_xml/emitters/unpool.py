"""Emitters of max pooling's indices and max unpooling: MaxPoolIndices is MaxPool-8's (or
MaxPool-14's, for ceil_torch rounding) second output; MaxUnpool, which OpenVINO has no
operation for, is a ScatterElementsUpdate-12 of the flattened planes into zeros (a Tile of a
one-element constant, so the .bin holds no output-sized array)."""

from __future__ import annotations

import numpy as np

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.emitters.conv import needs_ceil_torch, window_data
from irforge.backends.ir_xml.graph import PortType, fmt_ints
from irforge.dialects.nn.unpool import MaxPoolIndices, MaxUnpool


@ir_xml_emitter(MaxPoolIndices)
def max_pool_indices(ctx: EmitContext, op: MaxPoolIndices, inputs: list[Port]) -> list[Port]:
    x = inputs[0]
    indices = PortType.of(op.output.type)
    torch = needs_ceil_torch(op, x.dims[2:])  # type: ignore[arg-type]
    data = window_data(op)
    data.update(
        kernel=fmt_ints(op.ints("kernel")),
        rounding_type="ceil_torch" if torch else op.str_prop("rounding_type"),
        index_element_type="i64",
        axis=str(op.int_prop("axis")),
    )
    outputs = [indices.with_dtype(x.dtype), indices]
    return [ctx.layer("MaxPool", [x], outputs, name=ctx.name(op), data=data, version="opset14" if torch else "opset8")[1]]


@ir_xml_emitter(MaxUnpool)
def max_unpool(ctx: EmitContext, op: MaxUnpool, inputs: list[Port]) -> list[Port]:
    x, indices = inputs
    out = PortType.of(op.output.type)
    n, c = out.dims[:2]
    plane = int(np.prod(out.dims[2:]))
    flat = (n, c, int(np.prod(x.dims[2:])))
    zero = ctx.const(np.zeros((1, 1, 1), x.dtype), ctx.name(op, "zero"))
    zeros = ctx.single("Tile", [zero, ctx.ints((n, c, plane), ctx.name(op, "repeats"))], out.with_dims((n, c, plane)), name=ctx.name(op, "zeros"))
    updates = ctx.reshape(x, flat, ctx.name(op, "values"))
    where = ctx.reshape(indices, flat, ctx.name(op, "indices"))
    axis = ctx.const(np.array(2, np.int64), ctx.name(op, "axis"))
    data = {"reduction": "none", "use_init_val": "true"}
    scattered = ctx.single("ScatterElementsUpdate", [zeros, where, updates, axis], out.with_dims((n, c, plane)), name=ctx.name(op, "scatter"), data=data, version="opset12")
    return [ctx.reshape(scattered, out.dims, ctx.name(op))]
