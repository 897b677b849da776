"""col2im for Deconvolution (transposed convolution) computed as GEMM + col2im.

The GEMM gives, per sample and group, col[(o, ky, kx), (iy, ix)] = sum over the group's
input channels c of w[c, o, ky, kx] * x[c, iy, ix]. Each output element then sums the
columns that land on it: out[o, oy, ox] = bias[o] + sum over (ky, kx) of col[(o, ky, kx),
(iy, ix)] where oy + pad_top = iy * stride + ky * dilation (and likewise along x). Written
as a gather per output (not a scatter from each column), threads own disjoint output rows
and need no atomics. 16 outputs of a row per vector: contiguous masked loads at stride 1,
masked gathers otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import I64, VW, KernelBuilder, i64, vec


@dataclass(frozen=True)
class Col2imSpec:
    n: int
    group: int
    og: int
    """output channels per group"""
    h: int
    w: int
    kh: int
    kw: int
    oh: int
    ow: int
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad: tuple[int, int]
    """the crop at the start of the full output (pads_begin)"""
    bias: bool


def col2im_kernel(module: ir.Module, spec: Col2imSpec, name: str) -> None:
    """args: col [N][G][og*kh*kw][h*w], out [N][G*og][oh][ow], [bias]."""
    kb = KernelBuilder(module, name)
    col, out = kb.slot(0), kb.slot(1)
    bias = kb.slot(2) if spec.bias else None
    b = kb.b
    channels = spec.group * spec.og
    r0, r1 = kb.partition(spec.n * channels * spec.oh)
    lanes = ir.Constant(vec(VW, I64), list(range(VW)))
    with kb.loop(r0, r1, name="row") as row:
        oy = b.urem(row, i64(spec.oh))
        plane = b.udiv(row, i64(spec.oh))  # n * channels + oc
        oc = b.urem(plane, i64(channels))
        # col block of (n, group) then row o * kh * kw: plane // og selects (n, group)
        taps0 = b.add(b.mul(b.udiv(plane, i64(spec.og)), i64(spec.og * spec.kh * spec.kw)),
                      b.mul(b.urem(plane, i64(spec.og)), i64(spec.kh * spec.kw)))
        init = kb.splat(b.load(kb.at(bias, oc))) if bias is not None else kb.vconst(0.0)
        with kb.loop(0, spec.ow, VW, name="ox") as ox0:
            ox = b.add(kb.splat(ox0), lanes)
            ox_ok = b.icmp_signed("<", ox, kb.splat(i64(spec.ow)))
            acc = _sum_taps(kb, spec, col, taps0, oy, ox0, ox, ox_ok, init)
            kb.vstore(acc, kb.at(out, b.add(b.mul(row, i64(spec.ow)), ox0)), ox_ok)
    kb.finish()


def _sum_taps(kb: KernelBuilder, spec: Col2imSpec, col, taps0, oy, ox0, ox, ox_ok, init):  # type: ignore[no-untyped-def]
    b = kb.b
    with b.goto_block(kb.fn.entry_basic_block):
        slot = b.alloca(vec())
    b.store(init, slot)
    sy, sx = spec.stride
    for ky in range(spec.kh):
        ty = b.sub(b.add(oy, i64(spec.pad[0])), i64(ky * spec.dilation[0]))
        iy = b.sdiv(ty, i64(sy))
        row_ok = b.and_(b.icmp_signed(">=", ty, i64(0)), b.icmp_signed("<", iy, i64(spec.h)))
        if sy > 1:
            row_ok = b.and_(row_ok, b.icmp_signed("==", b.srem(ty, i64(sy)), i64(0)))
        with kb.if_(row_ok):
            acc = b.load(slot)
            for kx in range(spec.kw):
                tap_row = b.add(taps0, i64(ky * spec.kw + kx))
                src = kb.at(col, b.add(b.mul(tap_row, i64(spec.h * spec.w)), b.mul(iy, i64(spec.w))))
                shift = spec.pad[1] - kx * spec.dilation[1]
                tx = b.add(ox, kb.splat(i64(shift)))
                ix = b.sdiv(tx, kb.splat(i64(sx))) if sx > 1 else tx
                ok = b.and_(ox_ok, b.and_(b.icmp_signed(">=", tx, kb.splat(i64(0))), b.icmp_signed("<", ix, kb.splat(i64(spec.w)))))
                if sx > 1:
                    ok = b.and_(ok, b.icmp_signed("==", b.srem(tx, kb.splat(i64(sx))), kb.splat(i64(0))))
                    values = kb.gather(src, ix, ok)
                else:
                    values = kb.vload(kb.at(src, b.add(ox0, i64(shift))), mask=ok)
                acc = b.fadd(acc, values)
            b.store(acc, slot)
    return b.load(slot)
