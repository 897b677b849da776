"""Convolutions as an implicit GEMM over a zero-padded, polyphase copy of the input.

im2col writes kh*kw copies of the input (a 3x3 layer at 56x56: 7 MiB that go to memory, and
in a whole ResNet-50 run cost 40-70% of the GEMM's own time). Instead the input is copied
once into planes that need no bounds checks, and the GEMM reads B straight from them
(`gemm.Shifted`): for stride s the padded input is split into its s_y * s_x phases, plane
(py, px) holding rows s*i + py and columns s*j + px, so that tap (ky, kx) of output (y, x)
is element [y + ky*d // s][x + kx*d // s] of phase (ky*d % s, kx*d % s): at every stride
a tap is one constant offset and 16 outputs of a row are one contiguous load. Each output
row is computed over the plane's whole row length (the pad columns are dropped when stored).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.copy import FILL, Move
from irforge.backends.cpu.codegen.epilogue import Epilogue
from irforge.backends.cpu.codegen.gemm import NR, Batch, GemmSpec, Shifted, balanced_rows, pack_a_all
from irforge.backends.cpu.codegen.im2col_flat import flat_pays
from irforge.backends.cpu.codegen.irutil import VW
from irforge.backends.cpu.codegen.phases import PhaseSpec, phase_planes_kernel
from irforge.backends.cpu.lower import Buffer, Lowering
from irforge.backends.cpu.ops.gemm_function import gemm_function
from irforge.backends.cpu.ops.movement import emit_moves
from irforge.dialects.nn import Convolution

MAX_WASTE = 0.1
"""Above this share of pad columns in a plane row im2col is cheaper (at 56x56 a 3x3 window
wastes 3% against an im2col costing 40-70% of the GEMM; at 14x14 12.5% against 7%)."""
MAX_WASTE_GROUPED = 0.6
"""The same for a grouped layer, whose im2col costs several times its small GEMMs."""
MIN_TAPS_PER_PHASE = 2
"""A strided window runs on phase planes only if it has at least this many taps per phase:
the 7x7 stride-2 stem (12) saves its 49-fold im2col (2.9 -> 1.7 ms in a ResNet-50 run). A
3x3 stride-2 layer (2.25) ran 1.9 ms against 1.6 with im2col (a table-driven phase copy,
and B's rows spread over four planes) until the shifted tiles prefetched every tap's A row
and B row; since they prefetch each line once, ResNet-50's 128-channel 56x56 -> 28x28
layer (Conv + bias + ReLU alone, min of 60 alternating calls) runs 3.5-3.8 ms on im2col and
3.0-3.2 on the planes. 1x3 / 3x1 stride-2 windows (1.5 taps per phase) keep im2col."""
MIN_STRIDED_COLUMNS = 15
"""A strided dense window takes the planes from this many output columns up (stride-1 ones
from a vector's 16), the pad-column waste permitting: ResNet-50's 256-channel 3x3 stride-2
layer at 14x14 outputs (rows of 15 on the planes) ran im2col 0.91 + GEMM 2.47 ms, and
planes 0.13 + GEMM 3.06 (session 5: from 8 columns); since narrow rows are unfolded
through a stack row (`conv.NARROW_BUFFERED`, no masked stores) im2col is the cheaper one:
the whole layer 0.80x the planes' time (min of 40, twice, session 7)."""
GROUPED_LEAST_ROW = 1
"""A grouped layer's plane rows are at least this long (were a vector's 16 while the tile's
stores handled two output rows per vector: ResNeXt-50's 7x7 layers ran 2.2-2.3x onnxruntime;
rows of 8 there: 0.60-0.62x the time, same-process A/B)."""
GROUPED_ALIGNED_ROWS = True
"""A grouped layer's rows shorter than a vector are rounded up to a divisor of it (7x7: 8,
14x14: 16, not 15), so that each C vector starts a row: rows of 15 at 14x14 ran 1.27x the
time of rows of 16 (every vector split over two rows, masked stores)."""
SPLIT_GROUPS = 8
"""From this many groups (one sample) threads take whole groups' GEMMs instead of splitting each."""
PHASE_KERNEL = True
"""Stride-2 planes are written by `codegen.phases` (vectors: a stack row, plain loads and an
even/odd shuffle) instead of the table-driven element copy of `planes.moves()`."""
PHASE_STACK_MAX = 8192
"""Longest stack row (floats) of that kernel; wider inputs keep the element copy."""
FLAT_IM2COL_MAX = 2 << 20
"""A stride-1 1-D window (kh or kw 1) whose im2col is the flat one
(`codegen.im2col_flat.flat_pays`) and whose B panels take at most this many bytes runs on
im2col + the packed GEMM instead of the planes (0: never). Inception-v3's 7x1 layers at 17x17 (1.1-1.6 MiB of panels): their GEMMs 0.895x
the planes' time (82-85 GF/s there: B read at 7 unaligned offsets), the whole 0.983 in phases
(`cpu_knob_ab.py inception_v3 irforge.backends.cpu.ops.shifted:FLAT_IM2COL_MAX --a 0 --b
4000000 --cpu-time`, session 15). Inception-v3's 5x5 layers at 35x35 (5.9 MiB of panels) at
8 MiB: their GEMMs 0.961x, the im2cols more than that, whole 1.004; GoogLeNet 0.999. 2-D
windows stay on the planes (not measured under 2 MiB: Winograd takes most)."""
SHIFTED_KC = 576
"""K block: 64 channels of a 3x3 window (a 12-row A micro-panel of 27 KiB stays in L1 beside
B's rows; 378 ran 3-8% slower on the 56x56 and 28x28 layers)."""

WIDE_WINDOW_TAPS = 64
"""A window of more taps than this (AlexNet's 11x11 stride-4 stem: 121 taps over 16 phase
planes, each channel's taps reading 48 plane rows) takes K blocks of at most
`WIDE_WINDOW_CHANNELS` channels: the stem's 3 channels in one block of 363 ran 2.43 ms, in
blocks of 2 + 1 channels 2.18 (0.90), of 1 channel 1.38x slower (same-process A/Bs of
SHIFTED_KC, docs/STATUS.md session 15); 3x3 and 5x5 windows keep SHIFTED_KC (5x5: 400 ran as 576)."""
WIDE_WINDOW_CHANNELS = 2


def shifted_kc(taps: int) -> int:
    """K block of a shifted GEMM over windows of `taps` taps: whole channels, at least one."""
    channels = max(1, SHIFTED_KC // taps)
    if taps > WIDE_WINDOW_TAPS:
        channels = min(channels, WIDE_WINDOW_CHANNELS)
    return channels * taps


@dataclass(frozen=True)
class Planes:
    """The polyphase planes of one convolution's padded input."""

    g: ConvGeometry

    @property
    def phases(self) -> tuple[int, int]:
        return self.g.stride

    @property
    def rows(self) -> int:
        return self.g.oh + (self.g.kh - 1) * self.g.dilation[0] // self.g.stride[0]

    @property
    def row(self) -> int:
        """The plane's row length. At stride 1 rows share their zero columns: a read past a
        row's end lands in the next row's left pad, so the row needs only the larger pad
        (W + 1 for a 3x3 window: 1/15 of a 14x14 layer is pad columns, not 2/16)."""
        g = self.g
        # a grouped layer's rows are as long as its window needs (`GROUPED_LEAST_ROW`): a C
        # vector then spans up to three output rows of a 7x7 plane (rows of 8), where rows
        # widened to a vector computed 16 positions for 7 outputs
        # a dense one's rows are at least VW - 1 long: a C vector (16 positions) then spans
        # at most two output rows (strided windows reach here from 8 output columns)
        least = GROUPED_LEAST_ROW if g.group > 1 else max(g.ow, VW - 1)
        if g.stride == (1, 1):
            right = g.ow + (g.kw - 1) * g.dilation[1] - g.w - g.pad[1]
            row = max(g.w + max(g.pad[1], right, 0), g.ow, least)
        else:
            row = max(g.ow + (g.kw - 1) * g.dilation[1] // g.stride[1], least)
        if g.group > 1 and GROUPED_ALIGNED_ROWS and row < VW:
            row = 1 << (row - 1).bit_length()  # VW is a power of two
        return row

    @property
    def plane(self) -> int:
        return self.rows * self.row

    @property
    def channel(self) -> int:
        """Elements per input channel: all its phase planes."""
        return self.phases[0] * self.phases[1] * self.plane

    def offsets(self) -> tuple[int, ...]:
        """The element offset of each tap (ky, kx), row-major, from a channel's first plane."""
        (sy, sx), (dy, dx) = self.g.stride, self.g.dilation
        return tuple(
            ((ky * dy % sy) * sx + kx * dx % sx) * self.plane + (ky * dy // sy) * self.row + kx * dx // sx
            for ky in range(self.g.kh) for kx in range(self.g.kw)
        )

    def moves(self) -> list[Move]:
        """One copy per phase: [n][c][rows][row] of padded rows s*i + py, columns s*j + px."""
        g, (sy, sx) = self.g, self.phases

        def axis(size: int, count: int, step: int, first: int, stride: int) -> tuple[int, ...]:
            return tuple((i * step + first) * stride if 0 <= i * step + first < size else FILL for i in range(count))

        # the last plane's last row reads up to a row past its end (into the next plane's
        # zero columns, and past the last plane into this zeroed row)
        end = Move(0, 1, (self.row,), ((FILL,) * self.row,), (1,), dst_offset=g.n * g.c * self.channel)
        return [end] + [
            Move(0, 1, (g.n, g.c, self.rows, self.row),
                 (g.c * g.h * g.w, g.h * g.w, axis(g.h, self.rows, sy, py - g.pad[0], g.w), axis(g.w, self.row, sx, px - g.pad[1], 1)),
                 (g.c * self.channel, self.channel, self.row, 1), dst_offset=(py * sx + px) * self.plane)
            for py in range(sy) for px in range(sx)
        ]


def shifted_pays(g: ConvGeometry) -> bool:
    """Whether a dense or grouped convolution runs as an implicit GEMM on its padded planes.
    A grouped layer's GEMMs are small (4-32 rows, 36-288 k), so im2col's copy costs several
    times the GEMM itself (ResNeXt-50's 56x56 layer: 9.5 ms of im2col for a 1.0 ms GEMM):
    it takes the planes at stride 2 too."""
    grouped = g.group > 1
    if flat_pays(g) and 1 in (g.kh, g.kw) and 4 * g.panels * NR * g.k_per_group <= FLAT_IM2COL_MAX:
        return False
    if g.kh * g.kw == 1 or (g.ow < (MIN_STRIDED_COLUMNS if g.stride != (1, 1) else VW) and not grouped):
        return False
    if g.stride != (1, 1) and (g.dilation != (1, 1) or (not grouped and g.kh * g.kw < MIN_TAPS_PER_PHASE * g.stride[0] * g.stride[1])):
        return False
    row = Planes(g).row
    return (row - g.ow) / row <= (MAX_WASTE_GROUPED if grouped else MAX_WASTE)


def shifted_convolution(ctx: Lowering, op: Convolution, g: ConvGeometry, weights: np.ndarray, args: list[Buffer], epilogue: Epilogue) -> None:
    """Copy the input into its padded planes, then one GEMM reading them in place.
    `args`: input, output, then the bias and residual buffers the epilogue reads."""
    x, out, *tail = args
    planes = Planes(g)
    # + a row and NR: the pad-column loads of the last row's last tile (and the phase
    # kernel's whole-vector stores of the zero row)
    padded = ctx.scratch(4 * (g.n * g.c * planes.channel + planes.row + NR))
    phases = PhaseSpec(g.n * g.c, g.h, g.w, g.pad, planes.rows, planes.row)
    if PHASE_KERNEL and g.stride == (2, 2) and phases.stack_floats() <= PHASE_STACK_MAX:
        ctx.phase(ctx.kernel(("phases", phases), lambda m, n: phase_planes_kernel(m, phases, n)), [x, padded])
    else:
        emit_moves(ctx, op, [x, padded], planes.moves())
    offsets = planes.offsets()
    kc = shifted_kc(len(offsets))
    o = weights.shape[0]
    og, kg, cg = o // g.group, g.k_per_group, g.c // g.group
    # a grouped layer's few rows per group in equally full M blocks (8: 4 + 4, not 6 + 2)
    rows = balanced_rows(og) if g.group > 1 else 0
    packed = pack_a_all([weights[i * og:(i + 1) * og] for i in range(g.group)], og, kg, kc, rows)
    levels = tuple(level for level in (
        Batch(g.n, 0, g.c * planes.channel, o * g.p, 0),
        Batch(g.group, packed.size // g.group, cg * planes.channel, og * g.p, og),
    ) if level.count > 1)
    spec = GemmSpec(
        m=og, n=(g.oh - 1) * planes.row + g.ow, k=kg, a_panel=True, ldc=g.p,
        bias="row" if op.bias is not None else "none", epilogue=epilogue, kc=kc,
        shifted=Shifted(offsets, planes.channel, planes.row, g.ow, g.oh), batches=levels,
        # a grouped layer's GEMMs are too small to split: threads take whole groups
        split_batches=g.n == 1 and g.group >= SPLIT_GROUPS, block_rows=rows,
    )
    a_buf = ctx.const(packed)
    name = gemm_function(ctx, spec)
    ctx.phase(name, [a_buf, padded, out, *tail], f"conv{g.kh}x{g.kw}", 2 * g.n * o * g.p * g.k_per_group)
