"""Convolution kernels: im2col into the GEMM's packed B panels.

Grouped and dense convolutions run on the GEMM core (weights packed once into A panels);
a 1x1 stride-1 unpadded convolution reads its input as B directly. Everything else is
first unfolded by `im2col_kernel`, which writes each (channel, ky, kx) row of the unfolded
input straight into the [P/NR][K][NR] panel layout, 16 output positions at a time: masked
contiguous loads at stride 1, one masked gather otherwise (padding and the tail panel
become zeros). Depthwise convolutions (one input channel per group) have their own
kernel, in `depthwise.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.gemm import NR
from irforge.backends.cpu.codegen.irutil import I64, VW, KernelBuilder, i64, vec


@dataclass(frozen=True)
class ConvGeometry:
    """A 2-D window over an NCHW input (1-D convolutions use h = kh = 1)."""

    n: int
    c: int
    h: int
    w: int
    kh: int
    kw: int
    oh: int
    ow: int
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad: tuple[int, int]
    """pads_begin (top, left); the end pads follow from the output size."""
    group: int = 1

    @property
    def p(self) -> int:
        return self.oh * self.ow

    @property
    def k_per_group(self) -> int:
        return self.c // self.group * self.kh * self.kw

    @property
    def panels(self) -> int:
        return -(-self.p // NR)


def _ivec(values: list[int]) -> ir.Constant:
    return ir.Constant(vec(VW, I64), values)


def _in_range(kb: KernelBuilder, v: ir.Value, size: int) -> ir.Value:
    """0 <= v < size, lane-wise, as one unsigned compare."""
    return kb.b.icmp_unsigned("<", v, kb.splat(i64(size)))


def im2col_kernel(module: ir.Module, g: ConvGeometry, name: str) -> None:
    """args: X [N, C, H, W], col [N][G][panels][Kg][NR]; threads split the rows."""
    kb = KernelBuilder(module, name)
    x, col = kb.slot(0), kb.slot(1)
    b = kb.b
    taps = g.kh * g.kw
    rows = g.n * g.c * taps
    cg = g.c // g.group
    r0, r1 = kb.partition(rows)
    with kb.loop(r0, r1, name="row") as r:
        n = b.udiv(r, i64(g.c * taps))
        rest = b.urem(r, i64(g.c * taps))
        c = b.udiv(rest, i64(taps))
        tap = b.urem(rest, i64(taps))
        ky, kx = b.udiv(tap, i64(g.kw)), b.urem(tap, i64(g.kw))
        group, k_local = b.udiv(c, i64(cg)), b.add(b.mul(b.urem(c, i64(cg)), i64(taps)), tap)
        block = b.add(b.mul(n, i64(g.group)), group)
        dst = kb.at(col, b.add(b.mul(block, i64(g.panels * g.k_per_group * NR)), b.mul(k_local, i64(NR))))
        src = kb.at(x, b.mul(b.add(b.mul(n, i64(g.c)), c), i64(g.h * g.w)))
        dy = b.sub(b.mul(ky, i64(g.dilation[0])), i64(g.pad[0]))
        dx = b.sub(b.mul(kx, i64(g.dilation[1])), i64(g.pad[1]))
        with kb.loop(0, g.panels * NR, VW, name="p") as p0:
            values = _im2col_vector(kb, g, src, p0, dy, dx)
            panel = b.udiv(p0, i64(NR))
            offset = b.add(b.mul(panel, i64(g.k_per_group * NR)), b.urem(p0, i64(NR)))
            kb.vstore(values, kb.at(dst, offset))
    kb.finish()


def _im2col_vector(kb: KernelBuilder, g: ConvGeometry, src, p0, dy, dx):  # type: ignore[no-untyped-def]
    """The 16 unfolded values of output positions p0 .. p0+15 for one (c, ky, kx) row.

    The positions span at most `spans` output rows; lanes are assigned row by row with
    scalar arithmetic only (a vector division by the row length would be 16 scalar
    divisions). At stride 1 each row's lanes are one contiguous masked load; at other
    strides the offsets of all rows are merged into one masked gather.
    """
    b = kb.b
    spans = min(-(-(VW - 1) // g.ow) + 1, VW)
    lane = _ivec(list(range(VW)))
    p = b.add(kb.splat(p0), lane)
    oy0 = b.udiv(p0, i64(g.ow))
    values, offsets, any_ok = kb.vconst(0.0), kb.splat(i64(0)), kb.mask(0)
    for r in range(spans):
        oy = b.add(oy0, i64(r))
        start = b.mul(oy, i64(g.ow))
        iy = b.add(b.mul(oy, i64(g.stride[0])), dy)
        row_ok = b.and_(b.icmp_unsigned("<", iy, i64(g.h)), b.icmp_signed("<", oy, i64(g.oh)))
        ox = b.sub(p, kb.splat(start))
        ix = b.add(b.mul(ox, kb.splat(i64(g.stride[1]))), kb.splat(dx))
        ok = b.and_(b.and_(_in_range(kb, ox, g.ow), _in_range(kb, ix, g.w)), kb.splat(row_ok))
        row_offset = b.mul(iy, i64(g.w))
        if g.stride[1] == 1:
            base = kb.at(src, b.add(row_offset, b.add(b.sub(p0, start), dx)))
            values = b.select(ok, kb.vload(base, mask=ok), values)
        else:
            offsets = b.select(ok, b.add(kb.splat(row_offset), ix), offsets)
            any_ok = b.or_(any_ok, ok)
    if g.stride[1] == 1:
        return values
    return kb.gather(src, offsets, any_ok)
