"""Winograd F(m x m, 3x3): a 3x3 convolution as a*a GEMMs of fewer FMAs (stride 1: a = m + 2;
stride 2: a = 2m + 1, see `STRIDE2_MATRICES`).

Each m x m output tile is A^T [(G g G^T) . (B^T d B)] A of its a x a input tile d (Lavin and
Gray, 2016). With V = B^T d B per input channel and U = G g G^T per (output, input)
channel, the a*a positions (xi, nu) of the transform domain are independent GEMMs,
M[xi nu] (O x T) = U[xi nu] (O x C) . V[xi nu] (C x T) over the T tiles, which the GEMM
core runs as one batched kernel: 2.25x fewer FMAs than the direct convolution for
F(2x2, 3x3), 4x for F(4x4, 3x3). This module has the two transforms around it:

- `input_transform_kernel`: X [N, C, H, W] -> V [a*a][C][T], 16 tiles of a tile row per
  vector: each of the a input rows of the tiles is copied once per tile row into a
  zero-padded stack row, read as m + 1 plain loads (from m tx0) and lane shuffles picking
  columns m l + j, then B^T . B as additions and constant FMAs;
- `output_transform_kernel`: M [a*a][O][T] -> Y [N, O, OH, OW], with the bias, a residual
  and ReLU/Clamp applied to the output vectors (the m columns of each tile interleaved back).

Tiles are numbered t = (n * TH + ty) * TW + tx. F(2x2, 3x3)'s transforms use only 0, +-1 and
+-1/2 (results within a few ulps of the direct convolution); F(4x4, 3x3)'s up to 8 and 1/24,
which costs about an order of magnitude more rounding (3e-6 of the output's range at 64
channels against 2e-7).

Stride 2: an m x m output tile reads a (2m + 1) x (2m + 1) input tile, tiles 2m input columns
apart. Along each axis the 3-tap stride-2 window splits into its even input samples (taps 0
and 2: a 2-tap stride-1 window, Winograd F(m, 2) of m + 1 points) and its odd ones (tap 1: m
plain products), one 1-D algorithm of 2m + 1 points (`strided_matrices`), nested into 2-D as
for stride 1: (2m + 1)^2 GEMMs per m x m outputs, 25/36 of the direct FMAs for m = 2 and
81/144 for m = 4. The odd rows of B^T and columns of A^T are unit vectors (free).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from llvmlite import ir

from irforge.backends.cpu.codegen.epilogue import Epilogue, apply_epilogue
from irforge.backends.cpu.codegen.irutil import I1, I32, VW, KernelBuilder, i64, vec, vector_constant

F = Fraction
MATRICES = {
    # m: (B^T [a x a], G [a x 3], A^T [m x a])
    2: (
        [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
        [[1, 0, 0], [F(1, 2), F(1, 2), F(1, 2)], [F(1, 2), F(-1, 2), F(1, 2)], [0, 0, 1]],
        [[1, 1, 1, 0], [0, 1, -1, -1]],
    ),
    4: (
        [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
         [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
        [[F(1, 4), 0, 0], [F(-1, 6), F(-1, 6), F(-1, 6)], [F(-1, 6), F(1, 6), F(-1, 6)],
         [F(1, 24), F(1, 12), F(1, 6)], [F(1, 24), F(-1, 12), F(1, 6)], [0, 0, 1]],
        [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
    ),
}

F_M_2 = {
    # m: Winograd F(m, 2) for the even input samples (B^T [m+1 x m+1], G [m+1 x 2], A^T [m x m+1]),
    # Toom-Cook at the points 0, -1 (m = 2) and 0, 1, -1, 2 (m = 4), and infinity
    2: ([[1, 1, 0], [0, 1, 0], [0, 1, 1]], [[1, 0], [-1, 1], [0, 1]], [[1, 1, 0], [0, -1, 1]]),
    4: (
        [[2, -1, -2, 1, 0], [0, -2, -1, 1, 0], [0, 2, -3, 1, 0], [0, -1, 0, 1, 0], [0, 2, -1, -2, 1]],
        [[F(1, 2), 0], [F(-1, 2), F(-1, 2)], [F(-1, 6), F(1, 6)], [F(1, 6), F(1, 3)], [0, 1]],
        [[1, 1, 1, 1, 0], [0, 1, -1, 2, 0], [0, 1, 1, 4, 0], [0, 1, -1, 8, 1]],
    ),
}


def strided_matrices(m: int) -> tuple[list[list], list[list], list[list]]:  # type: ignore[type-arg]
    """The 1-D stride-2 algorithm of 2m + 1 points over the input samples x_0..x_2m of a tile:
    points 0..m are F(m, 2) on the even samples with taps (g0, g2); point m + 1 + i is
    g1 * x_(2i+1), added to output i."""
    be, ge, ae = F_M_2[m]
    a = 2 * m + 1
    bt = [[0] * a for _ in range(a)]
    g = [[0] * 3 for _ in range(a)]
    at = [[0] * a for _ in range(m)]
    for j in range(m + 1):
        for col in range(m + 1):
            bt[j][2 * col] = be[j][col]
        g[j][0], g[j][2] = ge[j]
        for i in range(m):
            at[i][j] = ae[i][j]
    for i in range(m):
        bt[m + 1 + i][2 * i + 1] = 1
        g[m + 1 + i][1] = 1
        at[i][m + 1 + i] = 1
    return bt, g, at


STRIDE2_MATRICES = {m: strided_matrices(m) for m in F_M_2}


def matrices(m: int, stride: int = 1) -> tuple[list[list], list[list], list[list]]:  # type: ignore[type-arg]
    """(B^T [a x a], G [a x 3], A^T [m x a]) of F(m x m, 3x3) at this stride."""
    return MATRICES[m] if stride == 1 else STRIDE2_MATRICES[m]


@dataclass(frozen=True)
class WinogradSpec:
    n: int
    c: int
    o: int
    h: int
    w: int
    oh: int
    ow: int
    pad: tuple[int, int]
    """pads_begin (top, left)"""
    bias: bool = False
    epilogue: Epilogue = Epilogue()
    m: int = 2
    """output tile size: F(m x m, 3x3)"""
    stride: int = 1
    """1 or 2 (both axes)"""

    @property
    def step(self) -> int:
        """Input columns (rows) from one tile to the next."""
        return self.stride * self.m

    @property
    def a(self) -> int:
        """Input tile size = transform-domain points per axis."""
        return self.step + 3 - self.stride

    @property
    def th(self) -> int:
        return -(-self.oh // self.m)

    @property
    def tw(self) -> int:
        return -(-self.ow // self.m)

    @property
    def tiles(self) -> int:
        return self.n * self.th * self.tw


WHOLE_VECTOR_STORES = True
"""One sample's V is stored in whole vectors (see `v_channel`)."""


def whole_vector_stores(spec: WinogradSpec) -> bool:
    """Whether the input transform stores whole vectors: the lanes past a tile row land on
    the next tile row's first tiles, which the same thread writes afterwards (threads take
    whole channels), or, after a channel's last row, in its slack (`v_channel`). Masked
    stores (vmaskmovps, two per 16 lanes on AVX2) are slow on AMD hosts, and every tile row
    narrower than a vector (56x56 and 28x28 outputs: 14 and 7 tiles) took one per point.
    With several samples a channel's rows are not consecutive: masked stores there."""
    return WHOLE_VECTOR_STORES and spec.n == 1


def v_channel(spec: WinogradSpec) -> int:
    """Elements from one channel's tiles in V to the next's: the tiles, plus a vector of
    slack where whole vectors are stored."""
    return spec.tiles + (VW if whole_vector_stores(spec) else 0)


SPREAD_POINTS = True
"""The a*a transform-domain matrices of V and M are spaced apart by an odd number of cache
lines (see `point_stride`)."""


def point_stride(elements: int) -> int:
    """Elements from one transform-domain point's matrix to the next's: `elements` rounded up
    to a cache line, plus one line where that is an even number of lines. The transforms
    touch all a*a points per vector; at a multiple of 4 KiB apart (a 7x7 layer's V: 512
    channels x 32 tiles) they all map to one L1 set and alias: its input transform ran 7x
    slower per element than a 14x14 layer's."""
    if not SPREAD_POINTS:
        return elements
    lines = -(-elements // 16)
    return (lines + (lines % 2 == 0)) * 16


WEIGHT_CHUNK = 4096
"""(output, input) channel pairs transformed at a time: the f64 intermediates of a chunk stay
in L2 instead of streaming [a*a, O*C] f64 arrays through memory."""


def transform_weights(weights: np.ndarray, m: int = 2, stride: int = 1) -> np.ndarray:
    """[O, C, 3, 3] -> U [a*a, O, C] (xi-major), computed in float64.

    G g G^T as the two products by G, each row a few vector multiply-adds of f64 planes
    (one plane per weight tap) skipping G's zeros, chunk by chunk: 3-4x less CPU than one
    three-operand einsum (ResNet-50's sixteen 3x3 layers ~0.5 s), within an f32 ulp of it."""
    g = np.array(matrices(m, stride)[1], np.float64)
    a = g.shape[0]
    pairs = weights.shape[0] * weights.shape[1]
    taps = weights.reshape(pairs, 9)
    u = np.empty((a * a, pairs), np.float32)
    for start in range(0, pairs, WEIGHT_CHUNK):
        w = taps[start : start + WEIGHT_CHUNK].T.astype(np.float64)
        rows = [[_weighted_sum(g[x], (w[j], w[3 + j], w[6 + j])) for j in range(3)] for x in range(a)]
        for x in range(a):
            for y in range(a):
                u[x * a + y, start : start + WEIGHT_CHUNK] = _weighted_sum(g[y], rows[x])
    return u.reshape(-1, *weights.shape[:2])


def _weighted_sum(coefficients: np.ndarray, planes: tuple[np.ndarray, ...] | list[np.ndarray]) -> np.ndarray:
    """sum of coefficient * plane over the nonzero coefficients (a +-1 is an add/sub)."""
    out = None
    for coef, plane in zip(coefficients, planes):
        if coef == 0:
            continue
        term = plane if coef == 1 else -plane if coef == -1 else coef * plane
        out = term if out is None else out + term
    return out if out is not None else np.zeros_like(planes[0])


def _combine(kb: KernelBuilder, coefficients, values):  # type: ignore[no-untyped-def]
    """sum of coefficient * value over the nonzero coefficients (a +-1 is an add/sub)."""
    b = kb.b
    out = None
    for coef, value in zip(coefficients, values):
        if coef == 0:
            continue
        if out is None:
            out = value if coef == 1 else b.fneg(value) if coef == -1 else b.fmul(kb.vconst(float(coef)), value)
        elif coef == 1:
            out = b.fadd(out, value)
        elif coef == -1:
            out = b.fsub(out, value)
        else:
            out = kb.fma(kb.vconst(float(coef)), value, out)
    return out if out is not None else kb.vconst(0.0)


def _pick(kb: KernelBuilder, wide, lanes: list[int]):  # type: ignore[no-untyped-def]
    return kb.b.shuffle_vector(wide, ir.Constant(wide.type, ir.Undefined), ir.Constant(vec(len(lanes), I32), lanes))


PADDED_ROWS = True
"""The input transform reads each tile row's a input rows from zero-padded stack copies with
plain loads (or, where one vector holds a tile row's tiles, with loads of constant masks),
instead of m + 1 masked 16-lane loads per row and vector of tiles (each with its 16-lane i64
bounds mask)."""
ROW_FLOATS_MAX = 2048
"""Longest padded row (floats) kept on the stack; wider inputs keep the masked loads."""


def _row_floats(spec: WinogradSpec) -> int:
    """Floats of a padded row: the vectors that hold the left pad and the input row, and every
    lane the last vector of tiles reads (step + 1 vectors from step tx0)."""
    vectors = -(-spec.tw // VW)
    return max(_row_vectors(spec) * VW, spec.step * (vectors - 1) * VW + (spec.step + 1) * VW)


def _row_vectors(spec: WinogradSpec) -> int:
    """Vectors of a padded row that hold input columns (the left pad and the row)."""
    return -(-(spec.pad[1] + spec.w) // VW)


def _stack_rows(kb: KernelBuilder, spec: WinogradSpec) -> list:  # type: ignore[type-arg]
    """a zeroed stack rows for the tile row's input rows, and one more that stays zero (the
    rows above and below the input)."""
    b = kb.b
    length = _row_floats(spec)
    with b.goto_block(kb.fn.entry_basic_block):
        rows = [b.bitcast(b.alloca(ir.ArrayType(ir.FloatType(), length)), ir.PointerType(ir.FloatType())) for _ in range(spec.a + 1)]
    zero = kb.vconst(0.0)
    for row in rows:
        with kb.loop(0, length - VW + 1, VW, name="zero") as i:
            kb.vstore(zero, kb.at(row, i))
        if length % VW:
            kb.vstore(zero, kb.at(row, length - VW))
    return rows


def _padded_rows(kb: KernelBuilder, spec: WinogradSpec, plane, ty, stack: list) -> list:  # type: ignore[no-untyped-def, type-arg]
    """The tile row's a input rows, each copied to its stack row at the left pad (the lanes
    past the row's end stay zero), or the zero row where it lies outside the input."""
    b = kb.b
    rows = []
    for i in range(spec.a):
        iy = b.sub(b.add(b.mul(ty, i64(spec.step)), i64(i)), i64(spec.pad[0]))
        inside = b.icmp_unsigned("<", iy, i64(spec.h))
        with kb.if_(inside):
            src = kb.at(plane, b.mul(iy, i64(spec.w)))
            for q in range(_row_vectors(spec)):
                # stored at multiples of a vector, where the loads below read them (a load
                # that straddles two stores is not forwarded from them: a 14x14 layer ran
                # 2.3x slower with the row stored at the pad's offset)
                first = q * VW - spec.pad[1]
                lanes = [0 <= first + lane < spec.w for lane in range(VW)]
                mask = None if all(lanes) else vector_constant(vec(VW, I1), lanes)
                kb.vstore(kb.vload(b.gep(src, [i64(first)]), mask=mask), kb.at(stack[i], i64(q * VW)))
        rows.append(b.select(inside, stack[i], stack[spec.a]))
    return rows


def _single_vector_parts(kb: KernelBuilder, spec: WinogradSpec, plane, ty, i) -> list:  # type: ignore[no-untyped-def, type-arg]
    """Input row i of the tile row where one vector holds all its tiles (tx0 = 0): the step + 1
    vectors from column -pad as loads with constant masks, zeros past the row (no load), all
    zeros where the row lies outside the input. A stack copy cost more than it saved here (a
    14x14 layer 1.29x the masked loads' time)."""
    b = kb.b
    iy = b.sub(kb.add(b.mul(ty, i64(spec.step)), i), i64(spec.pad[0]))
    inside = b.icmp_unsigned("<", iy, i64(spec.h))
    row = kb.at(plane, b.mul(b.select(inside, iy, i64(0)), i64(spec.w)))
    parts = []
    for part in range(spec.step + 1):
        first = part * VW - spec.pad[1]
        lanes = [0 <= first + lane < spec.w for lane in range(VW)]
        if not any(lanes):
            parts.append(kb.vconst(0.0))
            continue
        mask = None if all(lanes) else vector_constant(vec(VW, I1), lanes)
        parts.append(b.select(inside, kb.vload(b.gep(row, [i64(first)]), mask=mask), kb.vconst(0.0)))
    return parts


DEINTERLEAVE = False
"""Stride 2: the input row's vectors split into even and odd columns first, and the tiles'
columns picked from those (step m from m + 1 vectors' worth of lanes, as for stride 1)
instead of step 2m from 2m + 1 vectors (F(4x4): 144 lanes). Measured not to pay at run time
(session 13, one layer's phases each repeated hot, min CPU time, 3 alternations): ResNet-50's
56 3x3 128 s2 input transform (F(4x4)) 0.222 -> 0.233 ms, its 28 3x3 256 s2 (F(2x2)) 0.090 ->
0.098-0.105; it compiles the F(4x4) layer's kernels ~0.3 s faster (wall 0.74-1.01 -> 0.66 s)."""


def _tile_columns(kb: KernelBuilder, spec: WinogradSpec, parts: list) -> list:  # type: ignore[type-arg]
    """Column j of every tile of a vector of tiles (lane l: column step l + j of `parts`, the
    row's step + 1 vectors from the first tile's first column), j < a."""
    if spec.stride == 1 or not DEINTERLEAVE:
        wide = kb.concat(parts)
        return [_pick(kb, wide, [spec.step * lane + j for lane in range(VW)]) for j in range(spec.a)]
    m, b = spec.m, kb.b
    if len(parts) % 2:
        parts = [*parts, kb.vconst(0.0)]  # lanes no tile reads
    pairs = [kb.concat([parts[q], parts[q + 1]]) for q in range(0, len(parts), 2)]
    even = kb.concat([_pick(kb, pair, list(range(0, 2 * VW, 2))) for pair in pairs])
    odd = kb.concat([_pick(kb, pair, list(range(1, 2 * VW, 2))) for pair in pairs])
    return [_pick(kb, even if j % 2 == 0 else odd, [m * lane + j // 2 for lane in range(VW)]) for j in range(spec.a)]


ROLLED_MIN_POINTS = 81
"""Transforms of at least this many transform-domain points (a*a: stride 2's F(4x4) has 81)
are emitted as two loops of 1-D transforms through a stack block (`_input_tiles_rolled`,
`_output_tiles_rolled`) instead of one unrolled 2-D transform: the generated code shrinks
about a-fold, and with it LLVM's time (which follows the IR's size)."""


ROLLED_OUTPUT = False
"""The output transform rolled too where the input one is (`_output_tiles_rolled`)."""
BLOCK_ALIGN = 64
"""Bytes to which the rolled transforms' stack blocks are aligned."""


def rolled(spec: WinogradSpec) -> bool:
    """Whether `spec`'s transforms are emitted as loops over rows and columns (`ROLLED_MIN_POINTS`)."""
    return spec.a * spec.a >= ROLLED_MIN_POINTS


def _block(kb: KernelBuilder, floats: int):  # type: ignore[no-untyped-def]
    """A stack block of `floats` floats (in the entry block: allocated once per call)."""
    b = kb.b
    with b.goto_block(kb.fn.entry_basic_block):
        block = b.alloca(ir.ArrayType(ir.FloatType(), floats))
        block.align = BLOCK_ALIGN  # vectors that straddle cache lines cost two accesses each
        return b.bitcast(block, ir.PointerType(ir.FloatType()))


def _rolled_stack(kb: KernelBuilder, spec: WinogradSpec):  # type: ignore[no-untyped-def]
    """`_stack_rows` as one block of a + 1 rows of `_row_floats` (row a stays zero), zeroed
    once: rows are chosen by a run-time index."""
    length = (spec.a + 1) * _row_floats(spec)
    rows = _block(kb, length)
    zero = kb.vconst(0.0)
    with kb.loop(0, length - VW + 1, VW, name="zero") as i:
        kb.vstore(zero, kb.at(rows, i))
    if length % VW:
        kb.vstore(zero, kb.at(rows, length - VW))
    return rows


def _rolled_copy(kb: KernelBuilder, spec: WinogradSpec, plane, ty, stack) -> None:  # type: ignore[no-untyped-def]
    """`_padded_rows`' copies as a loop over the tile row's a input rows."""
    b = kb.b
    with kb.loop(0, spec.a, name="copy") as i:
        iy = b.sub(b.add(b.mul(ty, i64(spec.step)), i), i64(spec.pad[0]))
        with kb.if_(b.icmp_unsigned("<", iy, i64(spec.h))):
            src = kb.at(plane, b.mul(iy, i64(spec.w)))
            dst = kb.at(stack, b.mul(i, i64(_row_floats(spec))))
            for q in range(_row_vectors(spec)):
                first = q * VW - spec.pad[1]
                lanes = [0 <= first + lane < spec.w for lane in range(VW)]
                mask = None if all(lanes) else vector_constant(vec(VW, I1), lanes)
                kb.vstore(kb.vload(b.gep(src, [i64(first)]), mask=mask), kb.at(dst, i64(q * VW)))


def _input_tiles_rolled(kb: KernelBuilder, spec: WinogradSpec, plane, ty, tx0, stack, single: bool, block, store) -> None:  # type: ignore[no-untyped-def]
    """One vector of tiles' input transform as two loops: over the tile's a input rows i (the
    row's a columns picked, then multiplied by B: E[i] = d[i] B, a vectors into `block`), then
    over the a columns k of E (B^T E[:, k], a vectors to `store(point, value)`). The same
    products as the unrolled B^T d B, summed rows-last instead of rows-first (a few ulps)."""
    m, a, b = spec.step, spec.a, kb.b
    bt = matrices(spec.m, spec.stride)[0]
    with kb.loop(0, a, name="trow") as i:
        if single:
            parts = _single_vector_parts(kb, spec, plane, ty, i)
        else:
            iy = b.sub(b.add(b.mul(ty, i64(m)), i), i64(spec.pad[0]))
            inside = b.icmp_unsigned("<", iy, i64(spec.h))
            if stack is not None:  # plain loads from the zero-padded copy of the row (row a: zeros)
                row = kb.at(stack, b.mul(b.select(inside, i, i64(a)), i64(_row_floats(spec))))
                parts = [kb.vload(kb.at(row, b.add(b.mul(tx0, i64(m)), i64(part * VW)))) for part in range(m + 1)]
            else:
                row = kb.at(plane, b.mul(b.select(inside, iy, i64(0)), i64(spec.w)))
                start = b.sub(b.mul(tx0, i64(m)), i64(spec.pad[1]))
                parts = []
                for part in range(m + 1):
                    # the row's bounds as a select, not in the load's mask: a mask and(lanes,
                    # splat(inside)) whose lanes fold to all-false was emitted as a plain load
                    # (LLVM's X86 backend: a 7x7 plane's next row read into the pad)
                    at = b.add(start, i64(part * VW))
                    parts.append(b.select(inside, kb.vload(b.gep(row, [at]), mask=kb.inside(at, spec.w)), kb.vconst(0.0)))
        d = _tile_columns(kb, spec, parts)
        out = kb.at(block, b.mul(i, i64(a * VW)))
        for k in range(a):
            kb.vstore(_combine(kb, bt[k], d), kb.at(out, i64(k * VW)))
    with kb.loop(0, a, name="tcol") as k:
        column = kb.at(block, b.mul(k, i64(VW)))
        e = [kb.vload(kb.at(column, i64(i * a * VW))) for i in range(a)]
        for p in range(a):
            store(b.add(i64(p * a), k), _combine(kb, bt[p], e))


def _input_tiles_unrolled(kb: KernelBuilder, spec: WinogradSpec, plane, ty, tx0, padded, single: bool, store) -> None:  # type: ignore[no-untyped-def]
    """One vector of tiles' input transform B^T d B, unrolled: each of the a*a points to
    `store(point, value)`."""
    m, a, b = spec.step, spec.a, kb.b
    bt = matrices(spec.m, spec.stride)[0]
    start = b.sub(b.mul(tx0, i64(m)), i64(spec.pad[1]))
    d = []
    for i in range(a):
        if padded is not None or single:
            if single:
                parts = _single_vector_parts(kb, spec, plane, ty, i)
            else:  # plain loads from the zero-padded copy of the row
                parts = [kb.vload(kb.at(padded[i], b.add(b.mul(tx0, i64(m)), i64(part * VW)))) for part in range(m + 1)]
            d.append(_tile_columns(kb, spec, parts))
            continue
        iy = b.sub(b.add(b.mul(ty, i64(m)), i64(i)), i64(spec.pad[0]))
        inside = b.icmp_unsigned("<", iy, i64(spec.h))
        row = kb.at(plane, b.mul(b.select(inside, iy, i64(0)), i64(spec.w)))
        parts = []
        for part in range(m + 1):
            at = b.add(start, i64(part * VW))
            parts.append(kb.vload(b.gep(row, [at]), mask=b.and_(kb.inside(at, spec.w), kb.splat(inside))))
        d.append(_tile_columns(kb, spec, parts))
    t = [[_combine(kb, bt[r_], [d[i][j] for i in range(a)]) for j in range(a)] for r_ in range(a)]
    for i in range(a):
        for j in range(a):
            store(i * a + j, _combine(kb, bt[j], t[i]))


def input_transform_kernel(module: ir.Module, spec: WinogradSpec, name: str) -> None:
    """args: X, V; threads split the (n, c, tile row) rows."""
    a = spec.a
    kb = KernelBuilder(module, name)
    if rolled(spec):
        module.unroll = False  # type: ignore[attr-defined]  # its loops are the point
    x, v = kb.slot(0), kb.slot(1)
    b = kb.b
    rows = spec.n * spec.c * spec.th
    whole = whole_vector_stores(spec)
    channel = v_channel(spec)
    single = PADDED_ROWS and spec.tw <= VW
    padded_rows = PADDED_ROWS and not single and _row_floats(spec) <= ROW_FLOATS_MAX
    if rolled(spec):
        stack = _rolled_stack(kb, spec) if padded_rows else None
        block = _block(kb, a * a * VW)
    else:
        stack = _stack_rows(kb, spec) if padded_rows else None
    r0, r1 = kb.partition(rows, align=spec.th if whole else 1)
    with kb.loop(r0, r1, name="row") as r:
        ty = b.urem(r, i64(spec.th))
        nc = b.udiv(r, i64(spec.th))
        n, c = b.udiv(nc, i64(spec.c)), b.urem(nc, i64(spec.c))
        plane = kb.at(x, b.mul(nc, i64(spec.h * spec.w)))
        tile_row = b.mul(b.add(b.mul(n, i64(spec.th)), ty), i64(spec.tw))
        base = b.add(b.mul(c, i64(channel)), tile_row)
        point = point_stride(spec.c * channel)
        if rolled(spec) and stack is not None:
            _rolled_copy(kb, spec, plane, ty, stack)
        padded = _padded_rows(kb, spec, plane, ty, stack) if stack is not None and not rolled(spec) else None
        with kb.loop(0, spec.tw, VW, name="tx") as tx0:
            mask = None if whole else kb.mask(b.sub(i64(spec.tw), tx0))
            tiles = kb.at(v, b.add(base, tx0))
            if rolled(spec):
                store = lambda p, value: kb.vstore(value, kb.at(tiles, b.mul(p, i64(point))), mask)  # noqa: E731
                _input_tiles_rolled(kb, spec, plane, ty, tx0, stack, single, block, store)
            else:
                store = lambda p, value: kb.vstore(value, kb.at(tiles, i64(p * point)), mask)  # noqa: E731
                _input_tiles_unrolled(kb, spec, plane, ty, tx0, padded, single, store)
    kb.finish()


def _output_tiles_rolled(kb: KernelBuilder, spec: WinogradSpec, tiles, point: int, block, row) -> None:  # type: ignore[no-untyped-def]
    """One vector of tiles' output transform as two loops: over the a columns j of M (A^T
    M[:, j], m vectors into `block`), then over the m output rows i (`row(i, S[i])`, which
    multiplies by A and stores). The same sums in the same order as the unrolled form."""
    m, a, b = spec.m, spec.a, kb.b
    at_ = matrices(m, spec.stride)[2]
    with kb.loop(0, a, name="mcol") as j:
        column = kb.at(tiles, b.mul(j, i64(point)))
        mv = [kb.vload(kb.at(column, i64(r_ * a * point))) for r_ in range(a)]
        out = kb.at(block, b.mul(j, i64(VW)))
        for i in range(m):
            kb.vstore(_combine(kb, at_[i], mv), kb.at(out, i64(i * a * VW)))
    with kb.loop(0, m, name="orow") as i:
        s_i = kb.at(block, b.mul(i, i64(a * VW)))
        row(i, [kb.vload(kb.at(s_i, i64(j * VW))) for j in range(a)])


def output_transform_kernel(module: ir.Module, spec: WinogradSpec, name: str) -> None:
    """args: M, Y, [bias], [residual]; threads split the (n, o, tile row) rows."""
    m, a = spec.m, spec.a
    at_ = matrices(m, spec.stride)[2]
    kb = KernelBuilder(module, name)
    mm, y = kb.slot(0), kb.slot(1)
    extra = 2
    bias = kb.slot(extra) if spec.bias else None
    extra += spec.bias
    res = kb.slot(extra) if spec.epilogue.residual else None
    b = kb.b
    point = point_stride(spec.o * spec.tiles)
    rolled_out = rolled(spec) and ROLLED_OUTPUT
    if rolled_out:
        module.unroll = False  # type: ignore[attr-defined]  # its loops are the point
        block = _block(kb, m * a * VW)
    rows = spec.n * spec.o * spec.th
    r0, r1 = kb.partition(rows)
    # output column m l + j of a vector of tiles is lane l of y[i][j]: interleave back
    interleave = [[(col % m) * VW + col // m for col in range(q * VW, (q + 1) * VW)] for q in range(m)]
    with kb.loop(r0, r1, name="row") as r:
        ty = b.urem(r, i64(spec.th))
        no = b.udiv(r, i64(spec.th))
        n, o = b.udiv(no, i64(spec.o)), b.urem(no, i64(spec.o))
        out_plane = b.mul(no, i64(spec.oh * spec.ow))
        tile_row = b.mul(b.add(b.mul(n, i64(spec.th)), ty), i64(spec.tw))
        bias_v = kb.splat(b.load(kb.at(bias, o))) if bias is not None else None
        with kb.loop(0, spec.tw, VW, name="tx") as tx0:
            base = b.add(b.mul(o, i64(spec.tiles)), b.add(tile_row, tx0))

            def row(i, s_i):  # type: ignore[no-untyped-def]
                """Output row i of the vector of tiles from its a values A^T M[i]."""
                oy = b.add(b.mul(ty, i64(m)), i)
                with kb.if_(b.icmp_signed("<", oy, i64(spec.oh))):
                    wide = kb.concat([_combine(kb, at_[j], s_i) for j in range(m)])
                    at = b.add(out_plane, b.add(b.mul(oy, i64(spec.ow)), b.mul(tx0, i64(m))))
                    for q in range(m):
                        value = _pick(kb, wide, interleave[q])
                        mask = kb.mask(b.sub(i64(spec.ow), b.add(b.mul(tx0, i64(m)), i64(q * VW))))
                        ptr = b.add(at, i64(q * VW))
                        if bias_v is not None:
                            value = b.fadd(value, bias_v)
                        residual = kb.vload(kb.at(res, ptr), mask=mask) if res is not None else None
                        value = apply_epilogue(kb, spec.epilogue, value, residual)
                        kb.vstore(value, kb.at(y, ptr), mask)

            if rolled_out:
                _output_tiles_rolled(kb, spec, kb.at(mm, base), point, block, row)
            else:
                mv = [[kb.vload(kb.at(mm, b.add(base, i64((i * a + j) * point)))) for j in range(a)] for i in range(a)]
                s = [[_combine(kb, at_[i], [mv[r_][j] for r_ in range(a)]) for j in range(a)] for i in range(m)]
                for i in range(m):
                    row(i64(i), s[i])
    kb.finish()
