"""Direct depthwise convolution (one input channel per group) over NCHW planes.

Vectors run along the output width, `lanes` outputs (one host register: 8 on AVX2, 16 on
AVX-512) of each of ROWS rows at a time, with one FMA per tap and row. Each plane is cut
at compile time into the part whose window lies inside the input and the border:

- interior rows (every input row of the block exists) in blocks of ROWS, and in them the
  interior vectors (every input column of every tap inside the row, all lanes stored):
  plain loads and stores, no masks;
- the border (first/last rows, first/last vectors of a row, a partial last vector): a
  tap's load mask is computed per vector (the lanes whose input column is inside the row)
  and ANDed with its row's validity, so rows and columns of padding are masked-off lanes,
  never branches (a row outside the input is read at row 0 with an all-off mask).

At stride 1 a tap is one contiguous load; at stride 2 it is two contiguous loads (2 x lanes
input columns) and one even-lane shuffle (no gathers); larger strides gather.
The previous kernel ran 16-lane vectors on AVX2 with a mask computed in 16 x i64 lanes for
every tap of every vector, and masked stores (microcoded on AMD): MobileNetV2's 112x112x32
layer took 678 us for 3.2 M multiply-adds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from llvmlite import ir

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.epilogue import Epilogue, activate, apply_epilogue
from irforge.backends.cpu.codegen.gemm import NR
from irforge.backends.cpu.codegen.irutil import I1, I32, I64, KernelBuilder, i64, native_vector_bytes, vec, vector_constant

ROWS = 4
"""Output rows computed together: a 3x3 window's input rows are loaded once for all four
(18 loads for 36 FMAs instead of 9 for 9); the rows left over run one at a time."""

LATE_TAPS = 0
"""An exp-based activation (Swish, Sigmoid) beside more than this many weights is applied
by `_epilogue_pass` after the stores instead of on the accumulators (register pressure:
its dozen constants beside the weights and ROWS accumulators). 0: always. Same-process A/B
(`bench/cpu_conv_layers.py --depthwise --act swish`, min of 100, load 5.6): 3x3 layers at
112x112 and 56x56 0.90-0.93x of the in-register epilogue (9 before: 5x5 only)."""
LATE_WIDTH = 32
"""... and also on output rows narrower than this (their vectors are all border: masked)."""
LATE_CHEAP = frozenset({"act.hswish"})
"""Activations without exp applied after the stores too, at stride 1 or beside more than 9
weights: HardSwish's four constants beside a 3x3 window's weights, ROWS accumulators and
six input rows spill on AVX2's 16 registers (`--depthwise --act hswish`, min of 60 and 100,
load 6-7: 14x14 3x3 0.58x, 14x14 5x5 0.87x, 7x7 0.96x, 56x56 0.96x, 112x112 0.98x; a 3x3
stride-2 layer 1.02-1.14x, so those keep it in registers). ReLU / Clamp after the stores:
1.4-1.7x slower at 14x14 and 7x7, not done."""
PLANE_PASS = 4096
"""A late epilogue runs once per plane, not per block of rows, on planes of at most this
many outputs (a 7x7 plane: 6 whole vectors and one masked, instead of one masked per row;
one plane of 4096 floats is 16 KiB, in L1): EfficientNet-B0's 5x5 layers at 14x14 and 7x7
0.74-0.82x (min of 40, load 6)."""


PADDED_OW_MAX = 32
"""Stride-1 planes whose output rows are at most this many floats wide (7x7 to 28x28), and
stride-2 ones up to PADDED_STRIDED_OW_MAX, are copied first into a zero-padded stack plane (`_padded_plane_kernel`): every tap is
then a plain load, all rows run in blocks of ROWS, and every vector is stored whole but
the plane's last (its spill lands on the next row, written later). The cut kernel gives
such rows masked loads with computed masks on every tap and one masked store per row
(microcoded on AMD). 0: off. Same-process A/B (`bench/cpu_conv_layers.py --depthwise --ab
...depthwise.PADDED_OW_MAX=0`, min of 60, load 15-18, cut kernel / this): 7x7 and 14x14
layers 1.48-1.73x, 28x28 stride 1 1.28-1.38x; 56x56 stride 1 0.77x (its interior vectors
are unmasked already: left to the cut kernel)."""
PADDED_STRIDED_OW_MAX = 32
"""The stride-2 limit (with COLUMN_PHASES): 56->28 5x5 1.42x, 3x3 1.19x (`--ab
...PADDED_STRIDED_OW_MAX=32` against 16, load 12); 112->56 3x3 0.82x, left to the cut kernel.
Without COLUMN_PHASES (two loads and a shuffle per tap) 56->28 was 0.87-1.02x."""
COLUMN_PHASES = True
"""At stride 2 the stack plane holds each row's even and odd columns as two rows (split
once per input row, from two loads of the input row), so a tap is one plain load instead of
two and an even-lane shuffle: 28->14 3x3 1.47x, 14->7 5x5 1.34x, 14->7 3x3 1.37x faster (`--ab
...COLUMN_PHASES=False`, min of 60, load 12). A first version split a padded copy of the row
just stored: its loads straddled two stores (no store forwarding) and ran 2.3-3.5x slower."""
SPLIT_RING_OW_MAX = 64
"""Stride-2 planes whose output rows are wider than PADDED_STRIDED_OW_MAX, up to this, split
their input rows into even / odd column rows (COLUMN_PHASES) too, but into a ring of
`_ring_rows` rows (8 KiB at 112x112 3x3) filled just ahead of each block of ROWS output rows
instead of a whole stack plane (58 KiB at 112x112: past L1, measured 0.82x the cut kernel).
The cut kernel's stride-2 tap is two loads and an even-lane shuffle (two shuffle uops on
AVX2) for every tap of every row; the ring's is one plain load. 0: off (the cut kernel)."""
RING_PREFETCH_ROWS = 8
"""The ring's fill prefetches the input row this many rows ahead (each of its cache lines): a
stride-2 layer after a 1x1 expansion at 112x112 reads the 1x1's output (MobileNetV2's 4.7
MiB) from L3 at ~25 GB/s, at L3's pace rather than its FMAs'. 0: off."""
PLANE_PREFETCH_ROWS = 0
"""The same for the stack plane's row copies (planes up to 32 outputs wide). 0: off."""
PAIR_TAPS = 9
"""Over split rows (COLUMN_PHASES), a window of more taps than this computes two vectors of a
row together (2 x ROWS accumulators): its weights do not fit in registers beside ROWS
accumulators anyway (a 5x5 window's 25 on AVX2's 16), so each FMA read its weight from the
stack; paired, one weight load serves two FMAs."""
PAIR_ROWS = True
"""... and where a row is one vector (14 -> 7), the blocks are 2 x ROWS rows instead."""
PADDED_DILATED_OW_MAX = 48
"""The stride-1 limit for dilated windows, whose cut kernel masks more of every row (a 5x5
window at dilation 2 has 4 border columns each side): LR-ASPP's 33x33 5x5 dilation-2 layers
(672 and 960 channels) 0.63-0.68x the cut kernel's time; 33x33 undilated 3x3 layers were not
faster padded (1.08-1.23x), so PADDED_OW_MAX stays."""
PADDED_STACK_MAX = 16384
"""... and whose padded plane fits this many floats of stack (64 KiB)."""


PANEL_OUTPUT = True
"""A depthwise layer whose output only feeds a 1x1 layer that packs its B (`linear.packs_b`:
7x7 / 14x14 planes, unaligned ones such as Xception's 19x19) writes those panels itself from
a stack plane (`_store_panels`), so the 1x1's `pack_rows` phase and the plane's round trip
through the arena go."""


def panel_output_fits(g: ConvGeometry, lanes: int) -> bool:
    """Whether a depthwise layer can write B panels (`DepthwiseSpec.panels`): one sample, on
    the stack-plane kernel."""
    return PANEL_OUTPUT and g.n == 1 and padded_layout(g, lanes, panels=True) is not None


PANEL_STACK_MAX = 16384
"""The most floats of the two stack planes a panel-writing layer's outputs go to first (64 KiB)."""


UNROLL_LOOPS = True
"""Whether LLVM unrolls the loops of a depthwise module (`jit.unrolls`): the taps and ROWS
rows of a block are unrolled by hand already; LLVM's unroller also copies the row and
column loops of constant trip count (every row range x column range of a cut plane)."""


def host_lanes() -> int:
    """f32 lanes of one host vector register."""
    return native_vector_bytes() // 4


@dataclass(frozen=True)
class DepthwiseSpec:
    geometry: ConvGeometry
    bias: bool
    epilogue: Epilogue
    lanes: int = 16
    """vector width in f32 lanes: the host's register (`host_lanes()`)."""
    panels: bool = False
    """the output is written as the next 1x1 layer's B panels (`gemm.NR`-column panels of C
    K rows, the last one's columns past the plane zeros: `conv.pack_rows_kernel`'s layout)
    instead of planes: one sample, no residual, `padded_layout` planes only (`PANEL_OUTPUT`)"""
    input_activation: tuple[str, tuple[float, ...]] = ("none", ())
    """an activation (relu or clamp: f(0) = 0, so the zero pads stay zeros) applied to the
    input as its rows are copied into the stack plane (`padded_layout` planes only): the
    ReLU between a residual sum and the depthwise layer reading it, whose input the sum's
    other reader needs raw (Xception's middle flow: `ops/input_activation.py`)"""
    channels_arg: bool = False
    """the channel count is read at run time from the kernel's last slot (one i64) and the
    geometry's `c` and `group` are 0: one kernel serves the layers that differ in channels
    only (`shared_channels`)"""


SHARE_CHANNELS = True
"""Depthwise layers that differ in their channel count only share one kernel (the count a
run-time value: the plane loop's bound and the channel of a plane; nothing inside a plane
changes). keras NASNetMobile's 23 depthwise modules are 20 (its 5x5 stride-2 layer on
111x111 at 11 and 32 channels, 28x28 layers at 22 and 44); each module is 0.05-1.0 s of
LLVM (`docs/STATUS.md`, session 10)."""


def shared_channels(spec: DepthwiseSpec) -> tuple[DepthwiseSpec, list[int]]:
    """`spec` with its channel count taken at run time (`SHARE_CHANNELS`), and the values of
    the kernel's extra slot (empty: the count stays a constant)."""
    g = spec.geometry
    if not SHARE_CHANNELS or spec.channels_arg:
        return spec, []
    return replace(spec, geometry=replace(g, c=0, group=0), channels_arg=True), [g.c]


@dataclass(frozen=True)
class _Rows:
    """Output rows [first, last) in steps of `count`; `checked`: some input row may be outside."""

    first: int
    last: int
    count: int
    checked: bool


def row_ranges(g: ConvGeometry) -> list[_Rows]:
    """The plane's output rows: border rows one at a time (checked), interior rows in
    blocks of ROWS, the interior rows left over one at a time."""
    sy, dy, py = g.stride[0], g.dilation[0], g.pad[0]
    top = min(g.oh, -(-py // sy))  # first row whose window starts inside
    bottom = min(g.oh, max(top, (g.h - 1 + py - (g.kh - 1) * dy) // sy + 1))  # past the last inside
    blocked = top + (bottom - top) // ROWS * ROWS
    ranges = [_Rows(0, top, 1, True), _Rows(top, blocked, ROWS, False), _Rows(blocked, bottom, 1, False), _Rows(bottom, g.oh, 1, True)]
    return [r for r in ranges if r.first < r.last]


def column_ranges(g: ConvGeometry, lanes: int) -> list[tuple[int, int, bool]]:
    """(first, last, fast) vector starts (multiples of `lanes`) of an output row; fast: every
    tap's load lies inside the input row and the vector is whole (no masks)."""
    sx, dx, px = g.stride[1], g.dilation[1], g.pad[1]
    span = lanes * sx if sx <= 2 else 0  # contiguous columns a tap loads

    def fast(ox0: int) -> bool:
        start = ox0 * sx - px
        return span > 0 and ox0 + lanes <= g.ow and start >= 0 and start + (g.kw - 1) * dx + span <= g.w

    starts = list(range(0, g.ow, lanes))
    inside = [s for s in starts if fast(s)]
    if not inside:
        return [(0, g.ow, False)]
    lo, hi = inside[0], inside[-1] + lanes  # fast starts are one run: the conditions are monotone
    ranges = [(0, lo, False), (lo, hi, True), (hi, g.ow, False)]
    return [r for r in ranges if r[0] < r[1]]


def _planes(kb: KernelBuilder, spec: DepthwiseSpec) -> tuple[ir.Value, ir.Value, ir.Value]:
    """This thread's [first, last) of the n * c planes and the channel count (constants, or
    with `channels_arg` from the last slot: the plane split is `partition`'s, at run time)."""
    g, b = spec.geometry, kb.b
    if not spec.channels_arg:
        q0, q1 = kb.partition(g.n * g.c)
        return q0, q1, i64(g.c)
    channels = b.load(kb.slot(3 + spec.bias + spec.epilogue.residual, I64))
    total = b.mul(channels, i64(g.n))
    q0 = b.sdiv(b.mul(total, kb.tid), kb.nth)
    q1 = b.sdiv(b.mul(total, b.add(kb.tid, i64(1))), kb.nth)
    return q0, q1, channels


def depthwise_kernel(module: ir.Module, spec: DepthwiseSpec, name: str) -> None:
    """args: X, W [C][kh*kw], out, [bias], [residual], [C (`channels_arg`)]; threads split
    the (n, c) planes."""
    g, n = spec.geometry, spec.lanes
    module.unroll = UNROLL_LOOPS  # type: ignore[attr-defined]
    kb = KernelBuilder(module, name)
    x, w, out = kb.slot(0), kb.slot(1), kb.slot(2)
    bias = kb.slot(3) if spec.bias else None
    res = kb.slot(3 + spec.bias) if spec.epilogue.residual else None
    b = kb.b
    # an exp-based activation beside more than 9 weights: applied after each block of rows
    kind = spec.epilogue.activation
    late = (kind in ("act.swish", "act.sigmoid") and (g.kh * g.kw > LATE_TAPS or g.ow < LATE_WIDTH)
            or kind in LATE_CHEAP and (g.stride == (1, 1) or g.kh * g.kw > 9))
    per_plane = late and g.p <= PLANE_PASS
    if padded_layout(g, n, spec.panels) is not None:
        _padded_plane_kernel(kb, spec, late, per_plane)
        return
    assert not spec.panels, "B panels are written by the stack-plane kernel only (panel_output_fits)"
    assert spec.input_activation[0] == "none", "an input activation is applied by the stack-plane kernel only (takes_input_activation)"
    q0, q1, channels = _planes(kb, spec)
    with kb.loop(q0, q1, name="plane") as q:
        c = b.urem(q, channels) if g.n > 1 else q
        src = kb.at(x, b.mul(q, i64(g.h * g.w)))
        dst_off = b.mul(q, i64(g.p))
        init = kb.splat(b.load(kb.at(bias, c)), n) if bias is not None else kb.vconst(0.0, n)
        taps = kb.at(w, b.mul(c, i64(g.kh * g.kw)))
        weights = [kb.splat(b.load(kb.at(taps, t)), n) for t in range(g.kh * g.kw)]
        for rr in row_ranges(g):
            with kb.loop(rr.first, rr.last, rr.count, name="oy") as oy:
                offsets = sorted({r * g.stride[0] + ky * g.dilation[0] for r in range(rr.count) for ky in range(g.kh)})
                rows = dict(zip(offsets, _rows(kb, g, src, oy, offsets, rr.checked, n)))
                columns = [(0, g.ow, False)] if rr.checked else column_ranges(g, n)
                for first, last, fast in columns:
                    with kb.loop(first, last, n, name="ox") as ox0:
                        accs = _output_vectors(kb, g, rows, weights, ox0, init, rr.count, n, fast)
                        mask = None if fast else kb.mask(b.sub(i64(g.ow), ox0), n)
                        for r, acc in enumerate(accs):
                            offset = b.add(dst_off, b.add(b.mul(b.add(oy, i64(r)), i64(g.ow)), ox0))
                            _store(kb, spec, acc, out, res, offset, n, mask, late)
                if late and not per_plane:
                    _epilogue_pass(kb, spec, out, res, b.add(dst_off, b.mul(oy, i64(g.ow))), rr.count * g.ow)
        if per_plane:
            _epilogue_pass(kb, spec, out, res, dst_off, g.p)
    kb.finish()


def _store(kb: KernelBuilder, spec: DepthwiseSpec, acc: ir.Value, out: ir.Value, res: ir.Value | None, offset: ir.Value,
           n: int, mask: ir.Value | None, late: bool) -> None:
    """Store one output vector: raw when the epilogue runs later over the plane or the rows,
    else through the epilogue (with the residual read at the same offset)."""
    if late:
        kb.vstore(acc, kb.at(out, offset), mask)
        return
    residual = kb.vload(kb.at(res, offset), n, mask=mask) if res is not None else None
    kb.vstore(apply_epilogue(kb, spec.epilogue, acc, residual), kb.at(out, offset), mask)


def _epilogue_pass(kb: KernelBuilder, spec: DepthwiseSpec, out: ir.Value, res: ir.Value | None, start: ir.Value, count: int) -> None:
    """The epilogue over `count` outputs from `start`, just stored (in L1): an exp-based
    activation's constants beside a 5x5 window's 25 weights and the accumulators spilled in
    the tap loop (EfficientNet's 5x5 layer at 28x28: 654 us fused there, 403 + a separate
    Swish pass unfused)."""
    b, n = kb.b, spec.lanes
    wide = count - count % (4 * n)  # 4 vectors a step: the exp's long dependency chains overlap
    full = count - count % n
    for lo, hi, step, masked in ((0, wide, 4 * n, False), (wide, full, n, False), (full, count, n, True)):
        if hi <= lo:
            continue
        with kb.loop(lo, hi, step, name="ep") as i:
            mask = kb.mask(count - full, n) if masked else None
            for part in range(0, step, n):
                at = b.add(start, b.add(i, i64(part)))
                residual = kb.vload(kb.at(res, at), n, mask=mask) if res is not None else None
                value = apply_epilogue(kb, spec.epilogue, kb.vload(kb.at(out, at), n, mask=mask), residual)
                kb.vstore(value, kb.at(out, at), mask)


def _rows(kb: KernelBuilder, g: ConvGeometry, src: ir.Value, oy: ir.Value, offsets: list[int], checked: bool, n: int) -> list[tuple[ir.Value, ir.Value | None]]:
    """(row pointer, all-lanes validity or None when the row is known inside) of input rows
    oy * stride + offset - pad."""
    b = kb.b
    rows = []
    for offset in offsets:
        iy = b.sub(b.add(b.mul(oy, i64(g.stride[0])), i64(offset)), i64(g.pad[0]))
        if not checked:
            rows.append((kb.at(src, b.mul(iy, i64(g.w))), None))
            continue
        ok = b.icmp_unsigned("<", iy, i64(g.h))
        safe = b.select(ok, iy, i64(0))
        rows.append((kb.at(src, b.mul(safe, i64(g.w))), kb.splat(ok, n)))
    return rows


def _inside(kb: KernelBuilder, start: ir.Value, size: int, n: int) -> ir.Value:
    """Lanes l with 0 <= start + l < size (one unsigned compare, in i32 lanes: half the
    registers of i64 ones)."""
    lanes = ir.Constant(vec(n, I32), list(range(n)))
    first = kb.b.trunc(start, I32)
    return kb.b.icmp_unsigned("<", kb.b.add(kb.splat(first, n), lanes), kb.splat(ir.Constant(I32, size), n))


def _load(kb: KernelBuilder, row: ir.Value, start: ir.Value, masks: list[ir.Value | None], n: int) -> ir.Value:
    """row[start + s l] for lanes l at stride s = len(masks) (1 or 2): contiguous loads of n
    columns each (masked where a mask is given), stride 2 keeping the even lanes."""
    b = kb.b
    parts = [kb.vload(b.gep(row, [b.add(start, i64(p * n)) if p else start]), n, mask=m) for p, m in enumerate(masks)]
    if len(parts) == 1:
        return parts[0]
    return b.shuffle_vector(parts[0], parts[1], ir.Constant(vec(n, I32), list(range(0, 2 * n, 2))))


def _output_vectors(kb: KernelBuilder, g: ConvGeometry, rows, weights, ox0, init, count: int, n: int, fast: bool):  # type: ignore[no-untyped-def]
    """Sums over taps for outputs (oy + r, ox0 .. ox0 + n - 1), r < count: each input row's
    vector of a column tap is loaded once and used by every output row that reads it."""
    b = kb.b
    sx = g.stride[1]
    accs = [init] * count
    lanes = ir.Constant(vec(n, I64), list(range(n)))
    for kx in range(g.kw):
        start = b.add(b.mul(ox0, i64(sx)), i64(kx * g.dilation[1] - g.pad[1]))
        if fast:
            cols: list[ir.Value | None] = [None] * sx
        elif sx in (1, 2):
            cols = [_inside(kb, b.add(start, i64(p * n)) if p else start, g.w, n) for p in range(sx)]
        else:
            ix = b.add(b.mul(b.add(kb.splat(ox0, n), lanes), kb.splat(i64(sx), n)), kb.splat(i64(kx * g.dilation[1] - g.pad[1]), n))
            cols = [b.icmp_unsigned("<", ix, kb.splat(i64(g.w), n))]
        for offset, (row, row_ok) in rows.items():
            masks = [m if row_ok is None else b.and_(m, row_ok) for m in cols]  # type: ignore[arg-type]
            if fast or sx in (1, 2):
                values = _load(kb, row, start, masks, n)
            else:
                values = kb.gather(row, ix, masks[0])
            for r in range(count):
                ky, rest = divmod(offset - r * g.stride[0], g.dilation[0])
                if rest == 0 and 0 <= ky < g.kh:
                    accs[r] = kb.fma(weights[ky * g.kw + kx], values, accs[r])
    return accs


@dataclass(frozen=True)
class _PaddedLayout:
    """The zero-padded stack plane of `_padded_plane_kernel`: `rows` rows of `pitch` floats,
    the input at row `top` and column `left`, and `floats` in all (slack for the lanes past
    the outputs, which read past the plane)."""

    rows: int
    pitch: int
    top: int
    left: int
    floats: int
    ring: int = 0
    """split rows held at once (`SPLIT_RING_OW_MAX`), a power of two; 0: the whole plane"""


def _ring_rows(g: ConvGeometry) -> int:
    """Ring slots for a block of ROWS output rows' input rows (a power of two: a row's slot is
    its padded row index masked)."""
    need = g.stride[0] * (ROWS - 1) + (g.kh - 1) * g.dilation[0] + 1
    return 1 << (need - 1).bit_length()


def padded_layout(g: ConvGeometry, n: int, panels: bool = False) -> _PaddedLayout | None:
    """The stack plane for `g`, or None where the cut kernel runs (wide rows, strides over 2,
    a plane too large for the stack); `panels`: for a layer writing B panels."""
    sy, sx = g.stride
    limit = PADDED_OW_MAX if (sy, sx) == (1, 1) else PADDED_STRIDED_OW_MAX
    if panels and 2 * _panel_plane(g, n) > PANEL_STACK_MAX:
        return None
    if (sy, sx) == (1, 1) and g.dilation != (1, 1):
        limit = max(limit, PADDED_DILATED_OW_MAX)
    ring = COLUMN_PHASES and sx == 2 and not panels and limit < g.ow <= SPLIT_RING_OW_MAX
    if ring:
        limit = SPLIT_RING_OW_MAX
    if not (0 < g.ow <= limit and sy <= 2 and sx <= 2 and g.pad[0] >= 0 and g.pad[1] >= 0):
        return None
    rows = max(g.pad[0] + g.h, (g.oh - 1) * sy + (g.kh - 1) * g.dilation[0] + 1)
    # every column an output lane < ow reads, and the input row with its left pad
    pitch = max(g.pad[1] + g.w, (g.ow - 1) * sx + (g.kw - 1) * g.dilation[1] + 1)
    vectors = -(-g.ow // n)
    # past the last row: the lanes >= ow of its last vector (2 vectors at stride 2), and the
    # copy's spill past the last input row
    slack = vectors * n * sx + (g.kw - 1) * g.dilation[1] + 2 * n
    floats = -(-(rows * pitch + slack) // n) * n
    held = _ring_rows(g) if ring else rows
    split = -(-(-(-pitch // 2)) // n) * n * 2 * held + pitch + (g.kw - 1) * g.dilation[1] + 2 * n if sx == 2 else 0
    if max(0 if ring else floats, split) > PADDED_STACK_MAX:  # split: `_padded_plane_kernel`'s even / odd rows
        return None
    return _PaddedLayout(rows, pitch, g.pad[0], g.pad[1], floats, _ring_rows(g) if ring else 0)


def _padded_plane_kernel(kb: KernelBuilder, spec: DepthwiseSpec, late: bool, per_plane: bool) -> None:
    """The kernel body for planes of `padded_layout`: per plane, its input rows are copied
    into the stack plane (zeroed once: the copies' lanes past a row are zeros, so the pads
    stay zero), then the output rows run in blocks of ROWS over plain loads (with `ring`,
    each block first splits the input rows it reads past the previous block's into the ring). A row's vectors
    are stored from the last to the first, whole: a partial last vector's spill lands on
    the next row's first vector, stored after it; only the plane's very last vector is
    masked (the next plane may be another thread's)."""
    g, n = spec.geometry, spec.lanes
    lay = padded_layout(g, n, spec.panels)
    assert lay is not None and not (spec.panels and spec.epilogue.residual)
    b = kb.b
    x, w, out = kb.slot(0), kb.slot(1), kb.slot(2)
    bias = kb.slot(3) if spec.bias else None
    res = kb.slot(3 + spec.bias) if spec.epilogue.residual else None
    split = COLUMN_PHASES and g.stride[1] == 2
    # split: row r's even padded columns at r * 2 qrow, its odd ones qrow further
    qrow = -(-(-(-lay.pitch // 2)) // n) * n
    copies = -(-g.w // n)
    floats = lay.floats if not split else -(-((lay.ring or lay.rows) * 2 * qrow + qrow + (g.kw - 1) * g.dilation[1] + 2 * n) // n) * n
    # panels: each plane's outputs go to one of two stack planes first (every vector stored
    # whole: its spill past the plane stays on the stack), copied to the panels while the next
    # plane is computed (`_store_panels`)
    capacity = _panel_plane(g, n) if spec.panels else g.p
    with b.goto_block(kb.fn.entry_basic_block):
        stack = b.bitcast(b.alloca(ir.ArrayType(ir.FloatType(), floats)), ir.PointerType(ir.FloatType()))
        if spec.panels:
            plane_out = b.bitcast(b.alloca(ir.ArrayType(ir.FloatType(), 2 * capacity)), ir.PointerType(ir.FloatType()))
    with kb.loop(0, floats, n, name="zero") as i:
        kb.vstore(kb.vconst(0.0, n), kb.at(stack, i))
    panels_out, out = (out, plane_out) if spec.panels else (None, out)
    # the stack plane read as an unpadded input of `lay.pitch` columns
    inner = ConvGeometry(g.n, g.c, lay.rows, lay.pitch, g.kh, g.kw, g.oh, g.ow, g.stride, g.dilation, (0, 0), g.group)
    vectors = -(-g.ow // n)
    # rows whose stores would run past the plane (the last; more where n > 2 ow) run as
    # unrolled blocks at the end, those stores masked at the plane's end
    crossing = [r for r in range(g.oh) if r * g.ow + vectors * n > capacity]
    # rows a block: twice ROWS where a row is one vector and its weights spill (PAIR_ROWS)
    block_rows = 2 * ROWS if PAIR_ROWS and split and not lay.ring and vectors == 1 and g.kh * g.kw > PAIR_TAPS else ROWS
    last_start = min([(g.oh - 1) // block_rows * block_rows] + [r // block_rows * block_rows for r in crossing[:1]])
    q0, q1, channels = _planes(kb, spec)
    act, act_params = spec.input_activation

    def on_input(v: ir.Value) -> ir.Value:
        """An input vector as the stack plane holds it: through the input activation (a
        masked-off lane loads 0, which it keeps 0)."""
        return v if act == "none" else activate(kb, act, act_params, v)

    def buffered(plane: ir.Value) -> ir.Value:
        """The stack plane of `plane`: planes alternate between two."""
        return kb.at(plane_out, b.mul(b.and_(b.sub(plane, q0), i64(1)), i64(capacity)))

    def to_panels(plane: ir.Value) -> None:
        _store_panels(kb, buffered(plane), kb.at(panels_out, b.mul(plane, i64(NR))), b.mul(channels, i64(NR)), g.p, n)

    with kb.loop(q0, q1, name="plane") as q:
        c = b.urem(q, channels) if g.n > 1 else q
        src = kb.at(x, b.mul(q, i64(g.h * g.w)))
        if panels_out is not None:
            out = buffered(q)
        def split_row(row_in: ir.Value, even: ir.Value) -> None:
            """Input row `row_in` as its even / odd padded columns 2 j + phase = input column
            2 j + phase - left at `even` and qrow further: two loads of the input row (masked
            to it: the pads' lanes load zeros) and an even- and an odd-lane shuffle per
            vector of each phase row."""
            for j0 in range(0, qrow, n):
                parts = []
                for start in (2 * j0 - lay.left, 2 * j0 - lay.left + n):
                    lanes = [0 <= start + lane < g.w for lane in range(n)]
                    if not any(lanes):
                        parts.append(kb.vconst(0.0, n))
                        continue
                    mask = None if all(lanes) else vector_constant(vec(n, I1), lanes)
                    parts.append(on_input(kb.vload(b.gep(row_in, [i64(start)]), n, mask=mask)))
                for phase in range(2):
                    pick = ir.Constant(vec(n, I32), list(range(phase, 2 * n, 2)))
                    kb.vstore(b.shuffle_vector(parts[0], parts[1], pick), kb.at(even, i64(phase * qrow + j0)))

        def fill_ring(first: ir.Value, last: ir.Value) -> None:
            """Padded rows [first, last) into their ring slots: input rows split, pad rows zeros
            (a slot held another row before)."""
            with kb.loop(first, last, name="ring") as pr:
                slot = kb.at(stack, b.mul(b.and_(pr, i64(lay.ring - 1)), i64(2 * qrow)))
                iy = b.sub(pr, i64(lay.top))
                with b.if_else(b.icmp_unsigned("<", iy, i64(g.h))) as (inside, outside):
                    with inside:
                        if RING_PREFETCH_ROWS:  # past the plane's end: the next plane's first rows
                            ahead = kb.at(src, b.mul(b.add(iy, i64(RING_PREFETCH_ROWS)), i64(g.w)))
                            for line in range(0, g.w, 16):
                                kb.prefetch(kb.at(ahead, i64(line)))
                        split_row(kb.at(src, b.mul(iy, i64(g.w))), slot)
                    with outside:
                        for j0 in range(0, 2 * qrow, n):
                            kb.vstore(kb.vconst(0.0, n), kb.at(slot, i64(j0)))

        extent = (g.kh - 1) * g.dilation[0] + 1  # padded rows one output row reads
        if lay.ring:
            fill_ring(i64(0), i64(max(0, extent - g.stride[0])))
        else:
            with kb.loop(0, g.h, name="copy") as iy:
                row_in = kb.at(src, b.mul(iy, i64(g.w)))
                if PLANE_PREFETCH_ROWS:
                    ahead = kb.at(row_in, i64(PLANE_PREFETCH_ROWS * g.w))
                    for line in range(0, g.w, 16):
                        kb.prefetch(kb.at(ahead, i64(line)))
                if split:
                    split_row(row_in, kb.at(stack, b.mul(b.add(iy, i64(lay.top)), i64(2 * qrow))))
                else:
                    row_out = kb.at(stack, b.add(b.mul(b.add(iy, i64(lay.top)), i64(lay.pitch)), i64(lay.left)))
                    for v in range(copies):
                        mask = None if (v + 1) * n <= g.w else kb.mask(g.w - v * n, n)
                        kb.vstore(on_input(kb.vload(kb.at(row_in, i64(v * n)), n, mask=mask)), kb.at(row_out, i64(v * n)))
        dst_off = i64(0) if spec.panels else b.mul(q, i64(g.p))
        init = kb.splat(b.load(kb.at(bias, c)), n) if bias is not None else kb.vconst(0.0, n)
        taps = kb.at(w, b.mul(c, i64(g.kh * g.kw)))
        weights = [kb.splat(b.load(kb.at(taps, t)), n) for t in range(g.kh * g.kw)]

        def block(oy: ir.Value, count: int, first: int | None) -> None:
            """Rows oy .. oy + count - 1; `first`: oy as a constant where a store may cross
            the plane's end."""
            offsets = sorted({r * g.stride[0] + ky * g.dilation[0] for r in range(count) for ky in range(g.kh)})
            if lay.ring:  # the rows past the previous block's
                top_row = b.mul(oy, i64(g.stride[0]))
                fill_ring(b.add(top_row, i64(extent - g.stride[0])), b.add(top_row, i64(g.stride[0] * (count - 1) + extent)))
                rows = {o: kb.at(stack, b.mul(b.and_(b.add(top_row, i64(o)), i64(lay.ring - 1)), i64(2 * qrow))) for o in offsets}
            elif split:
                rows = {o: kb.at(stack, b.mul(b.add(b.mul(oy, i64(g.stride[0])), i64(o)), i64(2 * qrow))) for o in offsets}
            else:
                rows = dict(zip(offsets, _rows(kb, inner, stack, oy, offsets, False, n)))
            pair = 2 if split and g.kh * g.kw > PAIR_TAPS else 1
            # the row's vectors from the last to the first, `pair` computed together
            groups = [list(range(v, min(v + pair, vectors))) for v in reversed(range(0, vectors, pair))]
            for group in groups:
                if split:
                    computed = _phase_vectors(kb, g, rows, weights, [v * n for v in group], qrow, init, count, n)
                else:
                    computed = [_output_vectors(kb, inner, rows, weights, i64(group[0] * n), init, count, n, True)]
                for v, accs in reversed(list(zip(group, computed))):
                    ox0 = i64(v * n)
                    for r, acc in enumerate(accs):
                        end = None if first is None else (first + r) * g.ow + v * n
                        mask = kb.mask(capacity - end, n) if end is not None and end + n > capacity else None
                        offset = b.add(dst_off, b.add(b.mul(b.add(oy, i64(r)), i64(g.ow)), ox0))
                        _store(kb, spec, acc, out, res, offset, n, mask, late)
            if late and not per_plane:
                _epilogue_pass(kb, spec, out, res, b.add(dst_off, b.mul(oy, i64(g.ow))), count * g.ow)

        with kb.loop(0, last_start, block_rows, name="oy") as oy:
            block(oy, block_rows, None)
        for first in range(last_start, g.oh, block_rows):
            block(i64(first), min(block_rows, g.oh - first), first)
        if per_plane:
            _epilogue_pass(kb, spec, out, res, dst_off, g.p)
        if panels_out is not None:  # the previous plane's stores retired: its loads forward no store
            with kb.if_(b.icmp_signed(">", q, q0)):
                to_panels(b.sub(q, i64(1)))
    if panels_out is not None:
        with kb.if_(b.icmp_signed(">", q1, q0)):
            to_panels(b.sub(q1, i64(1)))
    kb.finish()


def _panel_plane(g: ConvGeometry, n: int) -> int:
    """Floats of one stack plane a panel-writing layer's outputs go to: its last vector's
    spill, rounded to whole panel rows."""
    return -(-(g.p + n) // NR) * NR


def _store_panels(kb: KernelBuilder, plane: ir.Value, dst: ir.Value, panel_step: ir.Value, p: int, n: int) -> None:
    """A finished output plane of `p` floats (on the stack, in L1) copied into its K row of the
    B panels from `dst` (panel j's row at j * `panel_step`): `pack_rows_kernel`'s copy, the
    last panel's columns past `p` zeros (masked loads)."""
    b = kb.b
    full, tail = divmod(p, NR)
    with kb.loop(0, full, name="panel") as j:
        for part in range(0, NR, n):
            value = kb.vload(kb.at(plane, b.add(b.mul(j, i64(NR)), i64(part))), n)
            kb.vstore(value, kb.at(dst, b.add(b.mul(j, panel_step), i64(part))))
    if tail:
        last = kb.at(dst, b.mul(i64(full), panel_step))
        for part in range(0, NR, n):
            mask = kb.mask(tail - part, n) if tail - part < n else None
            value = kb.vload(kb.at(plane, i64(full * NR + part)), n, mask=mask) if tail > part else kb.vconst(0.0, n)
            kb.vstore(value, kb.at(last, i64(part)))


def _phase_vectors(kb: KernelBuilder, g: ConvGeometry, rows: dict[int, ir.Value], weights, starts: list[int], qrow: int, init, count: int, n: int):  # type: ignore[no-untyped-def]
    """`_output_vectors` at column stride 2 over the split stack plane, for the vectors of a
    row at `starts` together (PAIR_TAPS): input column 2 ox + kx dx is column
    ox + (kx dx) // 2 of the row's phase (kx dx) % 2. Per start, the ROWS accumulators."""
    accs = [[init] * count for _ in starts]
    for kx in range(g.kw):
        phase, shift = divmod(kx * g.dilation[1], 2)[::-1]
        for offset, row in rows.items():
            values = [kb.vload(kb.at(row, i64(phase * qrow + ox0 + shift)), n) for ox0 in starts]
            for r in range(count):
                ky, rest = divmod(offset - r * g.stride[0], g.dilation[0])
                if rest == 0 and 0 <= ky < g.kh:
                    for i, value in enumerate(values):
                        accs[i][r] = kb.fma(weights[ky * g.kw + kx], value, accs[i][r])
    return accs
