"""The register-blocked, cache-tiled GEMM core (BLIS/oneDNN structure) with a fused epilogue.

C[m, n] = epilogue(sum over k of A(m, k) * B(k, n)) for one or more batches, where

- A(m, k) is read by scalar broadcast: either a panel packed at compile time
  (`a_panel`: per K block of KC, [M/MR][KC][MR] with zero-padded rows, so the K-block-major
  walk over the M blocks reads A as one sequential stream) or any strided matrix (activations of a
  FullyConnected, a transposed MatMul operand);
- B(k, n) is read as vectors of 16 along n: a packed panel ([N/NR][K][NR], zero-padded
  columns, as im2col and packed FC weights are written), rows of stride `ldb`, or
  (`shifted`) a stride-1 convolution's zero-padded input read in place: k = (channel, tap)
  and n = a position y * Wp + x of the padded row length Wp, so B(k, n) = X[channel][n +
  offset of tap] and each tap's row is a contiguous load (the implicit GEMM: no im2col);
- C has rows of stride `ldc`; the epilogue (bias per row or per column, a residual tensor
  of C's layout, ReLU/Clamp) is applied when the last K block of a tile is stored.

The micro-kernel keeps an MR x NR tile of C in registers (AVX-512: 12 x 32 in 24 zmm; AVX2:
6 x 16 in 12 ymm) and does MR*NR/16 16-lane FMAs per k with NR/16 vector loads and MR
broadcasts. Loops around it tile K by KC (the
A micro-panel stays in L1) and N by NC panels (the B block stays in L2). Threads split the
M blocks, or (when there are many panels, or that splits more evenly) a panel-major run of
(panel, M block) tiles weighed by their vectors. The streams the hardware prefetcher
serves late (packed weights from memory, B rows `ldb` apart, FC weights) are prefetched
in software a fixed number of k rows ahead.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from llvmlite import ir

from irforge.backends.cpu.codegen.epilogue import Epilogue, apply_epilogue
from irforge.backends.cpu.codegen.irutil import F32, I1, I32, I64, VOID, VW, KernelBuilder, i64, native_vector_bytes, vec

# The MR x NR tile of C must stay in registers: 12 x 32 is 24 of AVX-512's 32 zmm registers;
# with AVX2 (16 ymm, half as wide) it would be 48 and spill on every k, so AVX2 hosts take
# 6 x 16 (12 ymm accumulators, 2 for B, 1 broadcast: the classic AVX2 SGEMM tile).
MR, NR = (12, 32) if native_vector_bytes() == 64 else (6, 16)
NV = NR // VW
KC = 384
A_PREFETCH_ROWS = 64
"""Packed weights are read this many k rows (3 KiB) ahead: the K-block-major panels are one
sequential stream, the next M block's micro-panel follows the current one, and layers
whose weights come from memory (ResNet's last stage: 9 MiB for 49 positions) would
otherwise wait on it."""
B_PREFETCH_ROWS = 16
"""B is prefetched this many k rows ahead: rows read in place (activations of a 1x1 layer,
rows `ldb` apart, which the hardware prefetcher does not follow across pages), panels used
by one M block only (FC weights), and the L2-resident panels the other M blocks stream
(without it a 96 x 3136 x 384 GEMM ran at 168 GFLOP/s, with it at 180)."""
B_PREFETCH_NEXT_PANEL = True
"""B rows read in place (a 1x1 layer's input planes): a k step whose row k + B_PREFETCH_ROWS
is past the K block prefetches row k + B_PREFETCH_ROWS - kc of the next panel instead. At K
<= 16 (the 112x112 1x1 layers of MobileNetV2 / MnasNet / EfficientNet) every prefetch
went past B, into other buffers, and the next panel's rows came in by demand misses."""
NC_PANELS = 8
B_WORKSPACE = True
"""A `b_blocks` GEMM copies its blocks of B into the executable's per-chunk workspace
(`Lowering.workspace`), not onto its stack (A/B switch; False: a 192 KiB frame, e.g.
EfficientNetV2-S's 1x1 layers: a caller's thread of a 128 KiB stack crashed)."""
COLUMN_TAIL_MAX = 4
"""At most this many tail columns run as column accumulators (a masked vector costs MR FMAs)."""
FMA_CHAINS = 10
"""Independent FMA chains that keep the FMA units busy (2 per cycle x ~5 cycles of latency):
a tile with fewer accumulators than this (a tail of 1-4 columns alone, as 49 or 196
positions leave at 16 lanes) splits each column accumulator into interleaved copies."""
MAX_COLUMN_COPIES = 8
"""Registers the split column accumulators may take at most."""
PREFETCH_PER_LINE = True
"""A shifted B's unrolled taps prefetch each cache line of A, and each padded row of B, once."""
LINE_FLOATS = 16
SHIFTED_PLAIN_STORES = True
"""A shifted B's C vectors that lie inside one output row are stored unmasked (a branch)."""
SHIFTED_GAP_STORES = True
"""A shifted B's C vector that holds a whole gap of pad columns between two output rows (the
row's last outputs, the pad, the next row's first ones) is stored as two plain half-vector
stores of its outputs closed up over the gap (a lane shift and a blend each), not as masked
stores: on this AMD host (Zen 3) vmaskmovps stores cost several times a plain one, and every
vector of all-masked stores made the stem 1.28x and the 56->28 3x3 stride-2 layer 1.09x
slower (same-process A/B of `SHIFTED_PLAIN_STORES`), where 16% / 55% of vectors still took
them."""
NEXT_TILE_PREFETCH = True
"""A plain tile (packed A, B a panel or rows in place, no batch levels: the 1x1 and im2col
convolutions) prefetches the next panel's C and residual lines before its k loop: a thread
walks 8 panels of one M block, then the next M block's, so each of the MR rows' C and
residual streams is 8 lines long, too short for the hardware prefetcher to follow."""
NEXT_TILE_PANELS = 1
"""How many panels ahead those prefetches reach."""
SHIFTED_PREFETCH_PLANES = 2
"""A shifted B's rows are prefetched this many channels ahead (planes are Hp * Wp apart)."""
BALANCE_THREADS = 2
"""The thread count the N-or-M split is balanced for (the kernels run with any)."""
TAIL_ROWS_WASTE = 0.05
"""A GEMM of packed A and no batch levels whose last M block is short runs that block with
the full MR-row micro-kernel (A's panel is zero-padded; the rows past M are computed and not
stored) when the padded rows are at most this fraction of its rows: one micro-kernel per
module instead of two, so LLVM compiles about half the code. A short block's own kernel
(2-4 rows for the same loads of B) was no faster than the full one: at 0.01 (session 7:
M >= 256 on AVX2's MR = 6) ResNet-50 ran 0.94-0.95x the time of no merging; at 0.05 (M = 64
and 128 merge too: 2 or 4 padded rows in 66-132) ResNet-50 1.002x and MobileNetV2 0.997x
the time at 0.01, same-process A/Bs at load 15-17. A shifted B unrolls its taps into each
micro-kernel, so there the second variant doubled the module: ResNet-50's 7x7 stem (M = 64)
362 -> 215 KB of IR, 0.58 -> 0.34-0.40 s of LLVM, its phase 0.92x the time."""
UNROLL_PLAIN = False
"""Whether LLVM unrolls the loops of a GEMM with packed A and without batch levels or shifted
B (`jit.unrolls`): its micro-kernels' k loops are register-blocked by hand, so unrolling
grows the code only: ResNet-50's 17 such modules 2.7 -> 1.9 s of LLVM, run time within
noise (A/B of whole models' phases: ResNet-50 1.004, MobileNetV2 1.000, DenseNet-121 0.999).
Shifted and batched (Winograd) GEMMs keep it (their 3x3 phases ran 3% slower without, for
0.1 s of LLVM), and so do those of strided A (BERT's FC layers: 1.023 and 0.983 in two A/Bs,
not told apart from noise)."""
K_UNROLL = 1
"""k steps per iteration of a plain tile's k loop (packed A, B not shifted), the steps left
over in a loop of one: fewer loop branches and one A prefetch per cache line (6 rows of A
are 24 bytes a step) instead of one a step."""
COLUMN_K_UNROLL = 4
"""k steps per iteration of the k loop of a tail tile of column accumulators only (`column_tail`)
of at most `COLUMN_UNROLL_MAX` columns, the rest in a loop of one: 49 positions (7x7) leave 1
column past 3 panels, whose tile does one FMA per k, so its loop's compare, branch and counter
and its per-step A prefetch were as many instructions as its work. ResNet-50's 7x7 1x1 layers
0.975-0.987x the time, its 14x14 ones (196 = 12 x 16 + 4: 4 columns, 8 FMAs per k in 2 copies)
1.004-1.015x with it: they take `COLUMNS_K_UNROLL` (docs/STATUS.md, session 13 round 2)."""
COLUMN_UNROLL_MAX = 1
COLUMNS_K_UNROLL = 2
"""... and for tail tiles of more columns alone (2-4: 196 positions leave 4 past 12 panels)."""
BALANCED_ROWS = True
"""A grouped layer's GEMMs (`ops/shifted.py`) cut each group's rows into equally full M blocks
(`balanced_rows`): ResNeXt-50's 28x28 groups of 8 rows ran at 75 GF/s as 6 + 2 against 85-86
for its groups of 4 and 16."""
B_COPY_ALIGN = 64
"""Byte alignment of a thread's stack copy of a block of B (`GemmSpec.b_blocks`): at the
array's own alignment (16 bytes) the micro-kernels' 16-lane loads of it straddle cache lines.
0: the alloca's default."""
UNROLL_ONE_ROW = False
"""Whether LLVM unrolls the loops of a one-row GEMM without batch levels (a batch-1
FullyConnected: one FMA chain per vector of columns, reading weights that stream from
memory): unrolled, ResNet-50's 2048 -> 1000 classifier was 0.24 s of LLVM."""


@dataclass(frozen=True)
class Batch:
    """One batch loop level: element offsets added to A, B, C (and R), bias per iteration."""

    count: int
    a: int
    b: int
    c: int
    bias: int = 0


@dataclass(frozen=True)
class Shifted:
    """B of a stride-1 convolution read in place from its zero-padded input [C][Hp][Wp].

    Columns are positions q = y * row + x over the padded row length `row`; those with
    x >= `cols` (the pad columns) are computed and dropped: C is stored and read back as
    [rows][cols], each 16-lane vector with one masked access per output row it touches
    (two where rows are at least 15 long, up to five on a grouped layer's rows of 4-8), each
    linear in the lane. K is (channel, tap), channel-major.
    """

    offsets: tuple[int, ...]
    """element offset of each tap (ky, kx) in a channel's padded plane"""
    plane: int
    row: int
    cols: int
    rows: int

    @property
    def taps(self) -> int:
        return len(self.offsets)


@dataclass(frozen=True)
class GemmSpec:
    m: int
    n: int
    k: int
    a_panel: bool
    a_rs: int = 0
    a_cs: int = 0
    b_panel: bool = False
    ldb: int = 0
    ldc: int = 0
    bias: str = "none"
    epilogue: Epilogue = field(default_factory=Epilogue)
    batches: tuple[Batch, ...] = ()
    kc: int = KC
    """K block size (a multiple of the taps of a shifted B); packed A panels use the same"""
    shifted: Shifted | None = None
    split_batches: bool = False
    """threads split the first batch level, each running whole GEMMs: for many small GEMMs
    (Winograd's 16 or 36 of a layer), where splitting each one left threads waiting"""
    c_offset: int = 0
    """elements from C's (and the residual's) slot to this GEMM's first element: one band of
    output rows of a convolution computed in parts (`ops/segmented.py`)"""
    k_arg: bool = False
    """K is read at run time from the kernel's last slot (one i64, see `runtime_k`) and `k`
    is 0: one kernel serves GEMMs that differ in K only (DenseNet's 1x1 layers over a dense
    block's growing channel count)"""
    accumulate: bool = False
    """C's content on entry is added to the product (C += A B), as the first K block stores
    its tile (read there, not before the k loop: loads the first FMAs would wait on cost
    the 14x14 layers 2-3%). A convolution stores its result over its residual this way
    (`fusion.residual_in_place`), whatever its K blocks."""
    b_blocks: bool = False
    """B is rows of stride `ldb` (not a panel) that each thread copies, per block of
    `NC_PANELS` panels and one K block, into NR-column panels on its stack before the M
    blocks read them (BLIS's packed B, `_pack_block`): rows a multiple of 4 KiB apart read
    in place put a panel's K rows in the same cache sets (2-4x slower); a copy per block needs
    no arena buffer of the whole B and overlaps the GEMM (`ops/linear.py` `PACK_BLOCKS_OVER`)."""
    workspace: bool = field(default_factory=lambda: B_WORKSPACE)
    """with `b_blocks`: the copy of B lies in a workspace argument (the last slot), not on
    the stack (`B_WORKSPACE`, read when the spec is made)"""
    a_block_step: int = 0
    """strided A whose K blocks are not adjacent: block j (k from j * kc) starts j *
    `a_block_step` elements in (a multiple of kc), k stepping `a_cs` inside it; 0: k * a_cs
    throughout. Heads as K blocks: a[H, M, D] times Wo[H * D, N] summed over the heads
    (kc = D, `a_block_step` = M * D; `ops/linear.py` `HEADS_AS_K`)."""
    one_k_block: bool = False
    """with `k_arg`: K <= `kc`, so every tile is stored once, from zero and with the epilogue
    (`first` and `last` are constants, as they were for a constant K of one block: a run-time
    `first` made the tiles load C before the first K block, 1-2% on ResNet's 1x1 layers)"""
    block_rows: int = 0
    """rows of C per M block (at most MR; 0: MR), A packed to match (`pack_a`'s `block_rows`):
    a grouped layer's 8 rows per group as 4 + 4, not 6 + 2 (`balanced_rows`)"""

    def workspace_bytes(self) -> int:
        """Bytes of the per-chunk workspace the kernel takes as its last argument (0: none;
        the lowering passes it to `Lowering.kernel`, and `Lowering.phase` appends the buffer)."""
        return 4 * b_copy_floats(self) if self.b_blocks and self.workspace else 0

    @property
    def rows(self) -> int:
        """Rows of C per M block (`block_rows`)."""
        return self.block_rows or MR

    @property
    def m_blocks(self) -> int:
        return -(-self.m // self.rows)

    def a_steps(self) -> tuple[int, int]:
        """(row step, k step) inside an A micro-panel."""
        return (1, MR) if self.a_panel else (self.a_rs, self.a_cs)

    def b_kstep(self) -> int:
        return NR if self.b_panel or self.b_blocks else self.ldb

    def a_block(self, mb: ir.Value, kb: ir.Value, kc: ir.Value, kbld: KernelBuilder) -> ir.Value | int:
        """Element offset of A's micro-panel for row block `mb`, K block at `kb` of `kc` rows."""
        if self.a_panel:
            return kbld.add(kbld.mul(kb, self.m_blocks * MR), kbld.mul(mb, kbld.mul(kc, MR)))
        k_step = self.a_block_step // self.kc if self.a_block_step else self.a_cs
        return kbld.add(kbld.mul(mb, MR * self.a_rs), kbld.mul(kb, k_step))

    def b_block(self, pn: ir.Value, kb: ir.Value, kbld: KernelBuilder, k: ir.Value | int) -> ir.Value | int:
        if self.shifted is not None:
            return kbld.add(kbld.mul(pn, NR), kbld.mul(kbld.b.udiv(kb, i64(self.shifted.taps)), self.shifted.plane))
        if self.b_panel:
            return kbld.add(kbld.mul(pn, kbld.mul(k, NR)), kbld.mul(kb, NR))
        return kbld.add(kbld.mul(pn, NR), kbld.mul(kb, self.ldb))


def runtime_k(spec: GemmSpec) -> tuple[GemmSpec, list[int]]:
    """`spec` with K taken at run time where the kernel's code does not depend on it, and the
    values of its extra slot (an i64 constant buffer appended to the phase's arguments; empty:
    K stays a constant). K is free when A is a packed panel (its K blocks are `kc` rows each,
    whatever K) and there are no batch levels (their strides hold K) and no shifted B (whose
    K is channels times taps); the per-K-block `first`/`last` flags and the K loop's bound
    become run-time values, the micro-kernels are unchanged."""
    if not spec.a_panel or spec.batches or spec.shifted is not None or spec.k_arg:
        return spec, []
    return replace(spec, k=0, k_arg=True, one_k_block=spec.k <= spec.kc), [spec.k]


def pack_a(weights, rows: int, k: int, kc: int = KC, block_rows: int = 0):  # type: ignore[no-untyped-def]
    """[rows, k] -> the A panel layout: per K block, [ceil(rows/MR)][kc][MR], zero-padded
    (numpy); with `block_rows` (< MR; 0: MR), block j holds rows j * block_rows on in its
    first lanes (`GemmSpec.block_rows`), the rest zeros."""
    return pack_a_all([weights], rows, k, kc, block_rows)


def pack_a_all(matrices, rows: int, k: int, kc: int = KC, block_rows: int = 0):  # type: ignore[no-untyped-def]
    """`pack_a` of each [rows, k] matrix (a group's, a Winograd point's), one after the other
    in one array: each K block written in place by one transposing copy (a padded copy, a
    ravel per block and two concatenations were 0.18 s of ResNet-50's Winograd weights)."""
    import numpy as np

    step = block_rows or MR  # rows of the matrix per block
    blocks = -(-rows // step)
    full = rows // MR if step == MR else 0  # blocks copied by one reshape: whole MR-row blocks
    size = blocks * MR * k
    out = np.empty(len(matrices) * size, np.float32)
    for index, weights in enumerate(matrices):
        matrix = np.asarray(weights, np.float32).reshape(rows, k)
        at = index * size
        for k0 in range(0, k, kc):
            width = min(kc, k - k0)
            view = out[at:at + blocks * MR * width].reshape(blocks, width, MR)
            view[:full] = matrix[:full * MR, k0:k0 + width].reshape(full, MR, width).transpose(0, 2, 1)
            for j in range(full, blocks):  # a short last block, or every block of `block_rows`
                part = matrix[j * step:(j + 1) * step, k0:k0 + width]
                view[j] = 0.0
                view[j, :, :len(part)] = part.T
            at += blocks * MR * width
    return out


def pack_b(matrix, k: int, cols: int):  # type: ignore[no-untyped-def]
    """[k, cols] -> the B panel layout [ceil(cols/NR)][k][NR], zero-padded (numpy). Written
    straight into the result: a padded copy, then its transpose, held VGG-16's 411 MB
    classifier twice besides the result (a cold compile's peak RSS)."""
    import numpy as np

    matrix = matrix.reshape(k, cols)
    full = cols // NR
    out = np.empty((-(-cols // NR), k, NR), np.float32)
    out[:full] = matrix[:, :full * NR].reshape(k, full, NR).transpose(1, 0, 2)
    if cols % NR:
        out[full] = 0.0
        out[full, :, :cols % NR] = matrix[:, full * NR:]
    return out


def balanced_rows(m: int) -> int:
    """Rows per M block (`GemmSpec.block_rows`) for m rows cut into as many blocks as MR-row
    blocks would be, each as full as the others (`BALANCED_ROWS`): 8 rows as 4 + 4 (8
    accumulators each) instead of 6 + 2 (a 2-row tile has 4 FMA chains, too few to hide the
    FMA latency); 0 (MR) where that is MR or m fits one block."""
    rows = -(-m // -(-m // MR))
    return rows if BALANCED_ROWS and m > MR and rows < MR else 0


def merges_tail_rows(spec: GemmSpec) -> bool:
    """Whether the short last M block runs with the MR-row micro-kernel (`TAIL_ROWS_WASTE`)."""
    m_blocks, m_tail = -(-spec.m // MR), spec.m % MR
    return bool(spec.a_panel and not spec.batches and not spec.block_rows and m_tail and m_blocks > 1 and MR - m_tail <= TAIL_ROWS_WASTE * m_blocks * MR)


def micro_kernel(module: ir.Module, spec: GemmSpec, name: str, rows: int, masked: bool, tail_rows: int = 0) -> ir.Function:
    """An MR x NR (or rows x NR, masked along n) tile: acc over kc, then epilogue and store.

    The masked variant serves the last panel only, so it keeps just the vectors that the
    n tail reaches, and runs 1-4 columns past its whole vectors as column accumulators
    (`column_tail`: a tail of 4 columns costs 4 FMAs per k, not a vector per row).
    Arguments: a, b, c, r, bias pointers at the tile origin (a shifted B's C and R: at the
    tile's first row), kc (a shifted B: channels), first, last, ncount; with `tail_rows`
    (`merges_tail_rows`) also `full`: false for the last M block, whose rows from
    `tail_rows` on are computed but neither loaded (C, the residual, a row bias: read at
    row tail_rows - 1 instead, inside the buffers) nor stored.
    """
    nv = -(-(spec.n % NR) // VW) if masked and spec.n % NR else NV
    columns = column_tail(spec) if masked else 0
    if columns:
        nv, masked = (spec.n % NR) // VW, False
    p = ir.PointerType(F32)
    fn_type = ir.FunctionType(VOID, [p, p, p, p, p, I64, I1, I1, I64] + [I1] * bool(tail_rows))
    kb = KernelBuilder(module, name, fn_type)
    kb.fn.linkage = "internal"
    a, b_ptr, c, r, bias, kc, first, last, ncount = kb.fn.args[:9]
    for arg in (a, b_ptr, c, r, bias):
        arg.add_attribute("noalias")
    bld = kb.b
    tile = _TileIO(kb, spec, nv, ncount, masked, kb.fn.args[9] if tail_rows else None, tail_rows)
    zero = kb.vconst(0.0)
    init = [bld.select(first, zero, tile.load(c, i, j)) for i in range(rows) for j in range(nv)]
    # column accumulators hold a tile column's MR rows: one host register (AVX2's 6 rows in
    # 8 lanes, not a 16-lane pair whose upper half would be FMAs of zeros)
    cw = column_lanes()
    lanes = kb.mask(rows, cw) if not tail_rows else bld.select(tile.full, kb.mask(rows, cw), kb.mask(tail_rows, cw))
    offsets = ir.Constant(vec(cw, I64), [lane * spec.ldc for lane in range(cw)])
    column_zero = kb.vconst(0.0, cw)
    init += [bld.select(first, column_zero, kb.gather(kb.at(c, nv * VW + e), offsets, lanes)) for e in range(columns)]
    copies = column_copies(rows * nv * VW // host_lanes(), columns)
    init += [column_zero] * (columns * (copies - 1))
    if NEXT_TILE_PREFETCH and not masked and not columns and next_tile_prefetches(spec):
        # the next tile along n: its C rows (stored, and loaded between K blocks) and its
        # residual rows, one line per row and vector (see `NEXT_TILE_PREFETCH`)
        for ptr in (c, r) if spec.epilogue.residual else (c,):
            for i in range(rows):
                for j in range(nv):
                    kb.prefetch(kb.at(ptr, kb.add(tile.row(i, spec.ldc), NEXT_TILE_PANELS * NR + j * VW)))
    a_ms, a_ks = spec.a_steps()

    def k_loop(k0, values, unroll: int, tag: str):  # type: ignore[no-untyped-def]
        """The k loop from `k0`, `unroll` k steps an iteration while that many are left;
        returns (k, accumulators) where it ends."""
        pre = bld.block
        head, body, done = (bld.append_basic_block(f"{tag}.{s}") for s in ("head", "body", "done"))
        bld.branch(head)
        bld.position_at_end(head)
        kk = bld.phi(I64, "k")
        kk.add_incoming(k0, pre)
        accs = [bld.phi(value.type) for value in values]
        for phi, value in zip(accs, values):
            phi.add_incoming(value, pre)
        bld.cbranch(bld.icmp_signed("<", bld.add(kk, i64(unroll - 1)), kc), body, done)
        bld.position_at_end(body)
        new = list(accs)
        for u in range(unroll):
            for b_row, a_row, prefetch, a_prefetch in _k_rows(kb, spec, bld.add(kk, i64(u)) if u else kk, a, b_ptr, kc):
                if u and u * a_ks // LINE_FLOATS == (u - 1) * a_ks // LINE_FLOATS:
                    a_prefetch = []  # one A prefetch per cache line of the unrolled steps
                bvals = [kb.vload(kb.at(b_row, j * VW), mask=None if spec.b_panel or spec.b_blocks or spec.shifted else tile.masks[j]) for j in range(nv)]
                for ahead in a_prefetch:
                    kb.prefetch(ahead)
                for ahead in prefetch:
                    for j in range(nv):
                        kb.prefetch(kb.at(ahead, j * VW))
                for i in range(rows):
                    av = kb.splat(bld.load(kb.at(a_row, i * a_ms)))
                    for j in range(nv):
                        new[i * nv + j] = kb.fma(av, bvals[j], new[i * nv + j])
                if columns:
                    # each k adds into the first copy of every column accumulator and rotates the
                    # copies, so that a copy's next FMA comes `copies` k steps later (one chain of
                    # dependent FMAs per column ran at its latency: the 7x7 layers' tail column
                    # took 4/5 of a whole panel's time)
                    a_column = kb.vload(a_row, cw, mask=lanes)
                    base = rows * nv
                    heads = [kb.fma(a_column, kb.splat(bld.load(kb.at(b_row, nv * VW + e)), cw), new[base + e]) for e in range(columns)]
                    new[base:] = new[base + columns:] + heads
        for phi, value in zip(accs, new):
            phi.add_incoming(value, bld.block)
        kk.add_incoming(bld.add(kk, i64(unroll)), bld.block)
        bld.branch(head)
        bld.position_at_end(done)
        return kk, accs

    unroll = K_UNROLL if spec.shifted is None and spec.a_panel else 1
    if columns and not nv:  # a tile of column accumulators only (`COLUMN_K_UNROLL`)
        unroll = max(unroll, COLUMN_K_UNROLL if columns <= COLUMN_UNROLL_MAX else COLUMNS_K_UNROLL)
    kk, accs = k_loop(i64(0), init, unroll, "k")
    if unroll > 1:  # the k steps left over
        kk, accs = k_loop(kk, accs, 1, "kr")
    if copies > 1:
        base = rows * nv
        sums = list(accs[base:base + columns])
        for copy in range(1, copies):
            sums = [bld.fadd(total, accs[base + copy * columns + e]) for e, total in enumerate(sums)]
        accs = list(accs[:base]) + sums
    if spec.epilogue.activation.startswith("act."):
        # a smooth activation (GELU's erf polynomial and division, Swish's exp) costs tens of
        # instructions per vector: branch on `last` so K blocks before the last store the
        # accumulators as they are (a select computed it for every K block: BERT's
        # 768 -> 3072 GEMM has two)
        blocks = [bld.append_basic_block(s) for s in ("ep.last", "ep.partial", "ep.done")]
        bld.cbranch(last, blocks[0], blocks[1])
        bld.position_at_end(blocks[1])
        _store_tile(kb, spec, tile, accs, rows, nv, columns, c, r, bias, None, offsets, lanes, first)
        bld.branch(blocks[2])
        bld.position_at_end(blocks[0])
        _store_tile(kb, spec, tile, accs, rows, nv, columns, c, r, bias, True, offsets, lanes, first)
        bld.branch(blocks[2])
        bld.position_at_end(blocks[2])
    else:
        _store_tile(kb, spec, tile, accs, rows, nv, columns, c, r, bias, last, offsets, lanes, first)
    kb.finish()
    return kb.fn


def _store_tile(kb: KernelBuilder, spec: GemmSpec, tile: _TileIO, accs, rows: int, nv: int, columns: int, c, r, bias, last,  # type: ignore[no-untyped-def]
                offsets, lanes, first) -> None:
    """Store the tile's accumulators: with the epilogue where `last` (an i1 value, selected
    per vector), with it always (True) or never (None); C's content added first where
    `first` and `spec.accumulate`."""
    bld = kb.b
    if spec.accumulate:
        accs = list(accs)
        for i in range(rows):
            for j in range(nv):
                accs[i * nv + j] = bld.fadd(accs[i * nv + j], bld.select(first, tile.load(c, i, j), kb.vconst(0.0)))
        for e in range(columns):
            start = kb.gather(kb.at(c, nv * VW + e), offsets, lanes)
            accs[rows * nv + e] = bld.fadd(accs[rows * nv + e], bld.select(first, start, kb.vconst(0.0, lanes.type.count)))

    def pick(out, acc):  # type: ignore[no-untyped-def]
        return out if last is True else bld.select(last, out, acc)

    for i in range(rows):
        for j in range(nv):
            acc = accs[i * nv + j]
            if last is None:
                tile.store(acc, c, i, j)
                continue
            tile.store(pick(_epilogue(kb, spec, tile, acc, i, j, r, bias), acc), c, i, j)
    for e in range(columns):
        acc, col = accs[rows * nv + e], nv * VW + e
        if last is None:
            kb.scatter(acc, kb.at(c, col), offsets, lanes)
            continue
        if spec.bias == "row":
            out = bld.fadd(acc, kb.vload(bias, lanes.type.count, mask=lanes))
        elif spec.bias == "col":
            out = bld.fadd(acc, kb.splat(bld.load(kb.at(bias, col)), lanes.type.count))
        else:
            out = acc
        residual = kb.gather(kb.at(r, col), offsets, lanes) if spec.epilogue.residual else None
        out = apply_epilogue(kb, spec.epilogue, out, residual)
        kb.scatter(pick(out, acc), kb.at(c, col), offsets, lanes)


def next_tile_prefetches(spec: GemmSpec) -> bool:
    """Whether the tiles prefetch the next panel's C and residual (`NEXT_TILE_PREFETCH`)."""
    return spec.a_panel and spec.shifted is None and not spec.batches and spec.m > 1


def gap_pays(sh: Shifted) -> bool:
    """Whether a shifted B's vectors over a gap of pad columns take `_TileIO._gap_store`: some
    pad (stride 1 rows share theirs, strided ones have their own), a vector over two rows at
    most (rows of VW - 1 or more) and at least half a vector of outputs in it."""
    return SHIFTED_GAP_STORES and SHIFTED_PLAIN_STORES and 0 < sh.row - sh.cols <= VW // 2 and sh.row >= VW - 1


def column_tail(spec: GemmSpec) -> int:
    """Columns of the last panel past its whole vectors that run as column accumulators
    (A's packed row of MR weights as the vector, the column's B value broadcast): a tail of
    1-4 columns costs that many FMAs per k, where a masked vector costs one per row (MR).
    49 positions (7x7) are 32 + 16 + 1: 37 FMAs per k instead of 48; 196 are 6 * 32 + 4."""
    if not spec.a_panel or spec.shifted is not None:
        return 0
    extra = spec.n % NR % VW
    return extra if 0 < extra <= COLUMN_TAIL_MAX and spec.n % NR else 0


def host_lanes() -> int:
    """f32 lanes of one host vector register (8 on AVX2, 16 on AVX-512)."""
    return native_vector_bytes() // 4


def column_lanes() -> int:
    """Lanes of a column accumulator: one host register when MR rows fit in it."""
    return host_lanes() if MR <= host_lanes() else VW


def column_copies(vector_accumulators: int, columns: int) -> int:
    """Copies of each of `columns` column accumulators beside a tile's `vector_accumulators`."""
    if not columns:
        return 1
    return max(1, min(-(-FMA_CHAINS // (vector_accumulators + columns)), MAX_COLUMN_COPIES // columns))


def _k_rows(kb: KernelBuilder, spec: GemmSpec, kk, a, b, kc=None):  # type: ignore[no-untyped-def]
    """(B row, A row, B prefetch addresses, A prefetch addresses) of each k step of one loop
    iteration: one k, or a shifted B's channel `kk` with its taps unrolled (their rows at
    constant offsets); `kc`: the K block's rows (`B_PREFETCH_NEXT_PANEL`)."""
    bld = kb.b
    a_ms, a_ks = spec.a_steps()
    if spec.shifted is None:
        b_row = kb.at(b, bld.mul(kk, i64(spec.b_kstep())))
        a_row = kb.at(a, bld.mul(kk, i64(a_ks)))
        a_ahead = [kb.at(a_row, A_PREFETCH_ROWS * MR)] if spec.a_panel else []
        b_ahead = kb.at(b_row, B_PREFETCH_ROWS * spec.b_kstep())
        if B_PREFETCH_NEXT_PANEL and kc is not None and not (spec.b_panel or spec.b_blocks):
            # rows read in place: the k steps whose row k + ahead lies past the K block
            # prefetch row k + ahead - kc of the next panel (NR columns on) instead
            wrapped = kb.at(b_row, bld.add(bld.mul(bld.sub(i64(B_PREFETCH_ROWS), kc), i64(spec.ldb)), i64(NR)))
            b_ahead = bld.select(bld.icmp_signed("<", bld.add(kk, i64(B_PREFETCH_ROWS)), kc), b_ahead, wrapped)
        return [(b_row, a_row, [b_ahead], a_ahead)]
    sh = spec.shifted
    plane = kb.at(b, bld.mul(kk, i64(sh.plane)))
    a_rows = kb.at(a, bld.mul(kk, i64(sh.taps * a_ks)))
    ahead = kb.at(plane, SHIFTED_PREFETCH_PLANES * sh.plane)
    # A's rows of one channel are taps * MR floats in a row: one prefetch per cache line of
    # them, spread over the taps (a prefetch per tap was 2.7 per line, and prefetches take
    # load slots beside the B loads and broadcasts)
    a_lines = -(-sh.taps * a_ks // LINE_FLOATS) if PREFETCH_PER_LINE else sh.taps
    a_at: dict[int, list[int]] = {}
    for s in range(a_lines):
        a_at.setdefault(s * sh.taps // a_lines, []).append(s * LINE_FLOATS if PREFETCH_PER_LINE else s * a_ks)
    seen: set[int] = set()
    steps = []
    for t, offset in enumerate(sh.offsets):
        # one prefetch per padded row the taps read (of any phase plane): its first tap,
        # the one with the smallest offset in it
        row = offset // sh.row
        starts_row = row not in seen if PREFETCH_PER_LINE else t == 0 or row != sh.offsets[t - 1] // sh.row
        seen.add(row)
        a_ahead = [kb.at(a_rows, A_PREFETCH_ROWS * MR + e) for e in a_at.get(t, [])]
        steps.append((kb.at(plane, offset), kb.at(a_rows, t * a_ks), [kb.at(ahead, offset)] if starts_row else [], a_ahead))
    return steps


class _TileIO:
    """Loads and stores of C's (and the residual's) vectors (i, j) of one tile.

    A plain tile is rows `ldc` apart, masked along n in the tail panel. A shifted B's tile
    covers padded positions q = n0 + 16 j + lane: the lanes still in row y0 = q0 // Wp go
    to y0 * cols + x, those that wrapped into row y0 + 1 to (y0 + 1) * cols + (x - Wp), and
    the pad columns x >= cols (and rows past the last) nowhere.
    """

    def __init__(self, kb: KernelBuilder, spec: GemmSpec, nv: int, ncount, masked: bool,  # type: ignore[no-untyped-def]
                 full=None, tail_rows: int = 0) -> None:
        self.kb, self.spec = kb, spec
        self.full, self.tail_rows = full, tail_rows
        """rows >= tail_rows exist only where `full` (see `micro_kernel`)"""
        self.masks = [kb.mask(kb.b.sub(ncount, i64(j * VW))) if masked else None for j in range(nv)]
        self.parts: list[list[tuple[ir.Value, ir.Value]]] = []
        self.inside: list[ir.Value] = []
        self.gap: list[ir.Value] = []
        """per vector: it holds a whole gap of pad columns and the next row exists (`gap_pays`)"""
        self.head: list[ir.Value] = []
        """per vector: its lanes before the gap (outputs left in row y0)"""
        sh = spec.shifted
        if sh is None:
            return
        b = kb.b
        lanes = ir.Constant(vec(VW, I64), list(range(VW)))
        n0 = b.sub(i64(spec.n), ncount)
        # output rows one vector can touch: two where rows are at least VW - 1 long, three
        # for a 7x7 plane's rows of 8 (x0 + VW - 1 over rows of `row`, x0 < row)
        span = 1 + (sh.row + VW - 2) // sh.row
        for j in range(nv):
            q = b.add(n0, i64(j * VW))
            y0 = b.udiv(q, i64(sh.row))
            x0 = b.sub(q, b.mul(y0, i64(sh.row)))
            base = b.add(b.mul(y0, i64(sh.cols)), x0)
            parts = []
            for r in range(span):
                # lanes l with r * row <= x0 + l < r * row + cols go to row y0 + r, column
                # x0 + l - r * row: element base + r * (cols - row) + l
                start = b.sub(i64(r * sh.row), x0)
                mask = kb.splat(b.icmp_signed("<", b.add(y0, i64(r)), i64(sh.rows)))
                if (r - 1) * sh.row + 1 + sh.cols < VW:  # the row's end can fall inside the vector (x0 < row)
                    mask = b.and_(mask, b.icmp_signed("<", lanes, kb.splat(b.add(start, i64(sh.cols)))))
                if r > 0:
                    mask = b.and_(mask, b.icmp_signed(">=", lanes, kb.splat(start)))
                parts.append((b.add(base, i64(r * (sh.cols - sh.row))) if r else base, mask))
            self.parts.append(parts)
            self.inside.append(b.and_(b.icmp_signed("<=", b.add(x0, i64(VW)), i64(sh.cols)), b.icmp_signed("<", y0, i64(sh.rows))))
            if gap_pays(sh):
                # the gap [cols, row) lies in lanes [cols - x0, row - x0) of [0, VW), the last
                # lane is an output of row y0 + 1 (x0 + VW <= row + cols), and that row exists
                end = b.add(x0, i64(VW))
                self.gap.append(b.and_(
                    b.and_(b.icmp_signed("<=", x0, i64(sh.cols)), b.icmp_signed(">=", end, i64(sh.row))),
                    b.and_(b.icmp_signed("<=", end, i64(sh.row + sh.cols)), b.icmp_signed("<", b.add(y0, i64(1)), i64(sh.rows)))))
                self.head.append(b.trunc(b.sub(i64(sh.cols), x0), I32))

    def row(self, i: int, step: int):  # type: ignore[no-untyped-def]
        """Row i's offset (rows `step` apart) for a load: a row that may not exist (past
        `tail_rows` in the last M block) reads the last one that does."""
        if self.full is None or i < self.tail_rows:
            return step * i
        return self.kb.b.select(self.full, i64(step * i), i64(step * (self.tail_rows - 1)))

    def load(self, ptr, i: int, j: int):  # type: ignore[no-untyped-def]
        kb, row = self.kb, self.row(i, self.spec.ldc)
        if not self.parts:
            return kb.vload(kb.at(ptr, kb.add(row, j * VW)), mask=self.masks[j])
        (base, mask), *rest = self.parts[j]
        value = kb.vload(kb.at(ptr, kb.add(base, row)), mask=mask)
        for base, mask in rest:
            value = kb.b.select(mask, kb.vload(kb.at(ptr, kb.add(base, row)), mask=mask), value)
        return value

    def store(self, value, ptr, i: int, j: int) -> None:  # type: ignore[no-untyped-def]
        if self.full is not None and i >= self.tail_rows:
            with self.kb.if_(self.full):
                self._store(value, ptr, i, j)
        else:
            self._store(value, ptr, i, j)

    def _store(self, value, ptr, i: int, j: int) -> None:  # type: ignore[no-untyped-def]
        kb, row = self.kb, self.spec.ldc * i
        if not self.parts:
            kb.vstore(value, kb.at(ptr, row + j * VW), self.masks[j])
            return
        if not SHIFTED_PLAIN_STORES:
            for base, mask in self.parts[j]:
                kb.vstore(value, kb.at(ptr, kb.b.add(base, i64(row))), mask)
            return
        # a vector inside one output row (most of them where rows are several vectors long)
        # is one plain store; masked stores (vmaskmovps) are slow on AMD hosts
        with kb.b.if_else(self.inside[j]) as (then, otherwise):
            with then:
                kb.vstore(value, kb.at(ptr, kb.b.add(self.parts[j][0][0], i64(row))))
            with otherwise:
                if not self.gap:
                    self._masked(value, ptr, row, j)
                    return
                with kb.b.if_else(self.gap[j]) as (gap, rest):
                    with gap:
                        self._gap_store(value, kb.at(ptr, kb.b.add(self.parts[j][0][0], i64(row))), self.head[j])
                    with rest:
                        self._masked(value, ptr, row, j)

    def _masked(self, value, ptr, row: int, j: int) -> None:  # type: ignore[no-untyped-def]
        for base, mask in self.parts[j]:
            self.kb.vstore(value, self.kb.at(ptr, self.kb.b.add(base, i64(row))), mask)

    def _gap_store(self, value, ptr, head) -> None:  # type: ignore[no-untyped-def]
        """Store a vector whose lanes [head, head + d) are the gap of d = row - cols pad
        columns: its VW - d outputs are contiguous in C from `ptr` (row y0's from lane 0,
        row y0 + 1's after them). Closed up, output e is lane e (e < head) or lane e + d;
        the first half-vector of outputs and the last one (overlapping where d > 0) are
        each a blend of two constant lane windows of the vector, stored plain."""
        kb, b, sh = self.kb, self.kb.b, self.spec.shifted
        d, half = sh.row - sh.cols, VW // 2
        outputs = VW - d
        lanes = ir.Constant(vec(half, I32), list(range(half)))
        limit = kb.splat(head, half)

        def window(first: int):  # type: ignore[no-untyped-def]
            return b.shuffle_vector(value, value, ir.Constant(vec(half, I32), list(range(first, first + half))))

        for start in (0, outputs - half):
            # output start + k: lane start + k before the gap, start + k + d after it
            before = b.icmp_signed("<", b.add(lanes, ir.Constant(vec(half, I32), [start] * half)), limit)
            kb.vstore(b.select(before, window(start), window(start + d)), kb.at(ptr, start))


def _epilogue(kb: KernelBuilder, spec: GemmSpec, tile: _TileIO, acc, i: int, j: int, r, bias):  # type: ignore[no-untyped-def]
    if spec.bias == "row":
        acc = kb.b.fadd(acc, kb.splat(kb.b.load(kb.at(bias, tile.row(i, 1)))))
    elif spec.bias == "col":
        acc = kb.b.fadd(acc, kb.vload(kb.at(bias, j * VW), mask=tile.masks[j]))
    residual = tile.load(r, i, j) if spec.epilogue.residual else None
    return apply_epilogue(kb, spec.epilogue, acc, residual)


def b_copy_floats(spec: GemmSpec) -> int:
    """Floats of a `b_blocks` GEMM's copy of one block of B."""
    return NC_PANELS * spec.kc * NR


def gemm_kernel(module: ir.Module, spec: GemmSpec, name: str) -> None:
    """The threaded kernel: args A, B, C, [bias], [residual], [K (`k_arg`, see `runtime_k`)],
    [workspace (`b_blocks` with `workspace`: `workspace_bytes`)]."""
    if spec.a_panel and spec.shifted is None and not spec.batches:
        module.unroll = UNROLL_PLAIN  # type: ignore[attr-defined]
    elif spec.m == 1 and not spec.batches:
        module.unroll = UNROLL_ONE_ROW  # type: ignore[attr-defined]
    variants = _variants(module, spec, name)
    kb = KernelBuilder(module, name)
    args = [kb.slot(i) for i in range(3)]
    extra = 3
    bias = kb.slot(extra) if spec.bias != "none" else ir.Constant(ir.PointerType(F32), None)
    extra += spec.bias != "none"
    res = kb.slot(extra) if spec.epilogue.residual else ir.Constant(ir.PointerType(F32), None)
    extra += spec.epilogue.residual
    k = kb.b.load(kb.slot(extra, I64)) if spec.k_arg else spec.k
    extra += spec.k_arg
    if spec.b_blocks and spec.workspace:  # this chunk's copy of one block of B (`_pack_block`), in the workspace
        kb.b_copy = kb.at(kb.slot(extra), kb.b.mul(kb.tid, i64(b_copy_floats(spec))))  # type: ignore[attr-defined]
    elif spec.b_blocks:  # ... on the stack
        block = kb.b.alloca(ir.ArrayType(F32, b_copy_floats(spec)))
        if B_COPY_ALIGN:
            block.align = B_COPY_ALIGN
        kb.b_copy = kb.b.bitcast(block, ir.PointerType(F32))  # type: ignore[attr-defined]
    if spec.c_offset:
        args[2] = kb.at(args[2], spec.c_offset)
        res = kb.at(res, spec.c_offset) if spec.epilogue.residual else res
    _batched(kb, spec, variants, list(spec.batches), *args, bias, res, k, split=spec.split_batches)
    kb.finish()


def _variants(module: ir.Module, spec: GemmSpec, name: str) -> dict[tuple[int, bool], ir.Function]:
    """The micro-kernels a GEMM of `spec` calls, by (rows, masked along n)."""
    m_full, m_tail = divmod(spec.m, spec.rows)
    n_full, n_tail = divmod(spec.n, NR)
    variants = {}
    tail_rows = m_tail if merges_tail_rows(spec) else 0
    for rows in {MR} if tail_rows else {spec.rows, m_tail} - {0}:
        # a shifted B has no tail variant: its tile IO masks every vector, and its loads
        # past the last position stay inside the padded input's slack
        for masked in {False} if spec.shifted else {False, n_tail > 0} if n_full else {True}:
            variants[rows, masked] = micro_kernel(module, spec, f"{name}.u{rows}{'m' if masked else ''}", rows, masked, tail_rows)
    return variants


def inline_gemm(kb: KernelBuilder, spec: GemmSpec, name: str, a: ir.Value, b: ir.Value, c: ir.Value) -> None:
    """One whole GEMM of `spec` (no bias, residual or batch levels) on the calling thread,
    emitted inside another kernel at the builder's position (the fused attention kernel's
    blocks); `name` prefixes its micro-kernels, unique in the module."""
    assert spec.bias == "none" and not spec.epilogue.residual and not spec.batches and spec.shifted is None and not spec.b_blocks
    null = ir.Constant(ir.PointerType(F32), None)
    blocks, panels = -(-spec.m // MR), -(-spec.n // NR)
    _rect(kb, spec, _variants(kb.module, spec, name), (i64(0), i64(panels)), (i64(0), i64(blocks)), a, b, c, null, null, spec.k)


def _batched(kb: KernelBuilder, spec: GemmSpec, variants, levels, a, b, c, bias, res, k, split: bool = False) -> None:  # type: ignore[no-untyped-def]
    """The batch loops around the tiles; `split`: threads take whole GEMMs of this level.
    `k`: K, an int or (`GemmSpec.k_arg`) the run-time value."""
    if not levels:
        _tiles(kb, spec, variants, a, b, c, bias, res, k)
        return
    level, rest = levels[0], levels[1:]
    start, stop = kb.partition(level.count) if split else (0, level.count)
    tid, nth = kb.tid, kb.nth
    if split:  # the GEMMs inside run whole, as if on one thread
        kb.tid, kb.nth = i64(0), i64(1)
    with kb.loop(start, stop, name="batch") as i:
        def off(ptr, stride):  # type: ignore[no-untyped-def]
            return kb.at(ptr, kb.mul(i, stride)) if stride else ptr
        _batched(kb, spec, variants, rest, off(a, level.a), off(b, level.b), off(c, level.c),
                 off(bias, level.bias) if spec.bias != "none" else bias,
                 off(res, level.c) if spec.epilogue.residual else res, k)
    kb.tid, kb.nth = tid, nth


def largest_share(total: int, unit: int, threads: int = BALANCE_THREADS) -> float:
    """The largest fraction of `total` (cut in blocks of `unit`, the last one partial) that
    `KernelBuilder.partition` gives one of `threads` threads."""
    blocks = -(-total // unit)
    cuts = [min(blocks * t // threads * unit, total) for t in range(threads + 1)]
    return max(b - a for a, b in zip(cuts, cuts[1:])) / total


def splits_columns(m: int, n: int, rows: int = MR) -> bool:
    """Threads split the N panels when there are many (>= 8) or one M block, or when that
    splits more evenly than the M blocks: at 14x14, 196 columns are 32+32+32 | 32+32+32+4
    (51%) where a 64-row layer's blocks are 12+12+12 | 12+12+4 (56%); a thread then also
    reads only its own columns of B instead of all of it."""
    n_panels, m_blocks = -(-n // NR), -(-m // rows)
    if n_panels >= 8 or m_blocks == 1:
        return True
    return largest_share(n, NR) < largest_share(m, rows)


def _tiles(kb: KernelBuilder, spec: GemmSpec, variants, a, b, c, bias, res, k) -> None:  # type: ignore[no-untyped-def]
    """This thread's share of one GEMM: M blocks, or a run of (panel, M block) tiles."""
    m_blocks, n_panels = spec.m_blocks, -(-spec.n // NR)
    if not splits_columns(spec.m, spec.n, spec.rows):
        _rect(kb, spec, variants, (i64(0), i64(n_panels)), kb.partition(m_blocks), a, b, c, bias, res, k)
        return
    bld = kb.b
    (pa, ma), (pb, mb) = (_column_cut(kb, spec, t) for t in (kb.tid, bld.add(kb.tid, i64(1))))
    one_panel = bld.icmp_signed("==", pa, pb)
    head = bld.zext(bld.or_(bld.icmp_signed(">", ma, i64(0)), one_panel), I64)
    tail = bld.zext(bld.and_(bld.icmp_signed(">", mb, i64(0)), bld.not_(one_panel)), I64)
    # the three runs (the head panel's last M blocks, whole panels, the tail panel's first
    # M blocks) are one loop around one `_rect`: each of its micro-kernel calls is inlined
    # once, not three times (a third of the GEMM modules' LLVM time)
    full = i64(m_blocks)
    runs = [
        ((pa, bld.add(pa, head)), (ma, bld.select(one_panel, mb, full))),
        ((bld.add(pa, head), pb), (i64(0), full)),
        ((pb, bld.add(pb, tail)), (i64(0), mb)),
    ]
    with kb.loop(0, len(runs), name="run") as run:
        def pick(values):  # type: ignore[no-untyped-def]
            out = values[-1]
            for index in range(len(values) - 2, -1, -1):
                out = bld.select(bld.icmp_signed("==", run, i64(index)), values[index], out)
            return out
        bounds = [pick([r[side][end] for r in runs]) for side in (0, 1) for end in (0, 1)]
        _rect(kb, spec, variants, (bounds[0], bounds[1]), (bounds[2], bounds[3]), a, b, c, bias, res, k)


def _column_cut(kb: KernelBuilder, spec: GemmSpec, t):  # type: ignore[no-untyped-def]
    """(panel, M block) where thread t's run of tiles starts, in panel-major order.

    Tiles are weighed by their vectors (a masked tail panel of 4 columns does one of two),
    so that at 14x14 (7 panels, the last 4 columns wide, 22 M blocks) the threads do 142
    and 144 vector-blocks where whole panels split 3 | 4 (ResNet-50 on 2 threads: 29.0 -> 28.6 ms,
    three alternating runs, once Winograd GEMMs of 196 and 784 columns were among them).
    """
    bld = kb.b
    m_blocks = spec.m_blocks
    full_panels = spec.n // NR
    tail_vectors = 0 if spec.n % NR == 0 else NV if spec.shifted else -(-(spec.n % NR) // VW)
    total = (full_panels * NV + tail_vectors) * m_blocks
    target = bld.sdiv(bld.mul(i64(total), t), kb.nth)
    in_full = bld.icmp_signed("<", target, i64(full_panels * NV * m_blocks))
    panel = bld.select(in_full, bld.sdiv(target, i64(NV * m_blocks)), i64(full_panels))
    rest = bld.sub(target, bld.mul(panel, i64(NV * m_blocks)))
    block = bld.sdiv(rest, i64(NV)) if not tail_vectors else bld.select(
        in_full, bld.sdiv(rest, i64(NV)), bld.sdiv(rest, i64(tail_vectors)))
    return panel, block


def _rect(kb: KernelBuilder, spec: GemmSpec, variants, panels, blocks, a, b, c, bias, res, k) -> None:  # type: ignore[no-untyped-def]
    """The tiles of panels [p0, p1) x M blocks [m0, m1): NC blocks of panels, K blocks, M blocks, panels."""
    (p0, p1), (m0, m1) = panels, blocks
    bld = kb.b
    with kb.loop(p0, p1, NC_PANELS, name="nc") as nc0:
        nc1 = kb.min(bld.add(nc0, i64(NC_PANELS)), p1)
        k_value = k if isinstance(k, ir.Value) else i64(k)
        with kb.loop(0, k_value, spec.kc, name="kb") as k0:
            kc = kb.min(i64(spec.kc), bld.sub(k_value, k0))
            if spec.one_k_block:
                first = last = ir.Constant(I1, 1)
            else:
                first = bld.icmp_signed("==", k0, i64(0))
                last = bld.icmp_signed(">=", bld.add(k0, i64(spec.kc)), k_value)
            if spec.b_blocks:
                _pack_block(kb, spec, b, nc0, nc1, k0, kc)
            with kb.loop(m0, m1, name="mb") as mb:
                full_rows = bld.icmp_signed("<", mb, i64(spec.m // spec.rows))
                if merges_tail_rows(spec):  # one micro-kernel for all blocks, told which is short
                    _panels(kb, spec, variants, MR, mb, nc0, nc1, k0, kc, first, last, a, b, c, bias, res, k, full_rows)
                else:
                    for rows in sorted({r for r, _ in variants}, reverse=True):
                        cond = full_rows if rows == spec.rows else bld.not_(full_rows)
                        with kb.if_(cond):
                            _panels(kb, spec, variants, rows, mb, nc0, nc1, k0, kc, first, last, a, b, c, bias, res, k)


def _panels(kb, spec, variants, rows, mb, nc0, nc1, k0, kc, first, last, a, b, c, bias, res, k, full_rows=None) -> None:  # type: ignore[no-untyped-def]
    bld = kb.b
    a_tile = kb.at(a, spec.a_block(mb, k0, kc, kb))
    row0 = bld.mul(mb, i64(spec.rows))
    bias_row = kb.at(bias, row0) if spec.bias == "row" else bias
    loop_count = bld.udiv(kc, i64(spec.shifted.taps)) if spec.shifted else kc
    with kb.loop(nc0, nc1, name="pn") as pn:
        n0 = bld.mul(pn, i64(NR))
        c_off = bld.mul(row0, i64(spec.ldc))
        if spec.shifted is None:
            c_off = bld.add(c_off, n0)
        ncount = bld.sub(i64(spec.n), n0)
        args = [
            a_tile,
            kb.at(kb.b_copy, bld.mul(bld.sub(pn, nc0), i64(spec.kc * NR))) if spec.b_blocks else kb.at(b, spec.b_block(pn, k0, kb, k)),  # type: ignore[attr-defined]
            kb.at(c, c_off),
            kb.at(res, c_off) if spec.epilogue.residual else res,
            kb.at(bias, n0) if spec.bias == "col" else bias_row,
            loop_count, first, last, ncount,
        ] + ([full_rows] if full_rows is not None else [])
        masked_fn = variants.get((rows, True))
        full_fn = variants.get((rows, False))
        if full_fn is None:
            bld.call(masked_fn, args)
        elif masked_fn is None:
            bld.call(full_fn, args)
        else:
            is_full = bld.icmp_signed(">=", ncount, i64(NR))
            with bld.if_else(is_full) as (then, otherwise):
                with then:
                    bld.call(full_fn, args)
                with otherwise:
                    bld.call(masked_fn, args)


def _pack_block(kb: KernelBuilder, spec: GemmSpec, b, nc0, nc1, k0, kc) -> None:  # type: ignore[no-untyped-def]
    """Copy B's rows [k0, k0 + kc) of panels [nc0, nc1) into the thread's stack block
    (`GemmSpec.b_blocks`): panel i at i * kc_max * NR, row r at r * NR; the last panel's
    columns past n are zeros. Row-major: each row's panels are one contiguous run of the
    source (a panel's K rows would be a line per page), prefetched `B_PREFETCH_ROWS` ahead."""
    bld = kb.b
    n_full, n_tail = divmod(spec.n, NR)
    full_end = kb.min(nc1, i64(n_full))
    ahead = B_PREFETCH_ROWS * spec.ldb
    with kb.loop(0, kc, name="pk") as r:
        src = kb.at(b, bld.add(bld.mul(bld.add(k0, r), i64(spec.ldb)), bld.mul(nc0, i64(NR))))
        dst = kb.at(kb.b_copy, bld.mul(r, i64(NR)))  # type: ignore[attr-defined]
        with kb.loop(0, bld.sub(full_end, nc0), name="pkn") as i:
            row, out = kb.at(src, bld.mul(i, i64(NR))), kb.at(dst, bld.mul(i, i64(spec.kc * NR)))
            for part in range(0, NR, VW):
                if part % LINE_FLOATS == 0:
                    kb.prefetch(kb.at(row, ahead + part))
                kb.vstore(kb.vload(kb.at(row, part)), kb.at(out, part))
        if n_tail:
            with kb.if_(bld.icmp_signed(">", nc1, i64(n_full))):
                last = bld.sub(i64(n_full), nc0)
                row, out = kb.at(src, bld.mul(last, i64(NR))), kb.at(dst, bld.mul(last, i64(spec.kc * NR)))
                for part in range(0, NR, VW):
                    value = kb.vload(kb.at(row, part), mask=kb.mask(n_tail - part) if n_tail - part < VW else None) if n_tail > part else kb.vconst(0.0)
                    kb.vstore(value, kb.at(out, part))
