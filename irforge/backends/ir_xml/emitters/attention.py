"""Emitter of ScaledDotProductAttention: one opset13 layer, as ovc writes fused attention.

The layer's optional inputs are positional (q, k, v, mask, scale), so a scale property
written without a mask gets a scalar zero mask before it, the placeholder ovc writes too;
the reader drops that placeholder again, and the round trip is exact.

OpenVINO 2026.4.1's CPU plugin refuses the layer when q and k share a rank below v's
(q, k [H, L, E] with v [1, H, S, Ev], as GroupViT's dynamo export gives): compile_model
fails in its snippets ("ReduceDecomposition supports only Reduce by last dimension"). The
leading dims broadcast like numpy's, so q and k get leading 1s up to v's rank first: the
same numbers and the same output shape, and a form the plugin compiles. Its shape inference
refuses a 1-D mask [S] too: written [1, S].

The op's `fill` (a masked key's logit is the fill, whatever its score: a fused Where) has no
input in the opset's layer, which adds its mask: s + fill is NaN where a masked key's score is
+inf / NaN (the source's row finite) and lets masked keys through where the fill is not far
below every score. With `EXACT_FILL` such an op is written as MatMul / Select / SoftMax /
MatMul instead (`attention_fill`), the op's numbers exactly.
"""

from __future__ import annotations

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.emitters.attention_fill import decomposed, selects_keys
from irforge.backends.ir_xml.graph import PortType, fmt_bool
from irforge.dialects.nn.attention import ScaledDotProductAttention

EXACT_FILL = True
"""Whether an attention whose `fill` replaces masked keys' scores is written as the layers
that compute it (`attention_fill.decomposed`); False: the opset13 layer, which adds the mask
(other numbers than the source's for inf / NaN scores at masked keys, or fills not far below
the scores: session 14's IR)."""


def hits_ov_sdpa_rank_bug(q: Port, k: Port, v: Port) -> bool:
    """Whether OpenVINO 2026.4.1's CPU plugin fails to compile this SDPA: q and k of one
    rank, v of a higher one (every other mix of ranks 3 and 4 compiles)."""
    return len(q.dims) == len(k.dims) < len(v.dims)


def to_rank(ctx: EmitContext, x: Port, rank: int, name: str) -> Port:
    """`x` with leading 1s up to `rank` (an Unsqueeze: numpy broadcasting reads it alike)."""
    extra = rank - len(x.dims)
    return ctx.single("Unsqueeze", [x, ctx.ints(range(extra), f"{name}/axes")], x.type.with_dims((1,) * extra + tuple(x.dims)), name=name)


@ir_xml_emitter(ScaledDotProductAttention)
def scaled_dot_product_attention(ctx: EmitContext, op: ScaledDotProductAttention, inputs: list[Port]) -> list[Port]:
    if EXACT_FILL and selects_keys(op):
        return decomposed(ctx, op, inputs)
    q, k, v, *extras = inputs
    if op.scale is not None:
        mask = extras[0] if extras else ctx.scalar(0.0, q, ctx.name(op, "mask"))
        extras = [mask, ctx.scalar(op.float_prop("scale"), q, ctx.name(op, "scale"))]
    if extras and len(extras[0].dims) == 1:
        # OpenVINO 2026.4.1's shape inference refuses a 1-D mask [S] ("Attention mask input
        # shape not compatible"; ONNX Attention's short mask, padded): [1, S] broadcasts alike
        extras[0] = to_rank(ctx, extras[0], 2, ctx.name(op, "mask_rank"))
    if hits_ov_sdpa_rank_bug(q, k, v):
        q, k = to_rank(ctx, q, len(v.dims), ctx.name(op, "q_rank")), to_rank(ctx, k, len(v.dims), ctx.name(op, "k_rank"))
    data = {"causal": fmt_bool(op.bool_prop("causal"))}
    out = PortType.of(op.output.type)
    return [ctx.single("ScaledDotProductAttention", [q, k, v, *extras], out, name=ctx.name(op), data=data, version="opset13")]
