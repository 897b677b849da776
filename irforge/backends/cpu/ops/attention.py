"""Lowering of ScaledDotProductAttention onto the kernels MatMul and SoftMax already use.

    kT     = k with its last two axes swapped       (copy kernel, into scratch)
    scores = q @ kT                                  (GEMM core, batched with broadcasting)
    scores = scores * scale (+ bias | select mask)   (pointwise kernels)
    probs  = softmax over the last axis              (row kernel)
    y      = probs @ v                               (GEMM core)

The scores and probabilities live in scratch, [batch..., L, S] each. The bias is the -inf
triangle when causal, the float mask added, or an i1 mask adding -inf where it is false;
with the op's `fill`, a masked key's logit is the fill in place of the biased score.
A mask that would broadcast the scores to more batches than q and k give has no kernel here
(the reference kernel runs it).

With a constant scale, no causal flag or i1 mask, and q, k, v of the same batch axes, the
op is one phase of `codegen/attention.py` instead (`FUSED`): blocks of query rows whose
scores stay in cache, never the whole [batch..., L, S] tensor (after kT's copy, where the
kernel does not pack the keys itself: `attention.PACK_KEYS`).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from xdsl.ir import SSAValue

from irforge.backends.cpu.codegen import attention as kernel_knobs
from irforge.backends.cpu.codegen.attention import AttentionSpec, attention_kernel, block_rows, packs_keys, row_stride
from irforge.backends.cpu.codegen.gemm import Batch, GemmSpec
from irforge.backends.cpu.codegen.rows import RowSpec
from irforge.backends.cpu.lower import Buffer, Lowering, dtype_of, lowering, shape_of
from irforge.backends.cpu.ops.gemm_function import gemm_function
from irforge.backends.cpu.ops.elementwise import pointwise_phase
from irforge.backends.cpu.ops.linear import _batch_strides as batch_strides
from irforge.backends.cpu.ops.linear import merges_heads
from irforge.backends.cpu.ops.movement import relayout
from irforge.backends.cpu.ops.reduce import rows_phase
from irforge.dialects.nn import MatMul
from irforge.dialects.nn.elementwise import Select
from irforge.dialects.nn.indexing import IsNaN
from irforge.dialects.nn.attention import ScaledDotProductAttention
from irforge.dialects.nn.base import broadcast_shapes
from irforge.errors import IrforgeError

Shape = tuple[int, ...]

FUSED = True
"""Lower to the blocked attention kernel where it applies (`fused_spec`); False: always the
phases above (the A/B knob)."""


def batched_gemm(ctx: Lowering, a: tuple[Buffer, Shape], b: tuple[Buffer, Shape], out: tuple[Buffer, Shape]) -> None:
    """out[..., m, n] = a[..., m, k] @ b[..., k, n], all row-major, batch axes broadcast."""
    (a_buf, a_shape), (b_buf, b_shape), (c_buf, c_shape) = a, b, out
    m, k, n = a_shape[-2], a_shape[-1], b_shape[-1]
    batch = c_shape[:-2]
    strides = zip(
        batch_strides(a_shape[:-2], batch, m * k), batch_strides(b_shape[:-2], batch, k * n), batch_strides(batch, batch, m * n)
    )
    levels = tuple(Batch(size, sa, sb, sc) for size, (sa, sb, sc) in zip(batch, strides))
    spec = GemmSpec(m=m, n=n, k=k, a_panel=False, a_rs=k, a_cs=1, b_panel=False, ldb=n, ldc=n, batches=levels)
    name = gemm_function(ctx, spec)
    ctx.phase(name, [a_buf, b_buf, c_buf], "attention", 2 * math.prod(c_shape) * k)


def scaled_and_masked(ctx: Lowering, op: ScaledDotProductAttention, scores: Buffer, shape: Shape) -> Buffer:
    """scores * scale + bias, into a new scratch buffer (the input stays for nothing else)."""
    if op.scale_input is not None:
        factor, factor_shape = ctx.input(op, 4), shape_of(op.scale_input)
    else:
        factor, factor_shape = ctx.const(np.array([op.static_scale()], np.float32)), (1,)
    scaled = ctx.scratch(4 * math.prod(shape))
    pointwise_phase(ctx, shape, [scores, factor], [shape, factor_shape], "bin.mul", (), scaled)
    if op.bool_prop("causal"):
        above = -np.inf if op.masked_fill() is None else op.masked_fill()
        triangle = np.triu(np.full(shape[-2:], above, np.float32), k=1)
        bias, bias_shape = ctx.const(triangle), shape[-2:]
    elif op.mask is not None:
        bias, bias_shape = ctx.input(op, 3), shape_of(op.mask)
    else:
        return scaled
    masked = ctx.scratch(4 * math.prod(shape))
    boolean = op.mask is not None and dtype_of(op.mask) == np.bool_ and not op.bool_prop("causal")
    fill = op.masked_fill()
    if boolean and fill is not None:  # the source's Where(keep, s, fill): the fill whatever s is
        fill_buf = ctx.const(np.array([fill], np.float32))
        pointwise_phase(ctx, shape, [bias, scaled, fill_buf], [bias_shape, shape, (1,)], "select", (), masked, ("bool", "f32", "f32", "f32"))
        return masked
    if boolean:
        # -inf added where false (the opset's semantics: s + -inf is NaN for s = +inf or NaN,
        # as onnxruntime's Attention gives), s itself where true
        ninf = ctx.const(np.array([-np.inf], np.float32))
        pointwise_phase(ctx, shape, [scaled, ninf], [shape, (1,)], "bin.sum", (), masked)
        pointwise_phase(ctx, shape, [bias, scaled, masked], [bias_shape, shape, shape], "select", (), masked, ("bool", "f32", "f32", "f32"))
        return masked
    pointwise_phase(ctx, shape, [scaled, bias], [shape, bias_shape], "bin.sum", (), masked)
    if fill is not None:  # keys masked (the float mask, or the triangle, at or below the fill) take its value
        fill_buf = ctx.const(np.array([fill], np.float32))
        hit = ctx.scratch(math.prod(shape))
        pointwise_phase(ctx, shape, [bias, fill_buf], [bias_shape, (1,)], "cmp.less_equal", (), hit, ("f32", "f32", "bool"))
        pointwise_phase(ctx, shape, [hit, bias, masked], [shape, bias_shape, shape], "select", (), masked, ("bool", "f32", "f32", "f32"))
    return masked


def check_types(op: ScaledDotProductAttention) -> None:
    """f32 tensors, but for an i1 mask (the kernels compute in f32, as the others here)."""
    boolean_mask = op.mask is not None and dtype_of(op.mask) == np.bool_
    for value in (*op.operands, op.output):
        if dtype_of(value) != np.float32 and not (boolean_mask and value is op.mask):
            raise IrforgeError(f"'{op.name}' on {value.type} has no CPU kernel (f32 only)", where=op.label,
                               fix="run the model with --device ref", code="E842")


@lowering(ScaledDotProductAttention)
def scaled_dot_product_attention(ctx: Lowering, op: ScaledDotProductAttention) -> None:
    check_types(op)
    q, k, v = (shape_of(op.operands[i]) for i in range(3))
    scores_shape = (*broadcast_shapes(op, q[:-2], k[:-2]), q[-2], k[-2])
    if op.mask is not None and not op.bool_prop("causal") and broadcast_shapes(op, scores_shape, shape_of(op.mask)) != scores_shape:
        raise IrforgeError(f"'{op.name}' with a mask that broadcasts the scores has no CPU kernel", where=op.label,
                           fix="run the model with --device ref", code="E842")
    rank = len(k)
    spec = fused_spec(op, scores_shape) if FUSED else None
    if spec is None or not spec.packed_keys:
        k_t = ctx.scratch(4 * math.prod(k))
        relayout(ctx, op, ctx.input(op, 1), k, (*range(rank - 2), rank - 1, rank - 2), k_t)
    if spec is not None:
        guard = nan_guard(ctx, op)
        final = op.output
        if guard is not None:
            ctx.absorbed.update(guard)
            final = guard[1].output
            spec = replace(spec, nan_to_zero=True)
        heads = heads_rows(ctx, final)
        if heads and spec.rows * spec.dv <= kernel_knobs.STAGED_MAX:
            spec = replace(spec, heads=heads)
        fused = spec
        name = ctx.kernel(("attention", fused), lambda mod, nm: attention_kernel(mod, fused, nm), fused.workspace_bytes())
        keys = ctx.input(op, 1) if spec.packed_keys else k_t
        out = ctx.result(final)
        ctx.alias(op.output, out)
        if spec.heads:
            ctx.heads_rows.add(out)
        args = [ctx.input(op, 0), keys, ctx.input(op, 2), out] + ([ctx.input(op, 3)] if spec.mask else [])
        ctx.phase(name, args, "attention", 2 * math.prod(scores_shape) * (spec.d + spec.dv))
        return
    scores = ctx.scratch(4 * math.prod(scores_shape))
    batched_gemm(ctx, (ctx.input(op, 0), q), (k_t, (*k[:-2], k[-1], k[-2])), (scores, scores_shape))
    logits = scaled_and_masked(ctx, op, scores, scores_shape)
    probs = ctx.scratch(4 * math.prod(scores_shape))
    rows_phase(ctx, RowSpec(math.prod(scores_shape[:-1]), scores_shape[-1], 1, "softmax"), logits, probs)
    batched_gemm(ctx, (probs, scores_shape), (ctx.input(op, 2), v), (ctx.output(op), shape_of(op.output)))


def heads_rows(ctx: Lowering, final: SSAValue) -> int:
    """H where the fused kernel writes its [B, H, L, Dv] output `final` as [B, L, H, Dv] rows
    for its one user, a merged-heads output projection (`attention.HEADS_ROWS`); else 0."""
    shape = shape_of(final)
    user = ctx.single_use(final)
    if not kernel_knobs.HEADS_ROWS or len(shape) != 4 or not isinstance(user, MatMul) or user.a is not final:
        return 0
    return shape[1] if merges_heads(ctx, user) else 0


NAN_GUARD = True
"""The fused kernel stores 0 for NaN outputs itself where the output's only users are the
dynamo exporter's guard `Where(IsNaN(y), 0, y)` (HF models' SDPA with a mask; DistilBERT,
RoBERTa): those two phases go, and the output projection after the guard can merge with
the kernel's rows (`heads_rows`). False: the guard's own phases (A/B switch)."""


def nan_guard(ctx: Lowering, op: ScaledDotProductAttention) -> tuple[IsNaN, Select] | None:
    """The IsNaN and Select of `Select(IsNaN(y), 0, y)` when they are all that reads y (the
    zero a constant lowered already, of y's element type, broadcast to y's shape); else None."""
    y = op.output
    if not NAN_GUARD or ctx.uses.get(y, 0) != 2:
        return None
    users = [use.operation for use in y.uses]
    test = next((u for u in users if isinstance(u, IsNaN)), None)
    pick = next((u for u in users if isinstance(u, Select)), None)
    if test is None or pick is None or pick.condition is not test.output or pick.otherwise is not y or pick.then is y:
        return None
    zero = ctx.constant_of(pick.then)
    if (ctx.single_use(test.output) is not pick or zero is None or zero.size != 1 or zero.reshape(-1)[0] != 0
            or shape_of(pick.output) != shape_of(y) or dtype_of(pick.output) != np.float32):
        return None
    return test, pick


def fused_spec(op: ScaledDotProductAttention, scores_shape: Shape) -> AttentionSpec | None:
    """The blocked kernel's spec, or None where it does not apply (run-time scale, causal,
    an i1 mask, batch axes broadcast between q, k and v, a mask broadcast along S)."""
    q, k, v = (shape_of(op.operands[i]) for i in range(3))
    if op.scale_input is not None or op.bool_prop("causal") or not (q[:-2] == k[:-2] == v[:-2] == scores_shape[:-2]):
        return None
    l, s = scores_shape[-2:]
    if s == 0:
        return None  # no keys (an empty KV cache): the blocked kernel's rows are S-wide; p @ v over K = 0 is 0
    mask = None
    if op.mask is not None:
        if dtype_of(op.mask) != np.float32:
            return None
        m_shape = shape_of(op.mask)
        m_shape = ((1,) * len(scores_shape) + m_shape)[-len(scores_shape):]
        if m_shape[-1] != s:
            return None
        strides, step = [], 1
        for size, full in reversed(list(zip(m_shape, scores_shape))):
            strides.append(step if size == full and full > 1 else 0)
            step *= size
        strides.reverse()
        mask = tuple(zip(scores_shape[:-1], strides[:-1]))
    stride = row_stride(s)
    return AttentionSpec(batch=math.prod(scores_shape[:-2]), l=l, s=s, d=q[-1], dv=v[-1],
                         scale=float(op.static_scale()), rows=block_rows(l, stride), mask=mask,
                         packed_keys=packs_keys(s, q[-1]), stride=stride, fill=op.masked_fill() if mask is not None else None,
                         workspace=kernel_knobs.WORKSPACE)
