"""Windowed max/average pooling over NCHW planes, 16 outputs of a row per vector.

Window taps outside the input are masked out of the loads (masked loads at stride 1, two
and an even-lane shuffle at stride 2, gathers otherwise); the average divides by the count of taps inside the input
(exclude_pad) or inside the padded input (ceil-mode overhang never counts).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.irutil import I64, VW, KernelBuilder, i64, vec

LOWEST = -3.4028234663852886e38


@dataclass(frozen=True)
class PoolSpec:
    geometry: ConvGeometry
    method: str
    exclude_pad: bool
    pad_end: tuple[int, int]


def pool_kernel(module: ir.Module, spec: PoolSpec, name: str) -> None:
    """args: X, out; threads split the (n, c) planes."""
    g = spec.geometry
    kb = KernelBuilder(module, name)
    x, out = kb.slot(0), kb.slot(1)
    b = kb.b
    with b.goto_block(kb.fn.entry_basic_block):
        acc_slot, count_slot = b.alloca(vec()), b.alloca(vec())
    q0, q1 = kb.partition(g.n * g.c)
    lanes = ir.Constant(vec(VW, I64), list(range(VW)))
    with kb.loop(q0, q1, name="plane") as q:
        src = kb.at(x, b.mul(q, i64(g.h * g.w)))
        with kb.loop(0, g.oh, name="oy") as oy, kb.loop(0, g.ow, VW, name="ox") as ox0:
            ox = b.add(kb.splat(ox0), lanes)
            ox_ok = b.icmp_signed("<", ox, kb.splat(i64(g.ow)))
            b.store(kb.vconst(LOWEST if spec.method == "max" else 0.0), acc_slot)
            b.store(kb.vconst(0.0), count_slot)
            for ky in range(g.kh):
                iy = b.sub(b.add(b.mul(oy, i64(g.stride[0])), i64(ky * g.dilation[0])), i64(g.pad[0]))
                _tap_row(kb, spec, src, iy, ox, ox0, ox_ok, acc_slot, count_slot)
            acc = b.load(acc_slot)
            if spec.method == "avg":
                acc = b.fdiv(acc, b.load(count_slot))
            kb.vstore(acc, kb.at(out, b.add(b.mul(q, i64(g.p)), b.add(b.mul(oy, i64(g.ow)), ox0))), ox_ok)
    kb.finish()


def _tap_row(kb: KernelBuilder, spec: PoolSpec, src, iy, ox, ox0, ox_ok, acc_slot, count_slot) -> None:  # type: ignore[no-untyped-def]
    g = spec.geometry
    b = kb.b
    row_ok = b.icmp_unsigned("<", iy, i64(g.h))
    row_counted = b.and_(b.icmp_signed(">=", iy, i64(-g.pad[0])), b.icmp_signed("<", iy, i64(g.h + spec.pad_end[0])))
    if spec.method == "avg" and not spec.exclude_pad:
        with kb.if_(row_counted):
            count = b.load(count_slot)
            for kx in range(g.kw):
                ix = b.add(b.mul(ox, kb.splat(i64(g.stride[1]))), kb.splat(i64(kx * g.dilation[1] - g.pad[1])))
                inside = b.and_(b.icmp_signed(">=", ix, kb.splat(i64(-g.pad[1]))), b.icmp_signed("<", ix, kb.splat(i64(g.w + spec.pad_end[1]))))
                count = b.fadd(count, b.select(inside, kb.vconst(1.0), kb.vconst(0.0)))
            b.store(count, count_slot)
    with kb.if_(row_ok):
        row = kb.at(src, b.mul(iy, i64(g.w)))
        acc, count = b.load(acc_slot), b.load(count_slot)
        for kx in range(g.kw):
            ix = b.add(b.mul(ox, kb.splat(i64(g.stride[1]))), kb.splat(i64(kx * g.dilation[1] - g.pad[1])))
            ok = b.and_(ox_ok, b.icmp_unsigned("<", ix, kb.splat(i64(g.w))))
            fill = LOWEST if spec.method == "max" else 0.0
            if g.stride[1] == 1:
                start = b.add(ox0, i64(kx * g.dilation[1] - g.pad[1]))
                values = kb.vload(kb.at(row, start), mask=ok, fill=fill)
            elif g.stride[1] == 2:
                start = b.add(b.mul(ox0, i64(2)), i64(kx * g.dilation[1] - g.pad[1]))
                values = kb.load_strided(row, start, [kb.inside(start, g.w), kb.inside(b.add(start, i64(VW)), g.w)], fill)
            else:
                values = kb.gather(row, ix, ok, fill)
            if spec.method == "max":
                acc = b.select(b.fcmp_unordered(">", values, acc), values, acc)
            else:
                acc = b.fadd(acc, values)
                if spec.exclude_pad:
                    count = b.fadd(count, b.select(ok, kb.vconst(1.0), kb.vconst(0.0)))
        b.store(acc, acc_slot)
        b.store(count, count_slot)

