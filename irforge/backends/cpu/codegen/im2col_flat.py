"""im2col of stride-1 windows whose output rows are as long as the input's (`g.ow == g.w`:
"same" padding along x, as Inception's 1x7 / 7x1 / 1x3 / 3x1 and 5x5 layers have).

There output position p = oy * W + ox reads input element p + dy * W + dx of its channel's
plane for tap (ky, kx) (dy = ky * dil - pad_top, dx = kx * dil - pad_left): one constant
offset per tap over the flattened plane, across output rows. So 16 consecutive positions of
a B panel are one contiguous load at a tap's offset, the lanes whose row or column falls in
the padding masked off (the mask depends on the panel and the tap, not on the channel: it is
computed once per panel, and a masked load reads nothing there, so a plane's first and last
panels need no bounds of their own). Each panel's K rows are then written in order, one
plain store per vector.

`conv._im2col_row` instead cuts every output row at panel boundaries (a head, whole vectors
and a tail per row and unfolded row, with the row pointers recomputed per output row):
Inception-v3's 1x7 layers at 17x17 spent 0.18-0.28 ms per layer there (~6 GB/s of panels
written), 3 ms in all.
"""

from __future__ import annotations

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import I32, VW, KernelBuilder, i64, vec, vector_constant

FLAT = True
"""Stride-1 windows with output rows as long as the input's take `im2col_flat`; False: the
row-wise im2col of `conv.im2col_kernel`."""
FLAT_MAX_TAPS = 49
"""Windows of at most this many taps (one mask per tap and vector of a panel)."""


def flat_pays(g) -> bool:  # type: ignore[no-untyped-def]
    """Whether `g` (a `conv.ConvGeometry`) is unfolded by `im2col_flat`."""
    return (FLAT and g.stride == (1, 1) and g.ow == g.w and g.group == 1 and 1 < g.kh * g.kw <= FLAT_MAX_TAPS
            and g.c * g.h * g.w < 2 ** 31)


def im2col_flat(kb: KernelBuilder, g, x: ir.Value, col: ir.Value, nr: int) -> None:  # type: ignore[no-untyped-def]
    """args: X [N, C, H, W], col [N][panels][K][nr]; threads split the (sample, panel) pairs.
    Lanes past the plane's P positions (the last panel's tail) are zeros."""
    b = kb.b
    taps = [(ky * g.dilation[0] - g.pad[0], kx * g.dilation[1] - g.pad[1]) for ky in range(g.kh) for kx in range(g.kw)]
    k = g.c * len(taps)
    plane = g.h * g.w
    panels = g.panels
    u0, u1 = kb.partition(g.n * panels)
    lane = vector_constant(vec(VW, I32), list(range(VW)))

    def splat32(v: int | ir.Value) -> ir.Value:
        return kb.splat(ir.Constant(I32, v) if isinstance(v, int) else v)

    with kb.loop(u0, u1, name="unit") as unit:
        sample, panel = b.udiv(unit, i64(panels)), b.urem(unit, i64(panels))
        src = kb.at(x, b.mul(sample, i64(g.c * plane)))
        dst = kb.at(col, b.add(b.mul(sample, i64(panels * k * nr)), b.mul(panel, i64(k * nr))))
        first = b.mul(panel, i64(nr))
        masks = []
        for part in range(0, nr, VW):
            p = b.add(splat32(b.trunc(b.add(first, i64(part)), I32)), lane)
            oy, ox = b.udiv(p, splat32(g.ow)), b.urem(p, splat32(g.ow))
            live = b.icmp_unsigned("<", p, splat32(g.p))
            masks.append([
                b.and_(live, b.and_(b.icmp_unsigned("<", b.add(oy, splat32(dy)), splat32(g.h)),
                                    b.icmp_unsigned("<", b.add(ox, splat32(dx)), splat32(g.w))))
                for dy, dx in taps
            ])
        with kb.loop(0, g.c, name="c") as c:
            channel = b.gep(src, [b.add(b.mul(c, i64(plane)), first)])  # not inbounds: a tap's offset may leave the plane
            row = kb.at(dst, b.mul(c, i64(len(taps) * nr)))
            for t, (dy, dx) in enumerate(taps):
                for v, part in enumerate(range(0, nr, VW)):
                    at = b.gep(channel, [i64(dy * g.w + dx + part)])
                    kb.vstore(kb.vload(at, mask=masks[v][t]), kb.at(row, t * nr + part))
