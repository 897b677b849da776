"""col2im for Deconvolution with 3 or more spatial axes (ConvTranspose3d of 3-D UNets).

The GEMM gives, per sample and group, col[(o, kd.., ky, kx), (id.., iy, ix)]. Each output
element gathers the columns that land on it: along every axis, o_a + pad_a = i_a * stride_a
+ k_a * dilation_a. As in the 2-D `deconv.col2im_kernel` (which this extends by the
leading axes), threads own disjoint output rows (n, channel, od.., oy) and need no atomics;
16 outputs of a row per vector, contiguous masked loads at x-stride 1, gathers otherwise.
The leading taps are unrolled at compile time, each guarded by one run-time test of its
input position (on the row, not per lane).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import I64, VW, KernelBuilder, i64, vec


@dataclass(frozen=True)
class Col2imNdSpec:
    n: int
    group: int
    og: int
    """output channels per group"""
    in_sizes: tuple[int, ...]
    kernel: tuple[int, ...]
    out_sizes: tuple[int, ...]
    stride: tuple[int, ...]
    dilation: tuple[int, ...]
    pad: tuple[int, ...]
    """the crop at the start of the full output (pads_begin), per axis"""
    bias: bool


def _axis_source(kb: KernelBuilder, o, k: int, spec: Col2imNdSpec, a: int):  # type: ignore[no-untyped-def]
    """(input index, valid) of output index `o` along axis `a` at tap `k` (scalars)."""
    b = kb.b
    t = b.sub(b.add(o, i64(spec.pad[a])), i64(k * spec.dilation[a]))
    s = spec.stride[a]
    i = b.sdiv(t, i64(s)) if s > 1 else t
    ok = b.and_(b.icmp_signed(">=", t, i64(0)), b.icmp_signed("<", i, i64(spec.in_sizes[a])))
    if s > 1:
        ok = b.and_(ok, b.icmp_signed("==", b.srem(t, i64(s)), i64(0)))
    return i, ok


def col2im_nd_kernel(module: ir.Module, spec: Col2imNdSpec, name: str) -> None:
    """args: col [N][G][og*taps][in positions], out [N][G*og][out..], [bias]."""
    kb = KernelBuilder(module, name)
    col, out = kb.slot(0), kb.slot(1)
    bias = kb.slot(2) if spec.bias else None
    b = kb.b
    rank = len(spec.in_sizes)
    channels = spec.group * spec.og
    taps = math.prod(spec.kernel)
    in_pos = math.prod(spec.in_sizes)
    ow, iw, kw = spec.out_sizes[-1], spec.in_sizes[-1], spec.kernel[-1]
    in_strides = [math.prod(spec.in_sizes[a + 1:]) for a in range(rank)]
    k_strides = [math.prod(spec.kernel[a + 1:]) for a in range(rank)]
    rows = spec.n * channels * math.prod(spec.out_sizes[:-1])
    r0, r1 = kb.partition(rows)
    lanes = ir.Constant(vec(VW, I64), list(range(VW)))
    with b.goto_block(kb.fn.entry_basic_block):
        slot = b.alloca(vec())
    with kb.loop(r0, r1, name="row") as row:
        outs, rest = [], row  # output index along each axis but the last, then (n, channel)
        for a in range(rank - 2, -1, -1):
            outs.insert(0, b.urem(rest, i64(spec.out_sizes[a])))
            rest = b.udiv(rest, i64(spec.out_sizes[a]))
        plane = rest  # n * channels + oc
        oc = b.urem(plane, i64(channels))
        taps0 = b.add(b.mul(b.udiv(plane, i64(spec.og)), i64(spec.og * taps)), b.mul(b.urem(plane, i64(spec.og)), i64(taps)))
        with kb.loop(0, ow, VW, name="ox") as ox0:
            ox = b.add(kb.splat(ox0), lanes)
            ox_ok = b.icmp_signed("<", ox, kb.splat(i64(ow)))
            init = kb.splat(b.load(kb.at(bias, oc))) if bias is not None else kb.vconst(0.0)
            b.store(init, slot)
            for tap in itertools.product(*(range(k) for k in spec.kernel[:-1])):
                ok, src_pos = None, i64(0)
                for a, k in enumerate(tap):
                    i, axis_ok = _axis_source(kb, outs[a], k, spec, a)
                    ok = axis_ok if ok is None else b.and_(ok, axis_ok)
                    src_pos = b.add(src_pos, b.mul(i, i64(in_strides[a])))
                tap_flat = sum(k * k_strides[a] for a, k in enumerate(tap))
                with kb.if_(ok):
                    acc = b.load(slot)
                    for kx in range(kw):
                        tap_row = b.add(taps0, i64(tap_flat + kx))
                        src = kb.at(col, b.add(b.mul(tap_row, i64(in_pos)), src_pos))
                        shift = spec.pad[-1] - kx * spec.dilation[-1]
                        sx = spec.stride[-1]
                        tx = b.add(ox, kb.splat(i64(shift)))
                        ix = b.sdiv(tx, kb.splat(i64(sx))) if sx > 1 else tx
                        lane_ok = b.and_(ox_ok, b.and_(b.icmp_signed(">=", tx, kb.splat(i64(0))), b.icmp_signed("<", ix, kb.splat(i64(iw)))))
                        if sx > 1:
                            lane_ok = b.and_(lane_ok, b.icmp_signed("==", b.srem(tx, kb.splat(i64(sx))), kb.splat(i64(0))))
                            values = kb.gather(src, ix, lane_ok)
                        else:
                            values = kb.vload(kb.at(src, b.add(ox0, i64(shift))), mask=lane_ok)
                        acc = b.fadd(acc, values)
                    b.store(acc, slot)
            kb.vstore(b.load(slot), kb.at(out, b.add(b.mul(row, i64(ow)), ox0)), ox_ok)
    kb.finish()
