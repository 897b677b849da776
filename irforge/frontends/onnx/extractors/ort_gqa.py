"""onnxruntime's com.microsoft GroupQueryAttention (what onnxruntime-genai's model builder
writes for LLaMA-family decoders) as one `nn.scaled_dot_product_attention` plus explicit ops
for the rotary embedding and the KV cache, following onnxruntime's CPU kernel:

    GroupQueryAttention(query, key?, value?, past_key?, past_value?, seqlens_k,
        total_sequence_length, cos_cache?, sin_cache?; num_heads, kv_num_heads, scale,
        softcap, do_rotary, rotary_interleaved, local_window_size, smooth_softmax)
        -> output [B, S, N*H], present_key, present_value [B, Nkv, max(T, P), H]

- query [B, S, N*H] with key / value [B, S, Nkv*H], or packed [B, S, (N + 2 Nkv) * H];
  past_key / past_value [B, Nkv, P, H] (BNSH; P may be the whole buffer, the shared-buffer
  form); total_sequence_length T must be known at conversion (genai computes it from the
  attention mask's shape); seqlens_k [B] (int32, total length - 1 per batch) stays a
  run-time value.
- The first prompt (S == T): no past rows are read; token s has position s (padding rows
  too, as onnxruntime's CPU kernel); query s sees keys 0..s. Later calls (decoding, S == 1, or
  a batch-1 follow-up prompt): past[b] = seqlens_k[b] + 1 - S rows of the cache are kept,
  the new keys are written at past[b]..past[b]+S-1 (gathered: row r takes new row r - past[b]),
  the rest of present is 0 (onnxruntime's separate present buffer); token s has position
  past[b] + s and sees keys 0..past[b]+s.
- do_rotary: Q and K turned with cos_cache / sin_cache rows at those positions (ort_rotary);
  a constant cache holding inf or NaN is refused (E121): its NaN scores are 0 after
  onnxruntime's softmax and NaN after ours (rotary caches are cosines and sines).
- local_window_size W > 0: query at position p sees the W keys p-W+1..p (W = 0 or beyond 32 bits: E041).
- grouped heads: Q as [B, Nkv, N/Nkv, S, H], K / V broadcast over the group axis.
- smooth_softmax: a key of zeros with value zeros, always visible, adds exp(0) to the
  denominator (onnxruntime's smooth softmax), so the op stays fused.
- softcap > 0: no fused form: MatMul, softcap * tanh(scores / softcap), Softmax, MatMul.

Refused with E186 (naming the input or attribute): attention_bias, head_sink, position_ids,
quantized KV caches (k_scale, v_scale, kv_cache_bit_width, k/v_quant_type), q/k norm
weights, query_seqlens, causal=0, sliding_window_cache, qk_output; unknown attributes E179.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Concat, Convert, Eltwise, GatherElements, MatMul, Permute, Reshape, Select, Slice, SoftMax, Unsqueeze
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.linear import show
from irforge.errors import IrforgeError
from irforge.frontends.onnx.extractors.ort_rotary import cache_rows, element_dtype, rotate, shape_of, unsupported
from irforge.frontends.onnx.extractors.quantize_contrib import MS, check_attributes
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

ATTRIBUTES = {"num_heads", "kv_num_heads", "scale", "softcap", "do_rotary", "rotary_interleaved", "local_window_size", "smooth_softmax",
              "qk_output", "causal", "kv_cache_bit_width", "k_quant_type", "v_quant_type", "sliding_window_cache", "q_norm_epsilon",
              "k_norm_epsilon", "qk_norm_epsilon"}
REFUSED_INPUTS = {9: "position_ids", 10: "attention_bias", 11: "head_sink", 12: "k_scale (a quantized KV cache)",
                  13: "v_scale (a quantized KV cache)", 14: "q_norm_weight", 15: "k_norm_weight", 16: "query_seqlens"}


def check_forms(ctx: NodeContext) -> None:
    """Every attribute value and input of the node irforge does not lower: E186 naming it."""
    check_attributes(ctx, ATTRIBUTES)
    for index, what in REFUSED_INPUTS.items():
        if ctx.has_input(index):
            raise unsupported(ctx, f"input #{index} {what}", "export without it (onnxruntime-genai's default CPU model has none)")
    for name, default in (("qk_output", 0), ("kv_cache_bit_width", 0), ("sliding_window_cache", 0)):
        if int(ctx.attr(name, default)) != default:
            raise unsupported(ctx, f"{name}={ctx.attr(name)}", f"export with {name}={default}")
    for name in ("k_quant_type", "v_quant_type"):
        if str(ctx.attr(name, "NONE")) != "NONE":
            raise unsupported(ctx, f"{name}={ctx.attr(name)} (a quantized KV cache)", "export with a float KV cache")
    if int(ctx.attr("causal", 1)) != 1:
        raise unsupported(ctx, f"causal={ctx.attr('causal')} (bidirectional attention)", "export a causal decoder")
    if ctx.output_used(3):
        raise unsupported(ctx, "the output_qk output", "do not read the node's fourth output")


class _GQA:
    """One GroupQueryAttention node: Q, K, V heads first, the cache and the masks."""

    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        for name in ("num_heads", "kv_num_heads"):
            if ctx.attr(name) is None or int(ctx.attr(name)) <= 0:
                raise ctx.fail(f"GroupQueryAttention needs a positive attribute {name}")
        self.heads, self.kv_heads = int(ctx.attr("num_heads")), int(ctx.attr("kv_num_heads"))
        if self.heads % self.kv_heads:
            raise ctx.fail(f"num_heads={self.heads} is not a multiple of kv_num_heads={self.kv_heads}")
        shape = ctx.input_shape(0, rank=3)
        if DYN in shape:
            raise ctx.fail(f"query of shape {show(shape)} needs its shape at conversion", fix="give static input shapes (--input_shape)")
        self.batch, self.length, hidden = shape
        self.dtype = element_dtype(ctx.input(0))
        total = ctx.required_constant(6, "total_sequence_length")
        if total.size != 1 or total.dtype.kind not in "iu":
            raise ctx.fail(f"total_sequence_length must be one integer, got shape {list(total.shape)} of {total.dtype}")
        self.total = int(total.reshape(()))
        self.first = self.length == self.total
        if not self.first and self.length > 1 and self.batch != 1:
            raise ctx.fail(f"a follow-up prompt of {self.length} tokens (total {self.total}) needs batch 1, got {self.batch}")
        self.q, self.k, self.v = self._split(hidden)
        if ctx.has_input(3) != ctx.has_input(4):
            raise ctx.fail("past_key and past_value must be given together")
        self.past_len = 0
        if ctx.has_input(3):
            for index in (3, 4):
                past = ctx.input_shape(index, rank=4)
                if DYN in past or past[:2] != (self.batch, self.kv_heads) or past[3] != self.head:
                    raise ctx.fail(f"input #{index} of shape {show(past)} is not [B={self.batch}, kv_num_heads={self.kv_heads}, P, H={self.head}]")
            self.past_len = ctx.input_shape(3)[2]
        self.present_len = max(self.total, self.past_len)
        seqlens = ctx.input_shape(5)
        if len(seqlens) != 1 or seqlens[0] not in (self.batch, DYN):
            raise ctx.fail(f"seqlens_k of shape {show(seqlens)} is not [batch {self.batch}]")
        self.seqlens = ctx.input(5)
        self.index_dtype = element_dtype(self.seqlens)
        if self.index_dtype.kind not in "iu":  # the positions below are built in its type
            raise ctx.fail(f"seqlens_k has element type {self.index_dtype}, an integer tensor (int32) is needed")

    def _split(self, hidden: int) -> tuple[SSAValue, SSAValue, SSAValue]:
        """Q [B, N, S, H], K and V [B, Nkv, S, H] from the packed or separate inputs."""
        ctx = self.ctx
        if not ctx.has_input(1):
            if ctx.has_input(2) or hidden % (self.heads + 2 * self.kv_heads):
                raise ctx.fail(f"packed QKV of hidden size {hidden} does not split into {self.heads} + 2 x {self.kv_heads} heads (or value given without key)")
            self.head = hidden // (self.heads + 2 * self.kv_heads)
            bounds = np.cumsum([0, self.heads, self.kv_heads, self.kv_heads]) * self.head
            parts = [ctx.value(Slice, [ctx.input(0)], suffix=f"/{name}", begins=[int(bounds[i])], ends=[int(bounds[i + 1])], axes=[2])
                     for i, name in enumerate("qkv")]
        else:
            if not ctx.has_input(2) or hidden % self.heads:
                raise ctx.fail(f"query of hidden size {hidden} does not split into {self.heads} heads (or key given without value)")
            self.head = hidden // self.heads
            parts = [ctx.input(0), ctx.input(1), ctx.input(2)]
            for index in (1, 2):
                if ctx.input_shape(index) != (self.batch, self.length, self.kv_heads * self.head):
                    raise ctx.fail(f"input #{index} of shape {show(ctx.input_shape(index))} is not [B, S, kv_num_heads * {self.head}]")
        return tuple(self._heads_first(part, heads, name)  # type: ignore[return-value]
                     for part, heads, name in zip(parts, (self.heads, self.kv_heads, self.kv_heads), "qkv"))

    def _heads_first(self, x: SSAValue, heads: int, name: str) -> SSAValue:
        split = self.ctx.value(Reshape, [x], suffix=f"/{name}_heads", shape=[self.batch, self.length, heads, self.head])
        return self.ctx.value(Permute, [split], suffix=f"/{name}_heads_first", order=[0, 2, 1, 3])

    def const(self, array: np.ndarray, suffix: str) -> SSAValue:
        return self.ctx.constant(np.asarray(array), suffix)

    # -- positions -------------------------------------------------------------------------
    def past_rows(self) -> SSAValue:
        """past[b] = seqlens_k[b] + 1 - S as [B, 1, 1, 1] (later calls only)."""
        shift = self.const(np.array(1 - self.length, self.index_dtype), "/past_shift")
        column = self.ctx.value(Reshape, [self.seqlens], suffix="/seqlens_column", shape=[self.batch, 1, 1, 1])
        return self.ctx.value(Eltwise, [column, shift], suffix="/past_rows", operation="sum")

    def positions(self) -> SSAValue:
        """The rotary position of every token: [B, S]."""
        ctx = self.ctx
        steps = self.const(np.arange(self.length, dtype=self.index_dtype)[None, :], "/steps")
        if self.first:  # padding rows too (onnxruntime 1.32's CPU kernel: position s)
            return steps
        past = ctx.value(Reshape, [self.past_rows()], suffix="/past_rows_2d", shape=[self.batch, 1])
        return ctx.value(Eltwise, [past, steps], suffix="/positions", operation="sum")

    def rotate(self) -> None:
        ctx = self.ctx
        if not (ctx.has_input(7) and ctx.has_input(8)):
            raise ctx.fail("do_rotary needs cos_cache and sin_cache (inputs #7 and #8)")
        width = ctx.input_shape(7, rank=2)[1]
        if ctx.input_shape(8) != ctx.input_shape(7) or 2 * width > self.head or ctx.input_shape(7)[0] < self.total:
            raise ctx.fail(f"cos_cache {show(ctx.input_shape(7))} / sin_cache {show(ctx.input_shape(8))} do not fit heads of {self.head} "
                           f"features and {self.total} positions")
        for index, name in ((7, "cos_cache"), (8, "sin_cache")):
            cache = ctx.constant_input(index)
            if cache is not None and not np.isfinite(cache).all():  # NaN scores: onnxruntime's softmax gives 0 where ours gives NaN
                raise IrforgeError(f"{name} holds inf or NaN; rotary caches are cosines and sines", where=ctx.where,
                                   fix=f"give a finite {name} (its values lie in [-1, 1])", code="E121")
        positions = self.positions()
        cos = ctx.value(Unsqueeze, [cache_rows(ctx, 7, positions, "/cos")], suffix="/cos_heads", axes=[1])
        sin = ctx.value(Unsqueeze, [cache_rows(ctx, 8, positions, "/sin")], suffix="/sin_heads", axes=[1])
        interleaved = ctx.flag("rotary_interleaved")
        self.q = rotate(ctx, self.q, cos, sin, 2 * width, interleaved, "/q_rotary")
        self.k = rotate(ctx, self.k, cos, sin, 2 * width, interleaved, "/k_rotary")

    # -- the cache ---------------------------------------------------------------------------
    def _zeros(self, rows: int, suffix: str) -> SSAValue:
        return self.ctx.filled([self.batch, self.kv_heads, rows, self.head], np.array(0, self.dtype), suffix)

    def present(self, new: SSAValue, past_index: int, name: str) -> SSAValue:
        """The present buffer [B, Nkv, max(T, P), H] with the new rows written after the past."""
        ctx, rows = self.ctx, self.present_len
        if self.first:
            return new if rows == self.length else ctx.value(Concat, [new, self._zeros(rows - self.length, f"/{name}_tail")],
                                                             suffix=f"/present_{name}", axis=2)
        past = ctx.input(past_index)
        if self.past_len < rows:
            past = ctx.value(Concat, [past, self._zeros(rows - self.past_len, f"/{name}_grown")], suffix=f"/{name}_past_grown", axis=2)
        keys = self.const(np.arange(rows, dtype=self.index_dtype).reshape(1, 1, rows, 1), "/cache_rows")
        kept = ctx.value(Eltwise, [keys, self.past_start], suffix=f"/{name}_kept", operation="less")
        # new row (r - past[b]) gathered, not a 0/1 matrix times K: inf * 0 would spread a
        # non-finite key over every row of the cache (onnxruntime copies rows)
        placed = ctx.value(GatherElements, [new, self.placement], suffix=f"/{name}_placed", axis=2)
        placed = ctx.value(Select, [self.placed_rows, placed, self._zeros(rows, f"/{name}_unwritten")], suffix=f"/{name}_written")
        return ctx.value(Select, [kept, past, placed], suffix=f"/present_{name}")

    def cache(self) -> tuple[SSAValue, SSAValue]:
        if not self.first:
            if not self.ctx.has_input(3):
                raise self.ctx.fail(f"a call after the first prompt (S={self.length}, total {self.total}) needs past_key / past_value")
            self.past_start = self.past_rows()
            rows = self.const(np.arange(self.present_len, dtype=self.index_dtype).reshape(1, 1, -1, 1), "/rows")
            offset = self.ctx.value(Eltwise, [rows, self.past_start], suffix="/row_offset", operation="sub")
            self.placed_rows = self.ctx.value(Eltwise, [offset, self.const(np.array(self.length, self.index_dtype), "/new_count")],
                                              suffix="/row_written", operation="less")  # and not kept: offset >= 0
            clipped = self.ctx.value(Eltwise, [offset, self.const(np.array(0, self.index_dtype), "/first_new")], suffix="/row_low", operation="max")
            clipped = self.ctx.value(Eltwise, [clipped, self.const(np.array(self.length - 1, self.index_dtype), "/last_new")], suffix="/row_source",
                                     operation="min")
            spread = self.const(np.zeros((1, self.kv_heads, 1, self.head), self.index_dtype), "/row_spread")
            self.placement = self.ctx.value(Eltwise, [clipped, spread], suffix="/placement", operation="sum")  # [B, Nkv, rows, H]
        return self.present(self.k, 3, "key"), self.present(self.v, 4, "value")

    # -- the mask ----------------------------------------------------------------------------
    def visible(self, keys: int) -> SSAValue | None:
        """[B or 1, 1, S, keys] bool: key j visible to query s (None: plain causal, S == keys)."""
        window = int(self.ctx.attr("local_window_size", -1))
        if window == 0 or window >= 2**31:  # onnxruntime: 0 hides every key (y = 0); a 32-bit int (2**32 is 0 there)
            raise self.ctx.fail(f"attribute local_window_size={window} must be -1 (no window) or from 1 to 2**31 - 1")
        if window > keys:  # a window wider than the cache hides nothing
            window = -1
        if self.first:
            query = np.arange(self.length)[:, None]
            key = np.arange(keys)[None, :]
            allowed = key <= query
            if window > 0:
                allowed &= key > query - window
            return None if window <= 0 and keys == self.length else self.const(allowed[None, None], "/visible")
        ctx = self.ctx
        steps = self.const(np.arange(self.length, dtype=self.index_dtype).reshape(1, 1, -1, 1), "/query_steps")
        query = ctx.value(Eltwise, [self.past_start, steps], suffix="/query_positions", operation="sum")
        key = self.const(np.arange(keys, dtype=self.index_dtype).reshape(1, 1, 1, -1), "/key_positions")
        allowed = ctx.value(Eltwise, [key, query], suffix="/causal", operation="less_equal")
        if window > 0:
            low = ctx.value(Eltwise, [query, self.const(np.array(window, self.index_dtype), "/window")], suffix="/window_start", operation="sub")
            inside = ctx.value(Eltwise, [key, low], suffix="/in_window", operation="greater")
            allowed = ctx.value(Eltwise, [allowed, inside], suffix="/visible", operation="and")
        return allowed


def _with_sink(ctx: NodeContext, gqa: _GQA, k: SSAValue, v: SSAValue, mask: SSAValue | None) -> tuple[SSAValue, SSAValue, SSAValue]:
    """smooth_softmax: one more key of zeros (score exp(0) = 1 in the denominator), value zeros,
    visible to every query."""
    keys = shape_of(k)[2]
    k = ctx.value(Concat, [k, gqa._zeros(1, "/sink_key")], suffix="/key_sink", axis=2)
    v = ctx.value(Concat, [v, gqa._zeros(1, "/sink_value")], suffix="/value_sink", axis=2)
    if mask is None:
        mask = gqa.const((np.arange(keys)[None, :] <= np.arange(gqa.length)[:, None])[None, None], "/visible")
    rows = shape_of(mask)
    sink = ctx.filled([rows[0], 1, rows[2], 1], np.array(True), "/sink_visible")
    return k, v, ctx.value(Concat, [mask, sink], suffix="/visible_sink", axis=3)


def _softcapped(ctx: NodeContext, gqa: _GQA, q: SSAValue, k: SSAValue, v: SSAValue, mask: SSAValue | None, scale: float,
                cap: float) -> SSAValue:
    """softmax(cap * tanh(q k^T * scale / cap) + mask) v as separate ops."""
    scaled = ctx.value(Eltwise, [q, gqa.const(np.array(scale, gqa.dtype), "/scale")], suffix="/q_scaled", operation="mul")
    scores = ctx.value(MatMul, [scaled, k], suffix="/scores", transpose_b=True)
    capped = ctx.value(Eltwise, [scores, gqa.const(np.array(cap, gqa.dtype), "/softcap")], suffix="/capped", operation="div")
    capped = ctx.value(Activation, [capped], suffix="/tanh", kind="tanh")
    scores = ctx.value(Eltwise, [capped, gqa.const(np.array(cap, gqa.dtype), "/softcap_out")], suffix="/softcapped", operation="mul")
    if mask is None:
        mask = gqa.visible(shape_of(k)[-2]) or gqa.const((np.arange(shape_of(k)[-2])[None, :] <= np.arange(gqa.length)[:, None])[None, None],
                                                        "/visible")
    bias = ctx.value(Select, [mask, gqa.const(np.array(0, gqa.dtype), "/zero"), gqa.const(np.array(-np.inf, gqa.dtype), "/neg_inf")],
                     suffix="/mask_bias")
    scores = ctx.value(Eltwise, [scores, bias], suffix="/biased", operation="sum")
    probs = ctx.value(SoftMax, [scores], suffix="/probs", axis=-1)
    return ctx.value(MatMul, [probs, v], suffix="/context")


@onnx_extractor("GroupQueryAttention", domain=MS)
def group_query_attention(ctx: NodeContext) -> list[SSAValue | None]:
    check_forms(ctx)
    gqa = _GQA(ctx)
    if ctx.flag("do_rotary"):
        gqa.rotate()
    present_k, present_v = gqa.cache()
    mask = gqa.visible(gqa.present_len)
    k, v = present_k, present_v
    if int(ctx.attr("smooth_softmax", -1)) == 1:
        k, v, mask = _with_sink(ctx, gqa, k, v, mask)
    q = gqa.q
    group = gqa.heads // gqa.kv_heads
    if group > 1:
        q = ctx.value(Reshape, [q], suffix="/q_groups", shape=[gqa.batch, gqa.kv_heads, group, gqa.length, gqa.head])
        k = ctx.value(Unsqueeze, [k], suffix="/k_groups", axes=[2])
        v = ctx.value(Unsqueeze, [v], suffix="/v_groups", axes=[2])
        if mask is not None:
            mask = ctx.value(Unsqueeze, [mask], suffix="/mask_groups", axes=[2])
    raw_scale = float(ctx.attr("scale", 0.0))
    scale = raw_scale if raw_scale != 0.0 else 1.0 / float(np.sqrt(gqa.head))
    cap = float(ctx.attr("softcap", 0.0))
    if cap > 0:
        y = _softcapped(ctx, gqa, q, k, v, mask, scale, cap)
    else:
        y = ctx.value(ScaledDotProductAttention, [q, k, v] if mask is None else [q, k, v, mask], suffix="/attention", causal=mask is None,
                      scale=scale)
    if group > 1:
        y = ctx.value(Reshape, [y], suffix="/heads", shape=[gqa.batch, gqa.heads, gqa.length, gqa.head])
    y = ctx.value(Permute, [y], suffix="/rows_first", order=[0, 2, 1, 3])
    y = ctx.value(Reshape, [y], shape=[gqa.batch, gqa.length, gqa.heads * gqa.head])
    return [y, present_k, present_v, None]
