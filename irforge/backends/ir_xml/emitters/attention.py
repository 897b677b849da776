"""Emitter of ScaledDotProductAttention: one opset13 layer, as ovc writes fused attention.

The layer's optional inputs are positional (q, k, v, mask, scale), so a scale property
written without a mask gets a scalar zero mask before it, the placeholder ovc writes too;
the reader drops that placeholder again, and the round trip is exact.
"""

from __future__ import annotations

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.graph import PortType, fmt_bool
from irforge.dialects.nn.attention import ScaledDotProductAttention


@ir_xml_emitter(ScaledDotProductAttention)
def scaled_dot_product_attention(ctx: EmitContext, op: ScaledDotProductAttention, inputs: list[Port]) -> list[Port]:
    q, k, v, *extras = inputs
    if op.scale is not None:
        mask = extras[0] if extras else ctx.scalar(0.0, q, ctx.name(op, "mask"))
        extras = [mask, ctx.scalar(op.float_prop("scale"), q, ctx.name(op, "scale"))]
    data = {"causal": fmt_bool(op.bool_prop("causal"))}
    out = PortType.of(op.output.type)
    return [ctx.single("ScaledDotProductAttention", [q, k, v, *extras], out, name=ctx.name(op), data=data, version="opset13")]
