"""Blocked (grouped) integer weights kept compressed: the subgraph OpenVINO gives them.

MatMulNBits, opset 21's blocked DequantizeLinear and GatherBlockQuantized hold weights whose
runs of `block` values along one axis share a scale and a zero point. Instead of dequantizing
them at conversion (f32 weights, 8x the bytes of 4-bit ones), they stay integers, grouped so
that each block is one row of a [.., blocks, block, ..] tensor:

    Constant q [.., G, B, ..] (i4 / u4 when 4-bit, else i8 / u8)  -> Convert f32
      [-> Subtract Convert(Constant zero points [.., G, 1, ..])]  -> Multiply scales [.., G, 1, ..]
      -> Reshape [.., G * B, ..] [-> Slice to the real length, when the last block is short]
      [-> Convert to the model's float type]

as `ovc` writes it for these ops (constant folding leaves the chain alone:
`is_weight_decompression`; the CPU backend folds it when it compiles). The values are those
of dequantizing at conversion: (q - z) * s computed in f32 (exact for f16 scales too, whose
products with small integers f32 holds exactly before the one rounding to f16).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Convert, Eltwise
from irforge.dialects.nn.shape import Reshape, Slice
from irforge.errors import IrforgeError
from irforge.frontends.context import BuildContext
from irforge.weights.dtypes import to_xdsl

F32 = np.dtype(np.float32)


def grouped(values: np.ndarray, axis: int, block: int) -> np.ndarray:
    """`values` [.., n, ..] as [.., ceil(n / block), block, ..] along `axis`, the short last
    block padded with zeros (cut off again after decompressing)."""
    n = values.shape[axis]
    blocks = -(-n // block)
    if blocks * block != n:
        pad = [(0, 0)] * values.ndim
        pad[axis] = (0, blocks * block - n)
        values = np.pad(values, pad)
    return values.reshape(*values.shape[:axis], blocks, block, *values.shape[axis + 1 :])


def decompressed_weights(ctx: BuildContext, q: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, *, axis: int, length: int,
                         bits: int, dtype: np.dtype, suffix: str) -> SSAValue:  # fmt: skip
    """The float weights (q - zero) * scale, of q's shape with the block axes `axis`, `axis`+1
    merged and cut to `length`. q: integers grouped as `grouped` gives them (int8 / uint8,
    stored 4-bit when `bits` is 4); scale and zero (integers of q's kind, or floats; None
    when 0): [.., G, 1, ..]."""
    _check_range(ctx, q, scale, zero, dtype, suffix)
    weights = ctx.value(Convert, [ctx.constant(q, f"{suffix}/q", bits if bits == 4 else 0)], suffix=f"{suffix}/convert", destination_type=to_xdsl(F32))
    if zero is not None and np.any(zero):
        if zero.dtype.kind == "f":
            z = ctx.constant(zero.astype(F32), f"{suffix}/zero_point")
        else:  # integer zero points stay compressed too, converted as the weights are
            z = ctx.value(Convert, [ctx.constant(zero.astype(q.dtype), f"{suffix}/zero_point", bits if bits == 4 else 0)],
                          suffix=f"{suffix}/zero_point_convert", destination_type=to_xdsl(F32))  # fmt: skip
        weights = ctx.value(Eltwise, [weights, z], suffix=f"{suffix}/sub", operation="sub")
    weights = ctx.value(Eltwise, [weights, ctx.constant(scale.astype(F32), f"{suffix}/scale")], suffix=f"{suffix}/mul", operation="mul")
    shape = [*q.shape[:axis], q.shape[axis] * q.shape[axis + 1], *q.shape[axis + 2 :]]
    weights = ctx.value(Reshape, [weights], suffix=f"{suffix}/reshape", shape=shape, special_zero=False)
    if length != shape[axis]:
        weights = ctx.value(Slice, [weights], suffix=f"{suffix}/slice", begins=[0], ends=[length], axes=[axis])
    if np.dtype(dtype) != F32:
        weights = ctx.value(Convert, [weights], suffix=f"{suffix}/cast", destination_type=to_xdsl(np.dtype(dtype)))
    return weights


def _check_range(ctx: BuildContext, q: np.ndarray, scale: np.ndarray, zero: np.ndarray | None, dtype: np.dtype, suffix: str) -> None:
    """Weights beyond the model float type's range are refused (E120): converted to it they
    would be inf, which onnxruntime's MatMulNBits never sees (it dequantizes and multiplies in
    float32), so ref, cpu and OpenVINO would differ from it and from one another."""
    if np.dtype(dtype) == F32 or np.dtype(dtype).kind != "f":  # f32 weights: what onnxruntime computes, inf included
        return
    limit = float(np.finfo(np.dtype(dtype)).max)
    with np.errstate(all="ignore"):
        # a bound from the types and the (small) scale / zero-point arrays first: the weights
        # themselves (LLM-sized) are read only when it does not rule the overflow out
        q_bound = float(max(abs(int(np.iinfo(q.dtype).min)), int(np.iinfo(q.dtype).max))) if q.dtype.kind in "iu" else float("inf")
        z_bound = float(np.nanmax(np.abs(zero.astype(np.float64)), initial=0.0)) if zero is not None else 0.0
        if (q_bound + z_bound) * float(np.nanmax(np.abs(scale.astype(np.float64)), initial=0.0)) <= limit:
            return
        values = q.astype(F32) - (zero.astype(F32) if zero is not None else F32.type(0))
        biggest = float(np.nanmax(np.abs(values * scale.astype(F32)), initial=0.0))
    if biggest > limit:
        raise IrforgeError(f"the dequantized weights ({suffix.strip('/')}) reach {biggest:.4g}, beyond {np.dtype(dtype).name}'s range "
                           f"(+-{limit:.4g})", where=ctx.where, fix="check the scales of the quantized weights (they overflow the model's "
                           "float type)", code="E120")
