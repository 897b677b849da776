"""Convolution kernels: im2col into the GEMM's packed B panels.

Grouped and dense convolutions run on the GEMM core (weights packed once into A panels);
a 1x1 stride-1 unpadded convolution reads its input as B directly. Everything else is
first unfolded by `im2col_kernel`, which writes each (channel, ky, kx) row of the unfolded
input straight into the [P/NR][K][NR] panel layout, 16 output positions at a time: along
output rows with masked contiguous loads at x-stride 1 or 2 (two loads and an even-lane
shuffle) and plain stores of panel-aligned vectors (masked at each row's two ends; a row
at most a vector wide goes through a stack row of the plane, see `_im2col_narrow_buffered`); at other strides one masked gather
per vector (padding and the tail panel become zeros). Depthwise convolutions (one input channel per group) have their own
kernel, in `depthwise.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.gemm import NR
from irforge.backends.cpu.codegen.im2col_flat import flat_pays, im2col_flat
from irforge.backends.cpu.codegen.irutil import F32, I64, VW, KernelBuilder, i64, vec

PLAIN_TAIL_STORES = True
"""An im2col output row wider than a vector stores its tail (the lanes after its last whole
vector, from a panel's column 0) and the next row's head (the rest of that panel row) as one
plain vector where the same thread writes both, instead of two masked stores (`_im2col_row`;
vmaskmovps stores are slow on AMD). ResNet-50's 56 -> 28 1x1 stride-2 downsample (rows of 28:
a head, one vector, a tail) 0.27 -> 0.14 ms; with the tail alone stored plain (the head still
masked) that im2col took 1.27-1.34x the merged form's time (docs/STATUS.md, session 14)."""
ROW_PREFETCH_PLANES = 0
"""An im2col of a 1x1 window over rows wider than a vector (a strided 1x1 layer: ResNet's
56 -> 28 downsample) walks the channels inside each output row, so each channel's input row is
one short run 12.5 KiB from the last (a stream per channel, too short for the hardware
prefetcher): it prefetches the input row this many channels ahead (0: none). Off: 4 ahead
against none, ResNet-50's 56 -> 28 im2col 0.83x, 0.70x (8 ahead) and 1.07x in three same-process
A/Bs at load 5-6 (a 0.13-0.19 ms phase: not told from noise; docs/STATUS.md session 15)."""
NARROW_BUFFERED = True
"""Rows at most a vector wide (`g.ow <= 16`) are unfolded into a stack row of the whole
output plane with plain overlapping stores, then copied into the panels a panel vector at
a time (`_im2col_narrow_buffered`), instead of two masked stores per output row (slow on
this AMD host: vmaskmovps)."""
NARROW_BUFFER_MAX = 4096
"""Output planes (positions) up to which the narrow rows take the stack row (16 KiB)."""


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


def live_taps(size: int, outputs: range, kernel: int, stride: int, dilation: int, pad: int) -> tuple[int, int] | None:
    """The first and last kernel index along one axis that reads the input at some output
    position of `outputs` (the others read only padding; the live ones are consecutive);
    None where every tap reads padding."""
    live = [k for k in range(kernel) if any(0 <= o * stride + k * dilation - pad < size for o in outputs)]
    return (live[0], live[-1]) if live else None


def _live_taps(size: int, out: int, kernel: int, stride: int, dilation: int, pad: int) -> tuple[int, int]:
    return live_taps(size, range(out), kernel, stride, dilation, pad) or (0, kernel - 1)


def crop_dead_taps(g: ConvGeometry, weights):  # type: ignore[no-untyped-def]
    """(geometry, weights) without the kernel's border rows and columns that read only
    padding: a dilated window wider than its input (DeepLab's ASPP at rate 18 on a 14x14
    map reads the input with its centre tap only) becomes the smaller window it really is,
    a 1x1 one there (9x fewer flops, no im2col). Unchanged where nothing is dead."""
    (y0, y1), (x0, x1) = (_live_taps(*axis) for axis in (
        (g.h, g.oh, g.kh, g.stride[0], g.dilation[0], g.pad[0]),
        (g.w, g.ow, g.kw, g.stride[1], g.dilation[1], g.pad[1])))
    kh, kw = y1 - y0 + 1, x1 - x0 + 1
    pad = (g.pad[0] - y0 * g.dilation[0], g.pad[1] - x0 * g.dilation[1])
    if (kh, kw) == (g.kh, g.kw) or min(pad) < 0:
        return g, weights
    dilation = (g.dilation[0] if kh > 1 else 1, g.dilation[1] if kw > 1 else 1)
    cropped = ConvGeometry(g.n, g.c, g.h, g.w, kh, kw, g.oh, g.ow, g.stride, dilation, pad, g.group)
    return cropped, weights[:, :, y0:y1 + 1, x0:x1 + 1].copy()


def _ivec(values: list[int]) -> ir.Constant:
    return ir.Constant(vec(VW, I64), values)


def _in_range(kb: KernelBuilder, v: ir.Value, size: int) -> ir.Value:
    """0 <= v < size, lane-wise, as one unsigned compare."""
    return kb.b.icmp_unsigned("<", v, kb.splat(i64(size)))


def im2col_kernel(module: ir.Module, g: ConvGeometry, name: str, by_positions: bool = False) -> None:
    """args: X [N, C, H, W], col [N][G][panels][Kg][NR]; threads split the rows, or with
    `by_positions` (stride 1 or 2 along x) the output rows, so that a GEMM whose threads
    split the columns reads the panels its own thread wrote (the stem's 1.4 MiB)."""
    kb = KernelBuilder(module, name)
    x, col = kb.slot(0), kb.slot(1)
    b = kb.b
    taps = g.kh * g.kw
    rows = g.n * g.c * taps
    cg = g.c // g.group
    if by_positions:
        (r0, r1), (y0, y1) = (i64(0), i64(rows)), kb.partition(g.oh)
    else:
        (r0, r1), (y0, y1) = kb.partition(rows), (i64(0), i64(g.oh))

    def row_pointers(r):  # type: ignore[no-untyped-def]
        """(dst row in the panels, src channel plane, dy, dx) of unfolded row r = (n, c, ky, kx)."""
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
        return dst, src, dy, dx

    if flat_pays(g):  # stride 1, rows as long as the input's: one offset per tap over the plane
        im2col_flat(kb, g, x, col, NR)
    elif g.stride[1] in (1, 2) and g.ow > VW:
        # rows wider than a vector: output rows outside, unfolded rows inside, so that a
        # panel's K rows are written together (the other order stored each vector K * 64
        # bytes after the last, and with the aligned stores below took the 520x520 stem of
        # LR-ASPP from 8.9 to 1.5 ms, a 3x3 stride-2 layer at 56x56 from 1.36 to 1.16); at
        # 14 or 7 columns recomputing each row's pointers per output row cost more (a 3x3
        # stride-2 layer at 28x28: 0.81 -> 1.05 ms) than the order saved
        with kb.loop(y0, y1, name="oy") as oy:
            with kb.loop(r0, r1, name="row") as r:
                pointers = row_pointers(r)
                if ROW_PREFETCH_PLANES and taps == 1:
                    _prefetch_row_ahead(kb, g, pointers[1], pointers[2], oy)
                _im2col_row(kb, g, *pointers, oy, b.icmp_signed("<", b.add(oy, i64(1)), y1), b.icmp_signed(">", oy, y0))
        _zero_tail(kb, g, r0, r1, y1, row_pointers)
    elif g.stride[1] in (1, 2) and NARROW_BUFFERED and not by_positions and g.panels * NR <= NARROW_BUFFER_MAX:
        with b.goto_block(kb.fn.entry_basic_block):
            buf = b.bitcast(b.alloca(ir.ArrayType(F32, g.panels * NR + VW)), ir.PointerType(F32))
        with kb.loop(r0, r1, name="row") as r:
            _im2col_narrow_buffered(kb, g, *row_pointers(r), buf)
    elif g.stride[1] in (1, 2):
        with kb.loop(r0, r1, name="row") as r:
            dst, src, dy, dx = row_pointers(r)
            with kb.loop(y0, y1, name="oy") as oy:
                _im2col_narrow_row(kb, g, dst, src, dy, dx, oy)
        _zero_tail(kb, g, r0, r1, y1, row_pointers)
    else:
        with kb.loop(r0, r1, name="row") as r:
            dst, src, dy, dx = row_pointers(r)
            with kb.loop(0, g.panels * NR, VW, name="p") as p0:
                values = _im2col_vector(kb, g, src, p0, dy, dx)
                panel = b.udiv(p0, i64(NR))
                offset = b.add(b.mul(panel, i64(g.k_per_group * NR)), b.urem(p0, i64(NR)))
                kb.vstore(values, kb.at(dst, offset))
    kb.finish()


def pack_rows_kernel(module: ir.Module, p: int, name: str, scaled: bool = False) -> None:
    """args: X [K][p] (a 1x1 stride-1 layer's input, one sample), col [p/NR][K][NR], K (one
    i64), with `scaled` also s (K floats): B's panels of the GEMM, generic in K (one kernel
    for every layer over a p-position plane), row r times s[r] when scaled (squeeze-excite's
    `x * s` done by the copy the GEMM needs anyway: `ops/excite.py`). Plain loads and
    stores, the last panel's columns past p zeros (a masked load); threads split the K rows."""
    kb = KernelBuilder(module, name)
    x, col = kb.slot(0), kb.slot(1)
    b = kb.b
    k = b.load(kb.slot(2, I64))
    r0 = b.sdiv(b.mul(k, kb.tid), kb.nth)
    r1 = b.sdiv(b.mul(k, b.add(kb.tid, i64(1))), kb.nth)
    full, tail = divmod(p, NR)
    scales = kb.slot(3) if scaled else None
    with kb.loop(r0, r1, name="row") as r:
        src, dst = kb.at(x, b.mul(r, i64(p))), kb.at(col, b.mul(r, i64(NR)))
        scale = kb.splat(b.load(kb.at(scales, r))) if scales is not None else None

        def put(value, at):  # type: ignore[no-untyped-def]
            kb.vstore(b.fmul(value, scale) if scale is not None else value, at)
        panel_step = b.mul(k, i64(NR))
        with kb.loop(0, full, name="panel") as panel:
            for part in range(0, NR, VW):
                put(kb.vload(kb.at(src, b.add(b.mul(panel, i64(NR)), i64(part)))), kb.at(dst, b.add(b.mul(panel, panel_step), i64(part))))
        if tail:
            last = kb.at(dst, b.mul(i64(full), panel_step))
            for part in range(0, NR, VW):
                mask = kb.mask(tail - part) if tail - part < VW else None
                value = kb.vload(kb.at(src, full * NR + part), mask=mask) if tail > part else kb.vconst(0.0)
                put(value, kb.at(last, part))
    kb.finish()


def _zero_tail(kb: KernelBuilder, g: ConvGeometry, r0, r1, y1, row_pointers) -> None:  # type: ignore[no-untyped-def]
    """The last panel's columns past the output: zeros, by the thread with the last output row."""
    tail = g.panels * NR - g.p
    if not tail:
        return
    with kb.if_(kb.b.icmp_signed("==", y1, i64(g.oh))):
        with kb.loop(r0, r1, name="row") as r:
            last = kb.at(row_pointers(r)[0], (g.panels - 1) * g.k_per_group * NR + NR - tail)
            for part in range(-(-tail // VW)):
                kb.vstore(kb.vconst(0.0), kb.at(last, part * VW), kb.mask(tail - part * VW))


def _im2col_narrow_row(kb: KernelBuilder, g: ConvGeometry, dst, src, dy, dx, oy) -> None:  # type: ignore[no-untyped-def]
    """Output row `oy` of one unfolded row at most a vector wide: one masked load (stride 1)
    or two and an even-lane shuffle (stride 2), written with two masked stores: the lanes
    that fit in the current panel, and the rest at the next panel's start (a store at that
    start minus the lanes already written, so lanes map linearly without a permute)."""
    b = kb.b
    lanes = _ivec(list(range(VW)))
    step = g.k_per_group * NR
    iy = b.add(b.mul(oy, i64(g.stride[0])), dy)
    row_ok = kb.splat(b.icmp_unsigned("<", iy, i64(g.h)))
    row = kb.at(src, b.mul(b.select(b.icmp_unsigned("<", iy, i64(g.h)), iy, i64(0)), i64(g.w)))
    start = dx
    masks = [b.and_(kb.inside(b.add(start, i64(part * VW)) if part else start, g.w), row_ok) for part in range(g.stride[1])]
    values = kb.load_strided(row, start, masks)
    p0 = b.mul(oy, i64(g.ow))
    panel, within = b.udiv(p0, i64(NR)), b.urem(p0, i64(NR))
    inside = b.icmp_unsigned("<", lanes, kb.splat(i64(g.ow)))
    here = b.icmp_unsigned("<", lanes, kb.splat(b.sub(i64(NR), within)))
    kb.vstore(values, kb.at(dst, b.add(b.mul(panel, i64(step)), within)), b.and_(inside, here))
    spill = b.gep(dst, [b.sub(b.mul(b.add(panel, i64(1)), i64(step)), b.sub(i64(NR), within))])
    kb.vstore(values, spill, b.and_(inside, b.not_(here)))


def _im2col_narrow_buffered(kb: KernelBuilder, g: ConvGeometry, dst, src, dy, dx, buf) -> None:  # type: ignore[no-untyped-def]
    """One unfolded row of output rows at most a vector wide: each output row's 16 values
    (one masked load, or two and an even-lane shuffle at stride 2) stored whole at its
    position in `buf` (a row of the plane: the lanes past the row's end are overwritten by
    the next row's store, the last row's by the zeros of the tail panel), then `buf` copied
    into the panels with plain loads and stores, `NR` positions per panel."""
    b = kb.b
    step = g.k_per_group * NR
    with kb.loop(0, g.oh, name="oy") as oy:
        iy = b.add(b.mul(oy, i64(g.stride[0])), dy)
        ok = b.icmp_unsigned("<", iy, i64(g.h))
        row = kb.at(src, b.mul(b.select(ok, iy, i64(0)), i64(g.w)))
        row_ok = kb.splat(ok)
        masks = [b.and_(kb.inside(b.add(dx, i64(part * VW)) if part else dx, g.w), row_ok) for part in range(g.stride[1])]
        kb.vstore(kb.load_strided(row, dx, masks), kb.at(buf, b.mul(oy, i64(g.ow))))
    for tail in range(g.p, g.panels * NR, VW):
        kb.vstore(kb.vconst(0.0), kb.at(buf, tail))
    with kb.loop(0, g.panels, name="panel") as panel:
        for part in range(0, NR, VW):
            kb.vstore(kb.vload(kb.at(buf, b.add(b.mul(panel, i64(NR)), i64(part)))), kb.at(dst, b.add(b.mul(panel, i64(step)), i64(part))))


def _prefetch_row_ahead(kb: KernelBuilder, g: ConvGeometry, src, dy, oy) -> None:  # type: ignore[no-untyped-def]
    """Prefetch every cache line of the input row under output row `oy` in the channel
    `ROW_PREFETCH_PLANES` planes after `src`'s (a 1x1 window: the next unfolded rows' planes)."""
    b = kb.b
    iy = b.add(b.mul(oy, i64(g.stride[0])), dy)
    iy = b.select(b.icmp_unsigned("<", iy, i64(g.h)), iy, i64(0))
    ahead = kb.at(src, b.add(b.mul(iy, i64(g.w)), i64(ROW_PREFETCH_PLANES * g.h * g.w)))
    for at in range(0, g.w + 16, 16):  # a row of w floats touches at most w / 16 + 1 lines
        kb.prefetch(kb.at(ahead, min(at, g.w - 1)))


def _im2col_row(kb: KernelBuilder, g: ConvGeometry, dst, src, dy, dx, oy, followed=None, led=None) -> None:  # type: ignore[no-untyped-def]
    """Output row `oy` of one unfolded row (stride 1 or 2 along x, no gathers).

    16 outputs of an output row are one masked load (stride 1) or two and an even-lane
    shuffle (stride 2); lanes outside the input row, and whole rows outside the input, are
    zeros. The row's positions are cut where they reach a multiple of 16 (a panel is a
    multiple of 16 wide): a head up to there and the tail after the last whole vector are
    masked stores, every vector between is one plain store inside one panel. Masked stores
    are slow on this AMD host (two per vector, four instructions at 8 lanes, made the stem
    of LR-ASPP at 520x520 a 6.4 ms im2col for a 0.7 ms GEMM). Where this thread writes the
    next output row too (`followed`, an i1), the tail is one plain store of this row's last
    outputs and the next row's head (`PLAIN_TAIL_STORES`): it starts at a panel's column 0
    and the next row's head fills that panel row; a row after one of this thread's (`led`)
    then stores no head.
    """
    b = kb.b
    sx = g.stride[1]
    step = g.k_per_group * NR
    merged = followed is not None and PLAIN_TAIL_STORES

    def input_row(y):  # type: ignore[no-untyped-def]
        """(pointer, all-lanes validity) of the input row under output row y."""
        iy = b.add(b.mul(y, i64(g.stride[0])), dy)
        ok = b.icmp_unsigned("<", iy, i64(g.h))
        return kb.at(src, b.mul(b.select(ok, iy, i64(0)), i64(g.w))), kb.splat(ok)

    row, row_ok = input_row(oy)
    first = b.mul(oy, i64(g.ow))

    def values(ox0, row=row, row_ok=row_ok):  # type: ignore[no-untyped-def]
        start = b.add(b.mul(ox0, i64(sx)), dx)
        masks = [b.and_(kb.inside(b.add(start, i64(part * VW)) if part else start, g.w), row_ok) for part in range(sx)]
        return kb.load_strided(row, start, masks)

    def target(ox0):  # type: ignore[no-untyped-def]
        p0 = b.add(first, ox0)
        return kb.at(dst, b.add(b.mul(b.udiv(p0, i64(NR)), i64(step)), b.urem(p0, i64(NR))))

    head = kb.min(b.urem(b.sub(i64(VW), b.urem(first, i64(VW))), i64(VW)), g.ow)
    unled = b.icmp_signed(">", head, i64(0))
    with kb.if_(b.and_(unled, b.not_(led)) if merged else unled):
        kb.vstore(values(i64(0)), target(i64(0)), kb.mask(head))
    end = b.add(head, b.mul(b.udiv(b.sub(i64(g.ow), head), i64(VW)), i64(VW)))
    with kb.loop(head, end, VW, name="ox") as ox0:
        kb.vstore(values(ox0), target(ox0))
    with kb.if_(b.icmp_signed("<", end, i64(g.ow))):
        tail = b.sub(i64(g.ow), end)
        if not merged:
            kb.vstore(values(end), target(end), kb.mask(tail))
            return
        value, at = values(end), target(end)
        with b.if_else(followed) as (plain, masked):
            with plain:  # lanes l >= tail: the next row's outputs l - tail
                after = values(b.sub(i64(0), tail), *input_row(b.add(oy, i64(1))))
                kb.vstore(b.select(kb.mask(tail), value, after), at)
            with masked:
                kb.vstore(value, at, kb.mask(tail))


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
