"""onnxruntime's fused BERT-style contrib ops, Attention and EmbedLayerNormalization (domain
com.microsoft), as nn ops: what onnxruntime's transformer optimizer writes for BERT-like
encoders exported with eager attention, the "optimized ONNX" a user downloads or makes.

Attention(input, weights, bias?, mask_index?, past?, attention_bias?; num_heads, unidirectional,
qkv_hidden_sizes, mask_filter_value, scale):
    q, k, v = split(input @ weights + bias) into [B, S, heads, head] each, heads first;
    y = softmax(q k^T * scale + mask + attention_bias) v, heads merged back to [B, S, Hv]
    -> one FullyConnected, three slices and one `nn.scaled_dot_product_attention`. The mask,
    as onnxruntime's CPU kernel builds it, adds `mask_filter_value` (default -10000, not
    -inf) where a key is masked:
      - mask_index [B]: keys at or past the end position are masked; [2B]: also keys before
        the start position (the second half);
      - [B, total] or [B, S, total]: a raw mask, masked where it is 0;
      - unidirectional: keys after the query are masked too (the type's lowest value added,
        as onnxruntime: stronger than mask_filter_value).
    past [2, B, N, P, H] (the KV cache): K and V after past[0] / past[1], the mask over the
    P + S keys, unidirectional aligned bottom-right; present = [K, V] stacked, [2, B, N,
    P + S, H]. A 4-D mask is refused (E041); past_sequence_length /
    past_present_share_buffer (a preallocated cache) and rotary embeddings with E186.

EmbedLayerNormalization(input_ids, segment_ids?, word_embedding, position_embedding,
segment_embedding?, gamma, beta, mask?, position_ids?; epsilon):
    y = LayerNorm(word[ids] + position[position_ids or 0..S-1] + segment[segment_ids]) *
    gamma + beta over the last axis; mask_index = the mask's row sums (int32), what
    Attention reads as end positions; embedding_sum = the sum before the norm.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType, f32, i32
from xdsl.ir import SSAValue

from irforge.dialects.nn import MVN, Concat, Convert, Eltwise, FullyConnected, Gather, Permute, Reduce, Reshape, Select, Slice, Unsqueeze
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.linear import show
from irforge.frontends.onnx.extractors.ort_rotary import unsupported
from irforge.frontends.onnx.extractors.quantize_contrib import MS, check_attributes
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl


def _shape(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def _static(ctx: NodeContext, index: int, what: str, rank: int | None = None) -> tuple[int, ...]:
    if not ctx.has_input(index):
        raise ctx.fail(f"{what} needs input #{index}", fix="give every required input of the op")
    shape = ctx.input_shape(index)
    if rank is not None and len(shape) != rank:  # before unpacking: a wrong rank is the model's error, not an internal one
        raise ctx.fail(f"{what} needs input #{index} of rank {rank}, got {show(shape)}")
    if DYN in shape:
        raise ctx.fail(f"{what} needs its input's shape at conversion, got {show(shape)}", fix="give the input shapes (--input_shape)")
    return shape


def mask_bias(ctx: NodeContext, batch: int, length: int, total: int, dtype: np.dtype, index: int = 3) -> SSAValue | None:
    """The additive [B, 1 or S, total] bias of the mask (input `index`: Attention's mask_index,
    MultiHeadAttention's key_padding_mask) and unidirectional (None: no mask)."""
    fill = float(ctx.attr("mask_filter_value", -10000.0))
    zero, masked = ctx.constant(np.array(0, dtype), "/mask_zero"), ctx.constant(np.array(fill, dtype), "/mask_fill")
    bias: SSAValue | None = None
    if ctx.has_input(index):
        mask = ctx.input(index)
        shape = _shape(mask)
        if DYN in shape:
            raise ctx.fail(f"mask_index needs its shape at conversion, got {show(shape)}", fix="give the input shapes (--input_shape)")
        if len(shape) == 1 and shape[0] in (batch, 2 * batch):
            keys = ctx.constant(np.arange(total, dtype=np.dtype(from_xdsl(mask.type.element_type))), "/key_positions")  # type: ignore[attr-defined]
            ends = ctx.value(Slice, [mask], suffix="/ends", begins=[0], ends=[batch])
            ends = ctx.value(Reshape, [ends], suffix="/ends_column", shape=[batch, 1, 1])
            keep = ctx.value(Eltwise, [keys, ends], suffix="/before_end", operation="less")
            if shape[0] == 2 * batch:
                starts = ctx.value(Slice, [mask], suffix="/starts", begins=[batch], ends=[2 * batch])
                starts = ctx.value(Reshape, [starts], suffix="/starts_column", shape=[batch, 1, 1])
                after = ctx.value(Eltwise, [keys, starts], suffix="/after_start", operation="greater_equal")
                keep = ctx.value(Eltwise, [keep, after], suffix="/in_range", operation="and")
        elif len(shape) in (2, 3) and shape[0] == batch and shape[-1] == total and (len(shape) == 2 or shape[1] == length):
            raw = ctx.value(Reshape, [mask], suffix="/mask_rows", shape=[batch, 1, total]) if len(shape) == 2 else mask
            keep = ctx.value(Eltwise, [raw, ctx.constant(np.array(0, np.dtype(from_xdsl(mask.type.element_type))), "/zero_i")],  # type: ignore[attr-defined]
                             suffix="/kept", operation="greater")
        else:
            raise ctx.fail(f"mask_index of shape {show(shape)} is not a form irforge reads (batch {batch}, {length} queries, {total} keys)",
                           fix="use end positions [B] / [2B] or a raw mask [B, total] / [B, S, total]")
        bias = ctx.value(Select, [keep, zero, masked], suffix="/mask_bias")
    if ctx.flag("unidirectional"):
        # onnxruntime's PrepareMask writes the type's lowest value (not mask_filter_value) at
        # later keys: a query whose keys are all padded still never sees a later key
        later = np.arange(total)[None, :] > np.arange(length)[:, None] + (total - length)
        causal = ctx.constant(np.where(later, np.finfo(dtype).min, np.array(0, dtype)).astype(dtype), "/causal_bias")
        bias = causal if bias is None else ctx.value(Eltwise, [bias, causal], suffix="/mask_causal", operation="sum")
    return bias


def _past(ctx: NodeContext, heads: int, sizes: list[int], batch: int) -> tuple[SSAValue | None, int]:
    """The past state [2, B, N, P, H] (or None) and its length P."""
    if not ctx.has_input(4):
        return None, 0
    shape = _static(ctx, 4, "Attention's past", 5)
    if sizes[1] != sizes[2] or shape[:3] != (2, batch, heads) or shape[4] * heads != sizes[1]:
        raise ctx.fail(f"past of shape {show(shape)} is not [2, B={batch}, num_heads={heads}, P, {sizes[1] // heads}] (and K / V of one size)")
    return ctx.input(4), shape[3]


def _with_past(ctx: NodeContext, past: SSAValue, k: SSAValue, v: SSAValue) -> tuple[SSAValue, SSAValue]:
    """K and V after the cached rows: past[0] and past[1] before the new ones."""
    rows = list(_shape(past)[1:])
    old = [ctx.value(Reshape, [ctx.value(Slice, [past], suffix=f"/past_{n}", begins=[i], ends=[i + 1], axes=[0])], suffix=f"/past_{n}_rows",
                     shape=rows, special_zero=False) for i, n in enumerate("kv")]
    return (ctx.value(Concat, [old[0], k], suffix="/key_total", axis=2), ctx.value(Concat, [old[1], v], suffix="/value_total", axis=2))


@onnx_extractor("Attention", domain=MS)
def ort_attention(ctx: NodeContext) -> list[SSAValue | None]:
    check_attributes(ctx, {"num_heads", "unidirectional", "qkv_hidden_sizes", "mask_filter_value", "scale", "do_rotary",
                           "rotary_embedding_dim", "past_present_share_buffer"})
    if ctx.flag("do_rotary"):
        raise unsupported(ctx, "do_rotary=1 (rotary embeddings inside Attention)", "export without onnxruntime's rotary fusion")
    if ctx.flag("past_present_share_buffer"):
        raise unsupported(ctx, "past_present_share_buffer=1 (a preallocated cache)", "export with separate past and present")
    if ctx.has_input(6):
        raise unsupported(ctx, "input #6 past_sequence_length (a preallocated cache)", "export with separate past and present")
    batch, length, hidden = _static(ctx, 0, "Attention", 3)
    if ctx.attr("num_heads") is None:  # com.microsoft ops have no schema in onnx: checked here
        raise ctx.fail("Attention (com.microsoft) needs the attribute num_heads")
    heads = int(ctx.attr("num_heads"))
    rows, width = _static(ctx, 1, "Attention", 2)
    if rows != hidden or heads <= 0:
        raise ctx.fail(f"Attention of num_heads={heads} with weights {show((rows, width))} does not fit the input's hidden size {hidden}")
    sizes = [int(s) for s in ctx.attr("qkv_hidden_sizes", [width // 3] * 3)]
    if len(sizes) != 3 or sum(sizes) != width or sizes[0] != sizes[1] or any(s % heads for s in sizes):
        raise ctx.fail(f"qkv_hidden_sizes {sizes} do not split the {width} weight columns into q, k, v of {heads} heads")
    past, past_length = _past(ctx, heads, sizes, batch)
    if ctx.output_used(1) and past is None:
        raise unsupported(ctx, "the present output without a past input", "give the past state (of length 0 for the first call)")
    dtype = np.dtype(from_xdsl(ctx.input_type(0).element_type))
    weights = ctx.required_constant(1, "the qkv weights")
    operands = [ctx.input(0), ctx.constant(np.ascontiguousarray(weights.T), "/qkv_weights")]
    if ctx.has_input(2):
        operands.append(ctx.input(2))
    qkv = ctx.value(FullyConnected, operands, suffix="/qkv")
    parts = []
    begin = 0
    for name, size in zip("qkv", sizes):
        part = ctx.value(Slice, [qkv], suffix=f"/{name}", begins=[begin], ends=[begin + size], axes=[2])
        part = ctx.value(Reshape, [part], suffix=f"/{name}_heads", shape=[batch, length, heads, size // heads])
        parts.append(ctx.value(Permute, [part], suffix=f"/{name}_heads_first", order=[0, 2, 1, 3]))
        begin += size
    present = None
    if past is not None:
        parts[1], parts[2] = _with_past(ctx, past, parts[1], parts[2])
        if ctx.output_used(1):
            stacked = [ctx.value(Unsqueeze, [p], suffix=f"/present_{n}", axes=[0]) for p, n in zip(parts[1:], "kv")]
            present = ctx.value(Concat, stacked, suffix="/present", axis=0)
    bias = mask_bias(ctx, batch, length, past_length + length, dtype)
    if bias is not None:
        bias = ctx.value(Reshape, [bias], suffix="/mask_heads", shape=[batch, 1, *_shape(bias)[-2:]] if len(_shape(bias)) == 3 else [1, 1, *_shape(bias)])
    if ctx.has_input(5):
        bias = ctx.input(5) if bias is None else ctx.value(Eltwise, [bias, ctx.input(5)], suffix="/attention_bias", operation="sum")
    props: dict[str, object] = {}
    if ctx.attr("scale", None) is not None and float(ctx.attr("scale")) != 0.0:
        props["scale"] = float(ctx.attr("scale"))
    y = ctx.value(ScaledDotProductAttention, parts if bias is None else [*parts, bias], suffix="/attention", **props)
    y = ctx.value(Permute, [y], suffix="/rows_first", order=[0, 2, 1, 3])
    return [ctx.value(Reshape, [y], shape=[batch, length, sizes[2]]), present]


@onnx_extractor("EmbedLayerNormalization", domain=MS)
def embed_layer_norm(ctx: NodeContext) -> list[SSAValue | None]:
    check_attributes(ctx, {"epsilon", "mask_index_type"})
    batch, length = _static(ctx, 0, "EmbedLayerNormalization", 2)
    for index, what in ((2, "word_embedding"), (3, "position_embedding")):
        _static(ctx, index, f"EmbedLayerNormalization's {what}", 2)
    total = ctx.value(Gather, [ctx.input(2), ctx.input(0)], suffix="/words")
    if ctx.has_input(8):
        positions = ctx.input(8)
    else:
        positions = ctx.constant(np.arange(length, dtype=np.int32)[None, :], "/position_ids")
    total = ctx.value(Eltwise, [total, ctx.value(Gather, [ctx.input(3), positions], suffix="/positions")], suffix="/with_positions",
                      operation="sum")
    if ctx.has_input(1) != ctx.has_input(4):
        raise ctx.fail("segment_ids and segment_embedding must be given together")
    if ctx.has_input(1):
        segments = ctx.value(Gather, [ctx.input(4), ctx.input(1)], suffix="/segments")
        total = ctx.value(Eltwise, [total, segments], suffix="/embedding_sum", operation="sum")
    eps = float(ctx.attr("epsilon", 1e-12))
    y = ctx.value(MVN, [total], suffix="/mvn", axes=[2], eps=eps, normalize_variance=True, eps_mode="inside_sqrt")
    y = ctx.value(Eltwise, [y, ctx.input(5)], suffix="/scaled", operation="mul")
    y = ctx.value(Eltwise, [y, ctx.input(6)], operation="sum")
    mask_index = None
    if ctx.output_used(1):
        if ctx.has_input(7):
            # summed in f32 (exact below 2^24 keys): the native backends reduce floats
            ones = ctx.value(Convert, [ctx.input(7)], suffix="/mask_f32", destination_type=f32)
            count = ctx.value(Reduce, [ones], suffix="/mask_count", operation="sum", axes=[1], keep_dims=False)
            mask_index = ctx.value(Convert, [count], suffix="/mask_index", destination_type=i32)
        else:  # no mask: every key counts (onnxruntime writes zeros, which its Attention reads as "no mask")
            raise ctx.fail("the mask_index output without a mask input is not supported", fix="give the attention mask as input #7")
    return [y, mask_index, total if ctx.output_used(2) else None]
