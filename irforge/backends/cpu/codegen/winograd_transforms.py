"""The Winograd transforms around the transform-domain GEMMs (see `codegen.winograd`):

- `input_transform_kernel`: X [N, C, H, W] -> V [a*a][C][T], 16 tiles of a tile row per
  vector (or of several tile rows, `rows_per_vector`): the a input rows of the tiles are read
  as m + 1 vectors (loads of constant masks, or plain loads of zero-padded stack rows), the
  tiles' columns m l + j picked from them by lane shuffles (4x4 transposes for F(4x4) at
  stride 1), then B^T . B as additions and constant FMAs;
- `output_transform_kernel`: M [a*a][O][T] -> Y [N, O, OH, OW], with the bias, a residual
  and ReLU/Clamp applied to the output vectors (the m columns of each tile interleaved back).
"""

from __future__ import annotations

from llvmlite import ir

from irforge.backends.cpu.codegen.epilogue import apply_epilogue
from irforge.backends.cpu.codegen.irutil import I1, I32, VW, KernelBuilder, i64, native_vector_bytes, vec, vector_constant
from irforge.backends.cpu.codegen.winograd import WinogradSpec, matrices, point_stride, v_channel, whole_vector_stores


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


def _single_vector_parts(kb: KernelBuilder, spec: WinogradSpec, plane, ty, i, count: int | None = None) -> list:  # type: ignore[no-untyped-def, type-arg]
    """Input row i of the tile row where one vector holds all its tiles (tx0 = 0): `count`
    (default step + 1) vectors from column -pad as loads with constant masks, zeros past the
    row (no load), all zeros where the row lies outside the input. A stack copy cost more than
    it saved here (a 14x14 layer 1.29x the masked loads' time)."""
    b = kb.b
    iy = b.sub(kb.add(b.mul(ty, i64(spec.step)), i), i64(spec.pad[0]))  # i: an int, or a loop's index
    inside = b.icmp_unsigned("<", iy, i64(spec.h))
    row = kb.at(plane, b.mul(b.select(inside, iy, i64(0)), i64(spec.w)))
    parts = []
    for part in range(spec.step + 1 if count is None else count):
        first = part * VW - spec.pad[1]
        lanes = [0 <= first + lane < spec.w for lane in range(VW)]
        if not any(lanes):
            parts.append(kb.vconst(0.0))
            continue
        mask = None if all(lanes) else vector_constant(vec(VW, I1), lanes)
        parts.append(b.select(inside, kb.vload(b.gep(row, [i64(first)]), mask=mask), kb.vconst(0.0)))
    return parts


DEINTERLEAVE = False
"""Stride 2 (F(4x4); F(2x2) takes `TRANSPOSE_PICKS`): the input row's vectors split into even
and odd columns first, and the tiles' columns picked from those (step m from m + 1 vectors' worth of lanes, as for stride 1)
instead of step 2m from 2m + 1 vectors (F(4x4): 144 lanes). Measured not to pay at run time
(session 13, one layer's phases each repeated hot, min CPU time, 3 alternations): ResNet-50's
56 3x3 128 s2 input transform (F(4x4)) 0.222 -> 0.233 ms, its 28 3x3 256 s2 (F(2x2)) 0.090 ->
0.098-0.105; it compiles the F(4x4) layer's kernels ~0.3 s faster (wall 0.74-1.01 -> 0.66 s)."""


TRANSPOSE_PICKS = True
"""Tiles 4 input columns apart (`transposes`): the six columns of 8 tiles are taken by
4x4 transposes of 128-bit quarters (vperm2f128, unpck*ps, unpck*pd: 17 shuffles per 8 tiles),
not by six general 16-lane picks (LLVM's vpermps and blends: ~8 shuffles per 8 lanes each; a
56x56 layer's input transform loop 1520 -> 976 instructions). ResNet-50 (`bench/cpu_knob_ab.py
resnet50 ...winograd:TRANSPOSE_PICKS --a False --b True --cpu-time --runs 21`, session 14):
its 56x56 input transforms 0.63-0.67x, 28x28 0.81-0.87x, 14x14 0.75-0.79x; stride-2 F(2x2)
(13:43, load 7.9) 28 -> 14 0.78x, 14 -> 7 0.91x."""

_LO, _HI = [0, 1, 2, 3, 8, 9, 10, 11], [4, 5, 6, 7, 12, 13, 14, 15]  # vperm2f128 0x20 / 0x31
_UNPACK_LO_PS, _UNPACK_HI_PS = [0, 8, 1, 9, 4, 12, 5, 13], [2, 10, 3, 11, 6, 14, 7, 15]
_UNPACK_LO_PD, _UNPACK_HI_PD = [0, 1, 8, 9, 4, 5, 12, 13], [2, 3, 10, 11, 6, 7, 14, 15]


def transposes(spec: WinogradSpec) -> bool:
    """Whether the input transform takes its columns by `TRANSPOSE_PICKS`: tiles 4 input columns
    apart (F(4x4) at stride 1, F(2x2) at stride 2: its 5 columns are the first 5), along one
    tile row or on groups of rows of 4 tiles (a row's tiles in whole quarters)."""
    if not TRANSPOSE_PICKS or VW != 16 or spec.step != 4:
        return False
    return rows_per_vector(spec) == 1 or spec.tw == 4


def _quad_columns(kb: KernelBuilder, groups: list) -> list:  # type: ignore[type-arg]
    """The 6 columns of 16 tiles of 4 floats each, as two groups (y0, y1, y2, y3, u, u2) of
    8-lane vectors: y0..y3 hold tiles 0-1, 2-3, 4-5, 6-7 of the group end to end; u holds the
    tile after tile 3 (columns 4 and 5 of tile 3 are its columns 0 and 1) in its first 4 lanes,
    u2 the tile after tile 7."""
    b = kb.b

    def mix(x, y, lanes):  # type: ignore[no-untyped-def]
        return b.shuffle_vector(x, y, ir.Constant(vec(8, I32), lanes))

    halves = []
    for y0, y1, y2, y3, u, u2 in groups:
        s0, s1, s2, s3 = mix(y0, y2, _LO), mix(y0, y2, _HI), mix(y1, y3, _LO), mix(y1, y3, _HI)  # [t k | t k+4]
        s4 = mix(u, u2, _LO)  # the tiles after tiles 3 and 7
        t0, t1, t2, t3 = mix(s0, s1, _UNPACK_LO_PS), mix(s0, s1, _UNPACK_HI_PS), mix(s2, s3, _UNPACK_LO_PS), mix(s2, s3, _UNPACK_HI_PS)
        t4, t5 = mix(s1, s2, _UNPACK_LO_PS), mix(s3, s4, _UNPACK_LO_PS)
        halves.append([mix(t0, t2, _UNPACK_LO_PD), mix(t0, t2, _UNPACK_HI_PD), mix(t1, t3, _UNPACK_LO_PD),
                       mix(t1, t3, _UNPACK_HI_PD), mix(t4, t5, _UNPACK_LO_PD), mix(t4, t5, _UNPACK_HI_PD)])
    return [kb.concat([group[j] for group in halves]) for j in range(6)]


OCTET_PICKS = True
"""Tiles 8 input columns apart (F(4x4) at stride 2, along one tile row: `octets`): the nine
columns of 8 tiles by an 8x8 transpose (unpck*ps, unpck*pd, vperm2f128: 24 shuffles; the ninth,
the next tile's first, 7 more) instead of nine general picks from 2m + 1 = 9 vectors. ResNet-50's
56 -> 28 input transform 0.264 -> 0.189 ms (0.72x; `cpu_knob_ab.py ...:OCTET_PICKS`, 13:48,
load 9.3); combining rows first there stays slower (1.17x)."""


def octets(spec: WinogradSpec) -> bool:
    """Whether the input transform takes its columns by `OCTET_PICKS`."""
    return OCTET_PICKS and VW == 16 and spec.step == 8 and rows_per_vector(spec) == 1


def _octet_columns(kb: KernelBuilder, tiles: list) -> list:  # type: ignore[type-arg]
    """Columns 0-8 of 8 tiles of 8 floats (`tiles`: 9 vectors of 8 lanes, tile k's columns in
    vector k, the 9th the next tile, whose column 0 is tile 7's column 8): 9 vectors of 8 lanes."""
    b = kb.b

    def mix(x, y, lanes):  # type: ignore[no-untyped-def]
        return b.shuffle_vector(x, y, ir.Constant(vec(8, I32), lanes))

    r = tiles
    t = [mix(r[k], r[k + 1], lanes) for k in range(0, 8, 2) for lanes in (_UNPACK_LO_PS, _UNPACK_HI_PS)]
    # u[0..3]: columns (0|4), (1|5), (2|6), (3|7) of tiles 0-3; u[4..7]: the same of tiles 4-7
    u = [mix(t[q + h], t[q + h + 2], lanes) for q in (0, 4) for h in (0, 1) for lanes in (_UNPACK_LO_PD, _UNPACK_HI_PD)]
    columns = [mix(u[j], u[4 + j], _LO) for j in range(4)] + [mix(u[j], u[4 + j], _HI) for j in range(4)]
    v = [mix(r[k], r[k + 1], _UNPACK_LO_PS) for k in (1, 3, 5, 7)]
    w = [mix(v[0], v[1], _UNPACK_LO_PD), mix(v[2], v[3], _UNPACK_LO_PD)]
    return columns + [mix(w[0], w[1], _LO)]


def _eighths(kb: KernelBuilder, vectors: list) -> list:  # type: ignore[type-arg]
    """The 8-lane halves of 16-lane vectors, in order."""
    return [kb._lanes(v, start, 8) for v in vectors for start in (0, 8)]


def _tile_columns(kb: KernelBuilder, spec: WinogradSpec, parts: list) -> list:  # type: ignore[type-arg]
    """Column j of every tile of a vector of tiles (lane l: column step l + j of `parts`, the
    row's step + 1 vectors from the first tile's first column), j < a."""
    if octets(spec):
        y = _eighths(kb, parts[:9])  # tiles 0-15 and the 16th
        groups = [_octet_columns(kb, y[0:9]), _octet_columns(kb, y[8:17])]
        return [kb.concat([group[j] for group in groups]) for j in range(spec.a)]
    if transposes(spec):
        y = _eighths(kb, parts[:5])  # tiles 0-15 and the 16th's first columns
        return _quad_columns(kb, [(y[0], y[1], y[2], y[3], y[2], y[4]), (y[4], y[5], y[6], y[7], y[6], y[8])])[:spec.a]
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


ROW_GROUPS = True
"""Where a tile row fills at most half a host register (AVX2: 14x14 and 13x13 outputs by F(4x4),
7x7 by F(2x2)), one vector of the transforms holds the tiles of `rows_per_vector` consecutive
tile rows (tile t = (n th + ty) tw + tx is lane t - t0, as in V and M) instead of one tile
row's tiles and idle lanes (a 14x14 layer's F(4x4): 4 of 16). A wider tile row already fills
most of a register, and LLVM folds the work of the lanes that read only the zero vectors past
the row: grouping 28x28's 7 tiles two rows to a vector ran its input transform 1.6-2.5x slower
(session 14, cpu2: the picks then draw from both rows' vectors). ResNet-50 (`bench/cpu_knob_ab.py
resnet50 ...winograd:ROW_GROUPS --a False --b True --cpu-time --runs 21`): its 14x14 and 7x7
input transforms 0.69-0.79x, the 14x14 output transforms 0.61-0.64x, the 7x7 ones 0.89-1.07x;
all transforms 0.886x (-0.3 ms)."""


def rows_per_vector(spec: WinogradSpec) -> int:
    """Tile rows of one vector of tiles in the transforms: VW // tw where a tile row fills at
    most half a host register (`ROW_GROUPS`), else 1 (vectors of tiles along one tile row)."""
    if not ROW_GROUPS or not PADDED_ROWS or 2 * spec.tw > min(VW, native_vector_bytes() // 4):
        return 1
    return VW // spec.tw


def store_end(spec: WinogradSpec) -> int:
    """One past the last lane of a sample's channel the input transform's whole-vector stores
    write (tile index from the channel's first): a vector from the last group's first tile
    (`rows_per_vector` > 1), else from the last tile row's last vector of tiles (the row and
    rolled forms)."""
    group = rows_per_vector(spec)
    if group > 1:
        return (-(-spec.th // group) - 1) * group * spec.tw + VW
    return (spec.th - 1) * spec.tw + (spec.tw - 1) // VW * VW + VW


def _group_parts(kb: KernelBuilder, spec: WinogradSpec, plane, ty0, i: int) -> list:  # type: ignore[no-untyped-def, type-arg]
    """Input row i of the `rows_per_vector` tile rows from ty0: each tile row's vectors from
    column -pad, end to end (see `_group_columns`)."""
    count = -(-(spec.step * (spec.tw - 1) + spec.a) // VW)  # vectors from column -pad a tile row reads
    parts = []
    for k in range(rows_per_vector(spec)):
        parts += _single_vector_parts(kb, spec, plane, kb.b.add(ty0, i64(k)), i, count)
    return parts


def _group_columns(kb: KernelBuilder, spec: WinogradSpec, parts: list) -> list:  # type: ignore[type-arg]
    """Column j (< a) of the tiles of a group of tile rows from `_group_parts`: lane k tw + tx
    is tile (ty0 + k, tx); the lanes past them repeat lane 0 (their tiles lie in the next group,
    written after these)."""
    group, tw, count = rows_per_vector(spec), spec.tw, len(parts) // rows_per_vector(spec)
    if transposes(spec):  # 4 rows of 4 tiles, each row's 18 columns in 2 vectors
        rows = [_eighths(kb, parts[k * count:k * count + 2]) for k in range(group)]
        return _quad_columns(kb, [(rows[k][0], rows[k][1], rows[k + 1][0], rows[k + 1][1], rows[k][2], rows[k + 1][2]) for k in (0, 2)])[:spec.a]
    wide = kb.concat(parts)
    starts = [(lane // tw) * count * VW + spec.step * (lane % tw) if lane < group * tw else 0 for lane in range(VW)]
    return [_pick(kb, wide, [start + j for start in starts]) for j in range(spec.a)]


VERTICAL_FIRST = True
"""Stride 1 and F(2x2) at stride 2 (`vertical_first`): the input transform applies B^T across the a input rows to the
rows' loaded vectors, then picks the tiles' columns from the a results, instead of picking
the a columns of every input row first and combining the a x a picked vectors (the same
operations per lane: bit-equal). Same-process A/Bs on ResNet-50 (session 14, cpu2, min CPU
time of each phase), before `TRANSPOSE_PICKS`: its 56x56 F(4x4) input transforms (14 tiles a
row) 0.90-0.93x, the 7x7 F(2x2) ones (4 tile rows a vector) 0.69-0.75x; slower where a row's
tiles fill at most one host register (28x28 F(4x4): 1.01-1.07x), on four tile rows of F(4x4)
(14x14: 1.05-1.09x) and at stride 2 (1.07-1.30x). With the transposes' picks the 28x28 and
14x14 ones take it too (0.67-0.80x and 0.82-0.89x against picking first), and with the rows
emitted one at a time (`STREAM_ROWS`) the stride-2 F(2x2) ones (28 -> 14: 0.78x, 14 -> 7:
0.67x); the stride-2 F(4x4) one (56 -> 28) 1.25x: it picks first."""


def vertical_first(spec: WinogradSpec) -> bool:
    """Whether the input transform combines rows before picking columns (`VERTICAL_FIRST`)."""
    if not VERTICAL_FIRST:
        return False
    if spec.stride != 1:
        return spec.m == 2
    if transposes(spec):
        return True
    return spec.m == 2 if rows_per_vector(spec) > 1 else spec.tw > native_vector_bytes() // 4


STREAM_ROWS = True
"""Where the input transform combines rows first (`vertical_first`), it is emitted one row r of
B^T d at a time (its input rows loaded again for it, its a points combined and stored before
the next r) instead of loading every input row once and combining all a x a points together:
the whole vector of tiles' a x a values (72 AVX2 registers for F(4x4)) spilled to the stack
and back. (Picking first, each row's columns are picked once: picks again per r cost more.)
ResNet-50 (`cpu_knob_ab.py ...winograd_transforms:STREAM_ROWS --a False --b True --cpu-time
--runs 21`, session 14, load 9.4): its 56x56 input transforms 0.64-0.86x, 28 -> 14 stride-2
0.86x, the others 0.94-1.12x (noise); ~400 KB more IR over its 14 transform kernels."""


def _transform_and_store(kb: KernelBuilder, spec: WinogradSpec, load, columns, v, base, mask) -> None:  # type: ignore[no-untyped-def]
    """B^T d B of a vector of tiles, stored at tile `base` of each point's matrix in V:
    `load(i)` emits the loads of input row i's vectors, `columns(vectors)` picks a row's a tile
    columns from them (t = B^T d: `vertical_first` combines the rows' vectors, then picks)."""
    a, bt = spec.a, matrices(spec.m, spec.stride)[0]
    point = point_stride(spec.c * v_channel(spec))
    stream = STREAM_ROWS and vertical_first(spec)  # picked columns are taken once per row
    rows = None if stream else [load(i) for i in range(a)]
    picked = None if vertical_first(spec) else [columns(row) for row in rows]
    for r in range(a):
        if vertical_first(spec):
            parts = {i: load(i) if stream else rows[i] for i in range(a) if bt[r][i] != 0}
            mixed = [_combine(kb, [bt[r][i] for i in parts], [row[p] for row in parts.values()]) for p in range(len(next(iter(parts.values()))))]
            t = columns(mixed)
        else:
            t = [_combine(kb, bt[r], [picked[i][j] for i in range(a)]) for j in range(a)]
        for j in range(a):
            kb.vstore(_combine(kb, bt[j], t), kb.at(v, kb.b.add(base, i64((r * a + j) * point))), mask)


def _grouped_input_transform(kb: KernelBuilder, spec: WinogradSpec, x, v) -> None:  # type: ignore[no-untyped-def]
    """The input transform over groups of `rows_per_vector` tile rows (one vector of tiles)."""
    b, group = kb.b, rows_per_vector(spec)
    groups = -(-spec.th // group)
    whole = whole_vector_stores(spec)
    r0, r1 = kb.partition(spec.n * spec.c * groups, align=groups if whole else 1)
    with kb.loop(r0, r1, name="group") as r:
        ty0 = b.mul(b.urem(r, i64(groups)), i64(group))
        nc = b.udiv(r, i64(groups))
        n, c = b.udiv(nc, i64(spec.c)), b.urem(nc, i64(spec.c))
        plane = kb.at(x, b.mul(nc, i64(spec.h * spec.w)))
        load = lambda i: _group_parts(kb, spec, plane, ty0, i)  # noqa: E731
        tiles = b.mul(kb.min(b.sub(i64(spec.th), ty0), group), i64(spec.tw))
        base = b.add(b.mul(c, i64(v_channel(spec))), b.mul(b.add(b.mul(n, i64(spec.th)), ty0), i64(spec.tw)))
        _transform_and_store(kb, spec, load, lambda vectors: _group_columns(kb, spec, vectors), v, base, None if whole else kb.mask(tiles))


ROLLED_MIN_POINTS = 81
"""Transforms of at least this many transform-domain points (a*a: stride 2's F(4x4) has 81)
are emitted as two loops of 1-D transforms through a stack block (`_input_tiles_rolled`,
`_output_tiles_rolled`) instead of one unrolled 2-D transform: the generated code shrinks
about a-fold, and with it LLVM's time (which follows the IR's size). The row loop picks the
columns by `OCTET_PICKS`. ResNet-50's 56 -> 28 input transform against `OCTET_PICKS` unrolled
(session 14, cput): 291 -> 38 KB of IR, its module's LLVM 0.15-0.25 -> 0.04-0.05 s CPU, its 14
transform modules 0.49-0.53 -> 0.39 s (`bench/cpu_transform_llvm.py`); run time 0.241 -> 0.252 ms
(1.044, `cpu_knob_ab.py resnet50 ...winograd_transforms:ROLLED_MIN_POINTS --a 10000 --b 81
--runs 21 --cpu-time --phases 411c`, load 7.3; the same phase read 0.318 ms in a later run)."""
ROLLED_OUTPUT = False
"""The output transform rolled too where the input one is (`_output_tiles_rolled`)."""
BLOCK_ALIGN = 64
"""Bytes to which the rolled transforms' stack blocks are aligned."""


def rolled(spec: WinogradSpec) -> bool:
    """Whether `spec`'s transforms are emitted as loops over rows and columns (`ROLLED_MIN_POINTS`;
    along one tile row only)."""
    return spec.a * spec.a >= ROLLED_MIN_POINTS and rows_per_vector(spec) == 1


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
    row's a columns picked (`_tile_columns`, by `OCTET_PICKS` where they apply), then
    multiplied by B: E[i] = d[i] B, a vectors into `block`), then over the a columns k of E
    (B^T E[:, k], a vectors to `store(point, value)`). The same products as the unrolled
    B^T d B, summed rows-last instead of rows-first (a few ulps)."""
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


def _rolled_input_transform(kb: KernelBuilder, spec: WinogradSpec, x, v) -> None:  # type: ignore[no-untyped-def]
    """The input transform along tile rows with `_input_tiles_rolled` for each vector of tiles."""
    b = kb.b
    single = PADDED_ROWS and spec.tw <= VW
    stack = _rolled_stack(kb, spec) if PADDED_ROWS and not single and _row_floats(spec) <= ROW_FLOATS_MAX else None
    block = _block(kb, spec.a * spec.a * VW)
    whole = whole_vector_stores(spec)
    channel = v_channel(spec)
    point = point_stride(spec.c * channel)
    r0, r1 = kb.partition(spec.n * spec.c * spec.th, align=spec.th if whole else 1)
    with kb.loop(r0, r1, name="row") as r:
        ty = b.urem(r, i64(spec.th))
        nc = b.udiv(r, i64(spec.th))
        n, c = b.udiv(nc, i64(spec.c)), b.urem(nc, i64(spec.c))
        plane = kb.at(x, b.mul(nc, i64(spec.h * spec.w)))
        base = b.add(b.mul(c, i64(channel)), b.mul(b.add(b.mul(n, i64(spec.th)), ty), i64(spec.tw)))
        if stack is not None:
            _rolled_copy(kb, spec, plane, ty, stack)
        with kb.loop(0, spec.tw, VW, name="tx") as tx0:
            mask = None if whole else kb.mask(b.sub(i64(spec.tw), tx0))
            tiles = kb.at(v, b.add(base, tx0))
            store = lambda p, value: kb.vstore(value, kb.at(tiles, b.mul(p, i64(point))), mask)  # noqa: E731
            _input_tiles_rolled(kb, spec, plane, ty, tx0, stack, single, block, store)


def input_transform_kernel(module: ir.Module, spec: WinogradSpec, name: str) -> None:
    """args: X, V; threads split the (n, c, tile row) rows, or the (n, c, group of tile rows)
    groups (`rows_per_vector`)."""
    m, a = spec.step, spec.a  # m: input columns per tile (the output tile's for stride 1)
    kb = KernelBuilder(module, name)
    x, v = kb.slot(0), kb.slot(1)
    b = kb.b
    if rows_per_vector(spec) > 1:
        _grouped_input_transform(kb, spec, x, v)
        kb.finish()
        return
    if rolled(spec):
        module.unroll = False  # type: ignore[attr-defined]  # its loops are the point
        _rolled_input_transform(kb, spec, x, v)
        kb.finish()
        return
    rows = spec.n * spec.c * spec.th
    whole = whole_vector_stores(spec)
    channel = v_channel(spec)
    single = PADDED_ROWS and spec.tw <= VW
    stack = _stack_rows(kb, spec) if PADDED_ROWS and not single and _row_floats(spec) <= ROW_FLOATS_MAX else None
    r0, r1 = kb.partition(rows, align=spec.th if whole else 1)
    with kb.loop(r0, r1, name="row") as r:
        ty = b.urem(r, i64(spec.th))
        nc = b.udiv(r, i64(spec.th))
        n, c = b.udiv(nc, i64(spec.c)), b.urem(nc, i64(spec.c))
        plane = kb.at(x, b.mul(nc, i64(spec.h * spec.w)))
        tile_row = b.mul(b.add(b.mul(n, i64(spec.th)), ty), i64(spec.tw))
        padded = _padded_rows(kb, spec, plane, ty, stack) if stack is not None else None
        with kb.loop(0, spec.tw, VW, name="tx") as tx0:
            start = b.sub(b.mul(tx0, i64(m)), i64(spec.pad[1]))

            def load(i: int) -> list:  # type: ignore[type-arg]
                """Input row i's m + 1 vectors from the first tile's first column."""
                if single:
                    return _single_vector_parts(kb, spec, plane, ty, i)
                if padded is not None:  # plain loads from the zero-padded copy of the row
                    return [kb.vload(kb.at(padded[i], b.add(b.mul(tx0, i64(m)), i64(part * VW)))) for part in range(m + 1)]
                iy = b.sub(b.add(b.mul(ty, i64(m)), i64(i)), i64(spec.pad[0]))
                inside = b.icmp_unsigned("<", iy, i64(spec.h))
                row = kb.at(plane, b.mul(b.select(inside, iy, i64(0)), i64(spec.w)))
                ats = [b.add(start, i64(part * VW)) for part in range(m + 1)]
                return [kb.vload(b.gep(row, [at]), mask=b.and_(kb.inside(at, spec.w), kb.splat(inside))) for at in ats]

            mask = None if whole else kb.mask(b.sub(i64(spec.tw), tx0))
            _transform_and_store(kb, spec, load, lambda vectors: _tile_columns(kb, spec, vectors), v, b.add(b.mul(c, i64(channel)), b.add(tile_row, tx0)), mask)
    kb.finish()


def _store_output(kb: KernelBuilder, spec: WinogradSpec, value, bias_v, res, y, ptr, mask) -> None:  # type: ignore[no-untyped-def]
    """One vector of output row columns at element `ptr` of Y, with the bias and epilogue."""
    if bias_v is not None:
        value = kb.b.fadd(value, bias_v)
    residual = kb.vload(kb.at(res, ptr), mask=mask) if res is not None else None
    kb.vstore(apply_epilogue(kb, spec.epilogue, value, residual), kb.at(y, ptr), mask)


def _m_vectors(kb: KernelBuilder, spec: WinogradSpec, mm, base) -> list:  # type: ignore[no-untyped-def, type-arg]
    """s[i][j] = (A^T M)[i][j] of the vector of tiles at tile `base` of each point's matrix."""
    a, at_ = spec.a, matrices(spec.m, spec.stride)[2]
    stride = point_stride(spec.o * spec.tiles)
    mv = [[kb.vload(kb.at(mm, kb.b.add(base, i64((i * a + j) * stride)))) for j in range(a)] for i in range(a)]
    return [[_combine(kb, at_[i], [mv[r_][j] for r_ in range(a)]) for j in range(a)] for i in range(spec.m)]


def _grouped_output_transform(kb: KernelBuilder, spec: WinogradSpec, mm, y, bias, res) -> None:  # type: ignore[no-untyped-def]
    """The output transform over groups of `rows_per_vector` tile rows (one vector of tiles):
    output row i of tile row ty0 + k is picked from lanes k tw .. k tw + tw - 1."""
    b, m, tw, group = kb.b, spec.m, spec.tw, rows_per_vector(spec)
    at_ = matrices(m, spec.stride)[2]
    groups = -(-spec.th // group)
    r0, r1 = kb.partition(spec.n * spec.o * groups)
    columns = [range(q * VW, (q + 1) * VW) for q in range(-(-spec.ow // VW))]
    masks = [None if col[-1] < spec.ow else vector_constant(vec(VW, I1), [c < spec.ow for c in col]) for col in columns]
    with kb.loop(r0, r1, name="group") as r:
        ty0 = b.mul(b.urem(r, i64(groups)), i64(group))
        no = b.udiv(r, i64(groups))
        n, o = b.udiv(no, i64(spec.o)), b.urem(no, i64(spec.o))
        out_plane = b.mul(no, i64(spec.oh * spec.ow))
        bias_v = kb.splat(b.load(kb.at(bias, o))) if bias is not None else None
        s = _m_vectors(kb, spec, mm, b.add(b.mul(o, i64(spec.tiles)), b.mul(b.add(b.mul(n, i64(spec.th)), ty0), i64(tw))))
        for i in range(m):
            wide = kb.concat([_combine(kb, at_[j], s[i]) for j in range(m)])
            for k in range(group):
                oy = b.add(b.mul(b.add(ty0, i64(k)), i64(m)), i64(i))
                with kb.if_(b.icmp_signed("<", oy, i64(spec.oh))):
                    for col, mask in zip(columns, masks):
                        value = _pick(kb, wide, [(c % m) * VW + k * tw + c // m if c < spec.ow else 0 for c in col])
                        ptr = b.add(out_plane, b.add(b.mul(oy, i64(spec.ow)), i64(col[0])))
                        _store_output(kb, spec, value, bias_v, res, y, ptr, mask)


def _output_tiles_rolled(kb: KernelBuilder, spec: WinogradSpec, tiles, block, row) -> None:  # type: ignore[no-untyped-def]
    """One vector of tiles' output transform as two loops: over the a columns j of M (A^T
    M[:, j], m vectors into `block`), then over the m output rows i (`row(i, S[i])`, which
    multiplies by A and stores). The same sums in the same order as the unrolled form."""
    m, a, b = spec.m, spec.a, kb.b
    at_ = matrices(m, spec.stride)[2]
    point = point_stride(spec.o * spec.tiles)
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
    """args: M, Y, [bias], [residual]; threads split the (n, o, tile row) rows, or the (n, o,
    group of tile rows) groups (`rows_per_vector`)."""
    m, a = spec.m, spec.a
    at_ = matrices(m, spec.stride)[2]
    kb = KernelBuilder(module, name)
    mm, y = kb.slot(0), kb.slot(1)
    extra = 2
    bias = kb.slot(extra) if spec.bias else None
    extra += spec.bias
    res = kb.slot(extra) if spec.epilogue.residual else None
    b = kb.b
    if rows_per_vector(spec) > 1:
        _grouped_output_transform(kb, spec, mm, y, bias, res)
        kb.finish()
        return
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
                """Output row i (an int or a loop's index) of the vector of tiles from its a values (A^T M)[i]."""
                oy = kb.add(b.mul(ty, i64(m)), i)
                with kb.if_(b.icmp_signed("<", oy, i64(spec.oh))):
                    wide = kb.concat([_combine(kb, at_[j], s_i) for j in range(m)])
                    at = b.add(out_plane, b.add(b.mul(oy, i64(spec.ow)), b.mul(tx0, i64(m))))
                    for q in range(m):
                        value = _pick(kb, wide, interleave[q])
                        mask = kb.mask(b.sub(i64(spec.ow), b.add(b.mul(tx0, i64(m)), i64(q * VW))))
                        _store_output(kb, spec, value, bias_v, res, y, b.add(at, i64(q * VW)), mask)

            if rolled_out:
                _output_tiles_rolled(kb, spec, kb.at(mm, base), block, row)
            else:
                for i, s_i in enumerate(_m_vectors(kb, spec, mm, base)):
                    row(i, s_i)
    kb.finish()
