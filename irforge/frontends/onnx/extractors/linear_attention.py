"""ONNX LinearAttention (opset 27: the recurrent state update of gated-delta-net / Mamba-2
style LLM layers) unrolled over its static sequence length into nn ops.

With q [B, Hq, T, dk], k [B, Hkv, T, dk], v [B, Hkv, T, dv] (split from [B, T, H*d]) and the
state S [B, Hkv, dk, dv] (past_state or 0), each step t (all in f32):

    S   = S * exp(decay_t)^T                     gated, gated_delta (decay per head or per dk)
    v_t = beta_t * (v_t - k_t @ S)               delta, gated_delta
    S   = S + k_t^T @ v_t                        (outer product)
    o_t = scale * q_t @ S                        (query heads grouped onto their KV head)

The outputs join along T into [B, T, Hq*dv]; present_state is the last S. OpenVINO's opset
has no recurrence of its own, so the graph grows with T: over MAX_STEPS it is refused.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Concat, Convert, Eltwise, MatMul, Permute, Reshape, Slice
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl, to_xdsl

RULES = ("linear", "gated", "delta", "gated_delta")
MAX_STEPS = 256
"""Longest sequence unrolled: about 8 ops a step (a decode step is T = 1)."""
F32 = np.dtype(np.float32)


def _heads(ctx: NodeContext, x: SSAValue, b: int, t: int, heads: int, suffix: str) -> SSAValue:
    """[B, T, H*d] (f32) -> [B, H, T, d]."""
    split = ctx.value(Reshape, [x], suffix=f"/{suffix}_split", shape=[b, t, heads, -1])
    return ctx.value(Permute, [split], suffix=f"/{suffix}_heads", order=[0, 2, 1, 3])


def _f32(ctx: NodeContext, index: int, suffix: str) -> SSAValue:
    x = ctx.input(index)
    if from_xdsl(ctx.input_type(index).element_type) != F32:
        x = ctx.value(Convert, [x], suffix=f"/{suffix}_f32", destination_type=to_xdsl(F32))
    return x


def _step(ctx: NodeContext, x: SSAValue, t: int, suffix: str) -> SSAValue:
    return ctx.value(Slice, [x], suffix=f"/{suffix}{t}", begins=[t], ends=[t + 1], axes=[2])


def _checked(ctx: NodeContext) -> tuple[str, int, int, int, int, int, int]:
    """(rule, B, T, Hq, Hkv, dk, dv) after the checks of ONNX's definition."""
    rule = str(ctx.attr("update_rule", "gated_delta"))
    if rule not in RULES:
        raise ctx.fail(f"update_rule '{rule}' is not one of {list(RULES)}", fix="use linear, gated, delta or gated_delta")
    hq, hkv = int(ctx.attr("q_num_heads")), int(ctx.attr("kv_num_heads"))
    if hq <= 0 or hkv <= 0 or hq % hkv:
        raise ctx.fail(f"q_num_heads {hq} must be a positive multiple of kv_num_heads {hkv}")
    (b, t, q_width), (_, _, k_width), (_, _, v_width) = (ctx.input_shape(i, rank=3) for i in range(3))
    if DYN in (b, t, q_width, k_width, v_width):
        raise ctx.fail("LinearAttention is unrolled over its sequence: shapes unknown at conversion", fix="give static input shapes (--input_shape)")
    if min(b, t, q_width, k_width, v_width) == 0:  # nothing to unroll (an empty step list): refused, not built
        raise ctx.fail(f"query/key/value of shapes {[list(ctx.input_shape(i)) for i in range(3)]} are empty", fix="give at least one batch "
                       "row, one step and features")  # fmt: skip
    if t > MAX_STEPS:
        raise ctx.fail(f"a sequence of {t} steps is over the {MAX_STEPS} irforge unrolls (OpenVINO has no recurrence op for it)",
                       fix=f"convert with a sequence length of at most {MAX_STEPS} (e.g. the decode graph, T = 1)")  # fmt: skip
    if q_width % hq or k_width % hkv or v_width % hkv or q_width // hq != k_width // hkv:
        raise ctx.fail(f"query/key/value widths {q_width}/{k_width}/{v_width} do not split into {hq}/{hkv}/{hkv} heads of one key size")
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gating != ctx.has_input(4) or delta != ctx.has_input(5):
        raise ctx.fail(f"update_rule '{rule}' needs {'decay' if gating else 'no decay'} and {'beta' if delta else 'no beta'}",
                       fix="give decay (input 4) for gated rules and beta (input 5) for delta rules, and nothing else")  # fmt: skip
    return rule, b, t, hq, hkv, q_width // hq, v_width // hkv


def _decay(ctx: NodeContext, b: int, t: int, hkv: int, dk: int) -> SSAValue:
    """exp(decay) as [B, Hkv, T, dk or 1]."""
    width = ctx.input_shape(4, rank=3)[2]
    if width not in (hkv, hkv * dk):
        raise ctx.fail(f"decay's last dim {width} must be kv_num_heads ({hkv}) or kv_num_heads * d_k ({hkv * dk})")
    return ctx.value(Activation, [_heads(ctx, _f32(ctx, 4, "decay"), b, t, hkv, "decay")], suffix="/decay_exp", kind="exp")


def _beta(ctx: NodeContext, b: int, t: int, hkv: int) -> SSAValue:
    width = ctx.input_shape(5, rank=3)[2]
    if width not in (hkv, 1):
        raise ctx.fail(f"beta's last dim {width} must be kv_num_heads ({hkv}) or 1")
    return _heads(ctx, _f32(ctx, 5, "beta"), b, t, width, "beta")  # [B, Hkv or 1, T, 1]


@onnx_extractor("LinearAttention")
def linear_attention(ctx: NodeContext) -> list[SSAValue]:
    rule, b, t, hq, hkv, dk, dv = _checked(ctx)
    q, k, v = (_heads(ctx, _f32(ctx, i, n), b, t, h, n) for i, n, h in ((0, "q", hq), (1, "k", hkv), (2, "v", hkv)))
    decay = _decay(ctx, b, t, hkv, dk) if ctx.has_input(4) else None
    beta = _beta(ctx, b, t, hkv) if ctx.has_input(5) else None
    if ctx.has_input(3):
        if ctx.input_shape(3) != (b, hkv, dk, dv):
            raise ctx.fail(f"past_state {list(ctx.input_shape(3))} must be {[b, hkv, dk, dv]}")
        state = _f32(ctx, 3, "past_state")
        state_dtype = from_xdsl(ctx.input_type(3).element_type)
    else:
        state = ctx.filled([b, hkv, dk, dv], np.zeros((), F32), "/zero_state")
        state_dtype = from_xdsl(ctx.input_type(0).element_type)
    scale = float(ctx.attr("scale", 0.0)) or 1.0 / math.sqrt(dk)
    scale_c = ctx.constant(np.array(scale, F32), "/scale")
    outputs = []
    for i in range(t):
        k_t, v_t = _step(ctx, k, i, "k"), _step(ctx, v, i, "v")  # [B, Hkv, 1, d]
        if decay is not None:
            gate = ctx.value(Permute, [_step(ctx, decay, i, "decay")], suffix=f"/gate{i}", order=[0, 1, 3, 2])
            state = ctx.value(Eltwise, [state, gate], suffix=f"/decayed{i}", operation="mul")
        if beta is not None:
            retrieved = ctx.value(MatMul, [k_t, state], suffix=f"/retrieved{i}")
            error = ctx.value(Eltwise, [v_t, retrieved], suffix=f"/error{i}", operation="sub")
            v_t = ctx.value(Eltwise, [_step(ctx, beta, i, "beta"), error], suffix=f"/corrected{i}", operation="mul")
        state = ctx.value(Eltwise, [state, ctx.value(MatMul, [k_t, v_t], suffix=f"/outer{i}", transpose_a=True)], suffix=f"/state{i}", operation="sum")
        grouped = ctx.value(Reshape, [_step(ctx, q, i, "q")], suffix=f"/q_grouped{i}", shape=[b, hkv, hq // hkv, dk])
        read = ctx.value(MatMul, [grouped, state], suffix=f"/read{i}")  # [B, Hkv, G, dv]
        read = ctx.value(Reshape, [read], suffix=f"/read_heads{i}", shape=[b, hq, 1, dv])
        outputs.append(ctx.value(Eltwise, [read, scale_c], suffix=f"/o{i}", operation="mul"))
    joined = ctx.value(Concat, outputs, suffix="/joined", axis=2) if t > 1 else outputs[0]
    output = ctx.value(Reshape, [ctx.value(Permute, [joined], suffix="/steps_first", order=[0, 2, 1, 3])], suffix="/output_f32", shape=[b, t, hq * dv])
    out_dtype = from_xdsl(ctx.input_type(0).element_type)
    if out_dtype != F32:
        output = ctx.value(Convert, [output], suffix="/output", destination_type=to_xdsl(out_dtype))
    if state_dtype != F32:
        state = ctx.value(Convert, [state], suffix="/present_state", destination_type=to_xdsl(state_dtype))
    return [output, state]
