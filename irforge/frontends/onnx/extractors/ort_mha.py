"""onnxruntime's com.microsoft MultiHeadAttention (what its transformer optimizer writes for
encoder-decoder and diffusion models, and for decoders whose projections stay separate) as
one `nn.scaled_dot_product_attention`:

    MultiHeadAttention(query, key?, value?, bias?, key_padding_mask?, attention_bias?,
        past_key?, past_value?, past_sequence_length?, cache_indirection?;
        num_heads, unidirectional, scale, mask_filter_value)
        -> output [B, S, Dv], present_key [B, N, P + L, H], present_value, qk?

- query [B, S, D]; key / value [B, L, D] / [B, L, Dv] (split into heads, `bias` [D + D + Dv]
  added to Q, K, V first), or key / value already [B, N, L, H] (cross-attention with the
  projected encoder states; then no bias and no past);
- past_key / past_value [B, N, P, H] go before the new keys; present = the keys and values
  attended to (also for the [B, N, L, H] form: key and value themselves);
- key_padding_mask as onnxruntime's CPU kernel reads it (mask_filter_value, default -10000,
  added where a key is masked): end positions [B], or a raw 0/1 mask [B, P + L] / [B, S,
  P + L]; unidirectional: keys after the query (bottom-right with a cache) get it too;
  attention_bias [1 or B, 1 or N, S, P + L] is added.

Refused with E186: packed QKV [B, L, N, 3, H] / packed KV [B, L, N, 2, H] (onnxruntime's
CPU kernel does not run them either), a bias with [B, N, L, H] keys, past_sequence_length and
cache_indirection (the decoder-masked beam-search form), the qk output.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Eltwise, Permute, Reshape, Slice
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.linear import show
from irforge.frontends.onnx.extractors.ort_attention import mask_bias
from irforge.frontends.onnx.extractors.ort_rotary import element_dtype, shape_of, unsupported
from irforge.frontends.onnx.extractors.quantize_contrib import MS, check_attributes
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor


def _check_forms(ctx: NodeContext) -> None:
    check_attributes(ctx, {"num_heads", "unidirectional", "scale", "mask_filter_value"})
    if len(ctx.input_shape(0)) == 5:
        raise unsupported(ctx, "packed QKV (query [B, L, N, 3, H])", "export Q, K and V separately (onnxruntime's CPU kernel needs it too)")
    if ctx.has_input(1) and len(ctx.input_shape(1)) == 5:
        raise unsupported(ctx, "packed KV (key [B, L, N, 2, H])", "export K and V separately (onnxruntime's CPU kernel needs it too)")
    for index, what in ((8, "past_sequence_length"), (9, "cache_indirection")):
        if ctx.has_input(index):
            raise unsupported(ctx, f"input #{index} {what} (the decoder-masked beam-search form)", "export with a plain past / present cache")
    if ctx.output_used(3):
        raise unsupported(ctx, "the qk output", "do not read the node's fourth output")
    if not ctx.has_input(1) or not ctx.has_input(2):
        raise ctx.fail("MultiHeadAttention needs key and value (packed forms are refused)")
    if ctx.has_input(6) != ctx.has_input(7):
        raise ctx.fail("past_key and past_value must be given together")


def _heads_first(ctx: NodeContext, x: SSAValue, heads: int, name: str) -> SSAValue:
    batch, rows, width = shape_of(x)
    if width % heads:
        raise ctx.fail(f"{name} of width {width} does not split into {heads} heads")
    split = ctx.value(Reshape, [x], suffix=f"/{name}_heads", shape=[batch, rows, heads, width // heads])
    return ctx.value(Permute, [split], suffix=f"/{name}_heads_first", order=[0, 2, 1, 3])


def _biased(ctx: NodeContext, x: SSAValue, begin: int, width: int, name: str) -> SSAValue:
    """x + bias[begin:begin + width] (the packed Q/K/V bias)."""
    part = ctx.value(Slice, [ctx.input(3)], suffix=f"/{name}_bias", begins=[begin], ends=[begin + width], axes=[0])
    return ctx.value(Eltwise, [x, part], suffix=f"/{name}_biased", operation="sum")


def _operands(ctx: NodeContext, heads: int) -> tuple[SSAValue, SSAValue, SSAValue, bool]:
    """Q, K, V heads first, the bias added; whether K / V came as [B, N, L, H]."""
    for index in range(3):
        if DYN in ctx.input_shape(index):
            raise ctx.fail(f"input #{index} of shape {show(ctx.input_shape(index))} needs its shape at conversion",
                           fix="give static input shapes (--input_shape)")
    q = ctx.input(0)
    batch, length, width = ctx.input_shape(0, rank=3)
    k, v = ctx.input(1), ctx.input(2)
    heads_first = len(ctx.input_shape(1)) == 4
    if heads_first:
        if ctx.has_input(3):
            raise unsupported(ctx, "bias with key / value of shape [B, N, L, H]", "add the bias to the projections before the node")
        if ctx.has_input(6):
            raise unsupported(ctx, "past_key with key / value of shape [B, N, L, H]", "pass the whole cache as key / value")
        for index in (1, 2):
            shape = ctx.input_shape(index, rank=4)
            if shape[:2] != (batch, heads):
                raise ctx.fail(f"input #{index} of shape {show(shape)} is not [B={batch}, num_heads={heads}, L, H]")
    else:
        for index in (1, 2):
            shape = ctx.input_shape(index, rank=3)
            if shape[0] != batch:
                raise ctx.fail(f"input #{index} of shape {show(shape)} is not [B={batch}, L, hidden]")
    if ctx.has_input(3):
        kv_width, v_width = ctx.input_shape(1)[2], ctx.input_shape(2)[2]
        if ctx.input_shape(3) != (width + kv_width + v_width,):
            raise ctx.fail(f"bias of shape {show(ctx.input_shape(3))} is not [{width} + {kv_width} + {v_width}]")
        q, k, v = _biased(ctx, q, 0, width, "q"), _biased(ctx, k, width, kv_width, "k"), _biased(ctx, v, width + kv_width, v_width, "v")
    q = _heads_first(ctx, q, heads, "q")
    if not heads_first:
        k, v = _heads_first(ctx, k, heads, "k"), _heads_first(ctx, v, heads, "v")
    return q, k, v, heads_first


def _with_past(ctx: NodeContext, k: SSAValue, v: SSAValue) -> tuple[SSAValue, SSAValue]:
    for index, new in ((6, k), (7, v)):
        past = ctx.input_shape(index, rank=4)
        if DYN in past or past[:2] != shape_of(new)[:2] or past[3] != shape_of(new)[3]:
            raise ctx.fail(f"input #{index} of shape {show(past)} does not fit the new keys / values {show(shape_of(new))}",
                           fix="give static input shapes (--input_shape)")
    return (ctx.value(Concat, [ctx.input(6), k], suffix="/key_total", axis=2), ctx.value(Concat, [ctx.input(7), v], suffix="/value_total", axis=2))


@onnx_extractor("MultiHeadAttention", domain=MS)
def multi_head_attention(ctx: NodeContext) -> list[SSAValue | None]:
    _check_forms(ctx)
    if ctx.attr("num_heads") is None or int(ctx.attr("num_heads")) <= 0:
        raise ctx.fail("MultiHeadAttention needs a positive attribute num_heads")
    heads = int(ctx.attr("num_heads"))
    q, k, v, _ = _operands(ctx, heads)
    if ctx.has_input(6):
        k, v = _with_past(ctx, k, v)
    batch, _, length, _ = shape_of(q)
    total = shape_of(k)[2]
    dtype = element_dtype(ctx.input(0))
    bias = mask_bias(ctx, batch, length, total, dtype, index=4)
    if bias is not None:
        bias = ctx.value(Reshape, [bias], suffix="/mask_heads", shape=[batch, 1, *shape_of(bias)[-2:]] if len(shape_of(bias)) == 3 else [1, 1, *shape_of(bias)])
    if ctx.has_input(5):
        wanted = shape_of(ctx.input(5))  # onnxruntime's form; OpenVINO refuses other broadcasts
        if len(wanted) != 4 or wanted[0] not in (1, batch) or wanted[1] not in (1, heads) or tuple(wanted[2:]) != (length, total):
            raise ctx.fail(f"attention_bias of shape {show(wanted)} is not [{batch} or 1, {heads} or 1, {length}, {total}]")
        bias = ctx.input(5) if bias is None else ctx.value(Eltwise, [bias, ctx.input(5)], suffix="/attention_bias", operation="sum")
    props: dict[str, object] = {}
    if ctx.attr("scale", None) is not None and float(ctx.attr("scale")) != 0.0:
        props["scale"] = float(ctx.attr("scale"))
    y = ctx.value(ScaledDotProductAttention, [q, k, v] if bias is None else [q, k, v, bias], suffix="/attention", **props)
    y = ctx.value(Permute, [y], suffix="/rows_first", order=[0, 2, 1, 3])
    y = ctx.value(Reshape, [y], shape=[batch, length, heads * shape_of(v)[3]])
    return [y, k if ctx.output_used(1) else None, v if ctx.output_used(2) else None, None]

