"""Scaled dot-product attention in blocks of query rows, without the whole score tensor.

For each (batch, block of R query rows) unit, on one thread:

    S_blk  = q[rows] @ kT                       (GEMM core into a block [R, S] of the chunk's workspace)
    S_blk  = exp(S_blk * scale + mask - rowmax)  (two passes over the L2-resident block)
    out[rows] = (S_blk @ v) / rowsum             (GEMM core, then R x Dv multiplies)

The scores of one block ([R, S], at most `BLOCK_FLOATS`) stay in L1/L2 between the two
GEMMs, where the unfused lowering wrote [batch, L, S] scores, scaled them into a second
buffer and took the softmax into a third (Whisper-base: 72 MB each, read and written by
three phases per layer). The normalisation by the row sum is applied to the R x Dv output
rows instead of the R x S probabilities. Threads split the units.

With `PACK_KEYS` the kernel reads k itself ([batch, S, D], not a kT copy) and transposes
one batch's keys into NR-column panels in its workspace ([S/NR][D][NR], keys past S zero) when
its unit starts a new batch: the scores GEMM reads B as sequential aligned panels, and the
model has no kT phase (onnxruntime's fused MatMul packs its transposed B the same way). With
`WHOLE_ROWS` the block's rows are S rounded up to whole vectors: the columns past S are
-inf logits (exp 0), so the softmax passes and the scores GEMM's stores have no masked
tail; the output GEMM reads the first S columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.gemm import MR, NR, GemmSpec, inline_gemm
from irforge.backends.cpu.codegen.irutil import F32, I64, VW, KernelBuilder, i64, vec
from irforge.backends.cpu.codegen.mathfn import exp_nonpositive, vector_exp

BLOCK_FLOATS = 65536
"""Floats of one block of scores (256 KiB of the chunk's workspace (`WORKSPACE`), half this
host's 512 KiB L2)."""
ROWS_MAX = 512
"""Query rows per block at most (a whole head of BERT's 128 or ViT's 197 rows)."""
LEAN_EXP = True
"""A row whose maximum is finite takes `exp_nonpositive` (its entries minus the maximum are
<= 0, none NaN); other rows keep `vector_exp`'s limits (A/B switch)."""
PACK_KEYS = True
"""The kernel packs each batch's keys into NR-column panels itself (no kT copy phase) where
they fit in `PACKED_KEYS_MAX` (A/B switch; False: the kT copy, read as rows)."""
PACKED_KEYS_MAX = 98304
"""Floats of one batch's packed keys at most (384 KiB: S = 1536 at D = 64, 768 at D = 128;
with the scores block ~640 KiB per chunk, in the workspace: as a stack frame it crashed
callers on small-stack threads, session 15). Was 32768 (S = 512): Whisper-base's 1500 keys kept the kT copy and read it as rows
1500 floats apart; packed, its attention phases 64.1 -> 60.3 ms and the model 0.973x
(`bench/cpu_knob_ab.py whisper_base_encoder ...attention:PACKED_KEYS_MAX --a 32768 --b 131072
--runs 9 --cpu-time --phases attention`, session 14)."""
WHOLE_ROWS = True
"""The block's rows are whole vectors, the columns past S -inf logits (A/B switch)."""
HEADS_ROWS = True
"""Where a [B, H, L, Dv] output's one user is the merged-heads output projection
(`linear.merges_heads`), the kernel writes it as [B, L, H, Dv] rows (`AttentionSpec.heads`)
and that projection is one plain GEMM of K = H * Dv in its usual K blocks, not one block of
Dv per head (A/B switch; False: [B, H, L, Dv] as the op says), where a block's output rows
fit in `STAGED_MAX` floats on the stack."""
WORKSPACE = True
"""The scores block, the staged output rows and the packed keys lie in the executable's
per-chunk workspace (`Lowering.workspace`, after the arena), not in the kernel's stack frame
(A/B switch; False: the frame, ~640 KiB for Whisper's 1500 keys: a caller running the model
on a thread of a 256 KiB stack crashed)."""
STAGED_MAX = 16384
"""Floats of one block's output rows staged on the stack for `HEADS_ROWS` at most (64 KiB:
BERT's 128 x 64, Whisper's 42 x 64)."""


@dataclass(frozen=True)
class AttentionSpec:
    batch: int
    """the scores' batch axes, flattened (q, k, v and out share them, unbroadcast)"""
    l: int
    s: int
    d: int
    dv: int
    scale: float
    rows: int
    """query rows per block (`block_rows`)"""
    mask: tuple[tuple[int, int], ...] | None = None
    """an f32 mask added to the scores: (size, element stride) per batch axis of the scores,
    then the row axis's (L, stride); its last axis runs along S with stride 1. None: none."""
    packed_keys: bool = False
    """the second argument is k [batch, S, D], packed by the kernel (`PACK_KEYS`); else kT"""
    stride: int = 0
    """floats per row of the scores block: S, or S rounded up to whole vectors (`WHOLE_ROWS`)"""
    fill: float | None = None
    """the op's `fill`: a key whose mask value is at or below it takes that value as its logit
    (None: the mask is added)"""
    heads: int = 0
    """H > 0: the output is written as [B, L, H, Dv] rows, the batch index being b * H + h
    (`HEADS_ROWS`); 0: [batch, L, Dv]"""

    nan_to_zero: bool = False
    """NaN outputs are stored as 0 (the exporter's `Where(IsNaN(y), 0, y)` absorbed)"""
    workspace: bool = False
    """the blocks lie in a workspace argument (after the mask), `workspace_floats` per chunk
    (`WORKSPACE`); else on the stack"""

    @property
    def out_stride(self) -> int:
        """Floats from one output row of a head to its next."""
        return self.dv * (self.heads or 1)

    @property
    def ldc(self) -> int:
        return self.stride or self.s

    @property
    def score_columns(self) -> int:
        """Columns the scores GEMM computes: all of the padded row where the keys are packed
        (zero keys past S), else S (kT has no more)."""
        return self.ldc if self.packed_keys else self.s

    @property
    def key_floats(self) -> int:
        """Floats of one batch's packed keys: whole NR panels of D rows."""
        return -(-self.score_columns // NR) * NR * self.d

    def blocks(self) -> list[tuple[str, int]]:
        """The kernel's blocks (name, floats): the scores, the staged output rows (`heads`),
        the packed keys (`packed_keys`)."""
        parts = [("block", self.rows * self.ldc)]
        if self.heads:
            parts.append(("staging", self.rows * self.dv))
        if self.packed_keys:
            parts.append(("panels", self.key_floats))
        return parts

    @property
    def workspace_floats(self) -> int:
        """Floats of one chunk's workspace: the blocks, each on whole cache lines."""
        return sum(-(-floats // 16) * 16 for _, floats in self.blocks())

    def workspace_bytes(self) -> int:
        """Bytes of the per-chunk workspace the kernel takes as its last argument (0: none;
        the lowering passes it to `Lowering.kernel`, and `Lowering.phase` appends the buffer)."""
        return 4 * self.workspace_floats if self.workspace else 0


def row_stride(s: int) -> int:
    """A row of the scores block: S, or S rounded up to whole vectors (`WHOLE_ROWS`)."""
    return -(-s // VW) * VW if WHOLE_ROWS else s


def packs_keys(s: int, d: int) -> bool:
    """Whether the kernel packs the keys itself (`PACK_KEYS`, within `PACKED_KEYS_MAX`)."""
    return PACK_KEYS and -(-row_stride(s) // NR) * NR * d <= PACKED_KEYS_MAX


def block_rows(l: int, s: int) -> int:
    """Rows per block of rows of `s` floats: as many as `BLOCK_FLOATS` holds, a multiple of the
    GEMM's MR, all of L when it fits."""
    rows = min(ROWS_MAX, BLOCK_FLOATS // s)
    if rows >= l:
        return l
    return max(MR, rows // MR * MR)


def _scores_spec(spec: AttentionSpec, rows: int) -> GemmSpec:
    if spec.packed_keys:
        return GemmSpec(m=rows, n=spec.score_columns, k=spec.d, a_panel=False, a_rs=spec.d, a_cs=1, b_panel=True, ldc=spec.ldc)
    return GemmSpec(m=rows, n=spec.s, k=spec.d, a_panel=False, a_rs=spec.d, a_cs=1, ldb=spec.s, ldc=spec.ldc)


def _output_spec(spec: AttentionSpec, rows: int) -> GemmSpec:
    return GemmSpec(m=rows, n=spec.dv, k=spec.s, a_panel=False, a_rs=spec.ldc, a_cs=1, ldb=spec.dv, ldc=spec.dv)


def attention_kernel(module: ir.Module, spec: AttentionSpec, name: str) -> None:
    """args: q [batch, L, D], kT [batch, D, S] (`packed_keys`: k [batch, S, D]), v [batch, S, Dv],
    out [batch, L, Dv] (`heads`: [batch / H, L, H, Dv]), [mask], [workspace (`workspace`)]."""
    kb = KernelBuilder(module, name)
    q, keys, v, out = (kb.slot(i) for i in range(4))
    mask = kb.slot(4) if spec.mask is not None else None
    b = kb.b
    with b.goto_block(kb.fn.entry_basic_block):
        blocks = {}
        if spec.workspace:  # this chunk's slice of the workspace (`WORKSPACE`)
            at = kb.at(kb.slot(4 + (spec.mask is not None)), b.mul(kb.tid, i64(spec.workspace_floats)))
            offset = 0
            for part, floats in spec.blocks():
                blocks[part] = kb.at(at, offset)
                offset += -(-floats // 16) * 16
        else:
            for part, floats in spec.blocks():
                blocks[part] = b.alloca(F32, i64(floats))
                blocks[part].align = 64
        block, staging, panels = blocks["block"], blocks.get("staging"), blocks.get("panels")
        inverse = b.alloca(F32, i64(spec.rows))
        if spec.packed_keys:
            packed = b.alloca(I64)  # the batch whose keys `panels` holds
            b.store(i64(-1), packed)
    per_batch = -(-spec.l // spec.rows)
    full, tail = divmod(spec.l, spec.rows)
    u0, u1 = kb.partition(spec.batch * per_batch)
    with kb.loop(u0, u1, name="unit") as unit:
        bi, blk = b.udiv(unit, i64(per_batch)), b.urem(unit, i64(per_batch))
        row0 = b.mul(blk, i64(spec.rows))
        if spec.packed_keys:
            with kb.if_(b.icmp_signed("!=", b.load(packed), bi)):
                _pack_keys(kb, spec, kb.at(keys, b.mul(bi, i64(spec.s * spec.d))), panels)
                b.store(bi, packed)
            k_block = panels
        else:
            k_block = kb.at(keys, b.mul(bi, i64(spec.d * spec.s)))
        args = (bi, row0, q, k_block, v, out, mask, block, inverse, staging)
        if not tail:
            _unit(kb, spec, spec.rows, *args)
        elif not full:
            _unit(kb, spec, tail, *args)
        else:
            with b.if_else(b.icmp_signed("<", blk, i64(full))) as (then, otherwise):
                with then:
                    _unit(kb, spec, spec.rows, *args)
                with otherwise:
                    _unit(kb, spec, tail, *args)
    kb.finish()


def _pack_keys(kb: KernelBuilder, spec: AttentionSpec, keys, panels) -> None:  # type: ignore[no-untyped-def]
    """panels[p][d][j] = keys[p * NR + j][d] (one batch's key rows of D floats), 0 past S.
    Whole panels in 8 x 8 blocks transposed in registers (`_transpose8`: eight row loads,
    24 shuffles, eight stores) where D is a multiple of 8; the rest (the last, partial
    panel; any D) a gather of VW keys per d (gathers alone made BERT's 128-key attention
    6% slower than the kT copy they replace)."""
    b = kb.b
    whole = spec.s // NR if spec.d % 8 == 0 else 0
    if whole:
        with kb.loop(0, whole * NR, 8, name="pk8") as key0:
            target = kb.at(panels, b.add(b.mul(b.udiv(key0, i64(NR)), i64(NR * spec.d)), b.urem(key0, i64(NR))))
            source = kb.at(keys, b.mul(key0, i64(spec.d)))
            for d0 in range(0, spec.d, 8):
                rows = [kb.vload(kb.at(source, r * spec.d + d0), 8) for r in range(8)]
                for c, column in enumerate(_transpose8(kb, rows)):
                    kb.vstore(column, kb.at(target, (d0 + c) * NR))
    offsets = ir.Constant(vec(VW, I64), [lane * spec.d for lane in range(VW)])
    with kb.loop(whole * NR, spec.key_floats // spec.d, VW, name="pk") as key0:
        lanes = kb.mask(b.sub(i64(spec.s), key0))
        target = kb.at(panels, b.add(b.mul(b.udiv(key0, i64(NR)), i64(NR * spec.d)), b.urem(key0, i64(NR))))
        with kb.loop(0, spec.d, name="pkd") as dd:
            value = kb.gather(kb.at(keys, b.add(b.mul(key0, i64(spec.d)), dd)), offsets, lanes)
            kb.vstore(value, kb.at(target, b.mul(dd, i64(NR))))


def _transpose8(kb: KernelBuilder, rows: list[ir.Value]) -> list[ir.Value]:
    """The columns of an 8 x 8 block given as 8 row vectors: three rounds of the perfect
    shuffle (w[2i], w[2i + 1] = the low and high halves of rows i and i + 4 interleaved)."""
    low = ir.Constant(ir.VectorType(ir.IntType(32), 8), [0, 8, 1, 9, 2, 10, 3, 11])
    high = ir.Constant(ir.VectorType(ir.IntType(32), 8), [4, 12, 5, 13, 6, 14, 7, 15])
    for _ in range(3):
        rows = [kb.b.shuffle_vector(rows[i // 2], rows[i // 2 + 4], high if i % 2 else low) for i in range(8)]
    return rows


def _unit(kb: KernelBuilder, spec: AttentionSpec, rows: int, bi, row0, q, k_block, v, out, mask, block, inverse, staging) -> None:  # type: ignore[no-untyped-def]
    """One block of `rows` query rows starting at `row0` of batch `bi`; `k_block`: its kT
    rows or (`packed_keys`) its packed key panels; `staging`: `rows` x Dv floats (`heads`)."""
    b = kb.b
    q_rows = kb.at(q, b.add(b.mul(bi, i64(spec.l * spec.d)), b.mul(row0, i64(spec.d))))
    inline_gemm(kb, _scores_spec(spec, rows), f"{kb.fn.name}.s{rows}", q_rows, k_block, block)
    mask_rows = _mask_base(kb, spec, bi, row0, mask) if mask is not None else None
    row_step = spec.mask[-1][1] if spec.mask is not None else 0
    with kb.loop(0, rows, name="row") as i:
        row = kb.at(block, b.mul(i, i64(spec.ldc)))
        mask_row = kb.at(mask_rows, b.mul(i, i64(row_step))) if mask_rows is not None else None
        _exp_row(kb, spec, row, mask_row, kb.at(inverse, i))
    if spec.heads:  # [B, L, H, Dv]: batch bi = b * H + h
        head, image = b.urem(bi, i64(spec.heads)), b.udiv(bi, i64(spec.heads))
        first = b.add(b.add(b.mul(image, i64(spec.l * spec.out_stride)), b.mul(row0, i64(spec.out_stride))), b.mul(head, i64(spec.dv)))
    else:
        first = b.add(b.mul(bi, i64(spec.l * spec.dv)), b.mul(row0, i64(spec.dv)))
    out_rows = kb.at(out, first)
    # [B, L, H, Dv]: the GEMM's K blocks accumulate into contiguous rows on the stack (rows
    # H * Dv apart share L1 sets: Whisper's 42 x 64 tile at 2 KiB strides made the kernel 1%
    # slower), the normalisation stores them into place
    staged = staging if spec.heads else out_rows
    inline_gemm(kb, _output_spec(spec, rows), f"{kb.fn.name}.o{rows}", block, kb.at(v, b.mul(bi, i64(spec.s * spec.dv))), staged)
    with kb.loop(0, rows, name="norm") as i:
        factor = kb.splat(b.load(kb.at(inverse, i)))
        source = kb.at(staged, b.mul(i, i64(spec.dv)))
        target = kb.at(out_rows, b.mul(i, i64(spec.out_stride)))
        def normalise(offset, lanes) -> None:  # type: ignore[no-untyped-def]
            value = b.fmul(kb.vload(kb.at(source, offset), mask=lanes), factor)
            if spec.nan_to_zero:
                value = b.select(b.fcmp_unordered("uno", value, value), kb.vconst(0.0), value)
            kb.vstore(value, kb.at(target, offset), lanes)

        _each(kb, spec.dv, normalise)


def _mask_base(kb: KernelBuilder, spec: AttentionSpec, bi, row0, mask):  # type: ignore[no-untyped-def]
    """The mask's element for (batch bi, row row0, column 0): bi split into the batch axes."""
    b = kb.b
    assert spec.mask is not None
    offset: ir.Value = b.mul(row0, i64(spec.mask[-1][1]))
    rest = bi
    for size, stride in reversed(spec.mask[:-1]):
        index = b.urem(rest, i64(size))
        rest = b.udiv(rest, i64(size))
        if stride:
            offset = b.add(offset, b.mul(index, i64(stride)))
    return kb.at(mask, offset)


def _each(kb: KernelBuilder, count: int, body) -> None:  # type: ignore[no-untyped-def]
    """body(offset, lanes) per vector of a row of `count`: whole vectors, then a constant-mask tail."""
    whole = count // VW * VW
    if whole:
        with kb.loop(0, whole, VW, name="v") as j:
            body(j, None)
    if count > whole:
        body(i64(whole), kb.mask(count - whole))


def _exp_row(kb: KernelBuilder, spec: AttentionSpec, row, mask_row, inverse_slot) -> None:  # type: ignore[no-untyped-def]
    """row = exp(row * scale + mask - max) in place; *inverse_slot = 1 / the row's sum."""
    b = kb.b
    scale = kb.vconst(spec.scale)
    with b.goto_block(kb.fn.entry_basic_block):
        acc = b.alloca(vec())

    def walk(body) -> None:  # type: ignore[no-untyped-def]
        """body(offset, lanes, keys) per vector of the row: `lanes` masks its loads and stores
        (None: whole), `keys` its lanes that hold keys (None: all). A padded row (`WHOLE_ROWS`)
        is whole vectors, the last one's lanes past S pad."""
        if spec.ldc == spec.s:
            _each(kb, spec.s, lambda offset, lanes: body(offset, lanes, lanes))
            return
        last = spec.ldc - VW
        _each(kb, last, lambda offset, lanes: body(offset, None, None))
        body(i64(last), None, kb.mask(spec.s - last))

    def fold(combine, fill, fn) -> ir.Value:  # type: ignore[no-untyped-def]
        b.store(kb.vconst(fill), acc)

        def body(offset, lanes, keys) -> None:  # type: ignore[no-untyped-def]
            value = fn(offset, lanes, keys)
            kb.vstore(value, kb.at(row, offset), lanes)
            if lanes is not None:
                value = b.select(lanes, value, kb.vconst(fill))
            b.store(combine(b.load(acc), value), acc)

        walk(body)
        return b.load(acc)

    def logits(offset, lanes, keys) -> ir.Value:  # type: ignore[no-untyped-def]
        value = b.fmul(kb.vload(kb.at(row, offset), mask=lanes), scale)
        if mask_row is not None:
            bias = kb.vload(kb.at(mask_row, offset), mask=keys)
            value = b.fadd(value, bias)
            if spec.fill is not None:  # a key masked by a fill takes it whatever its score
                value = b.select(b.fcmp_ordered("<=", bias, kb.vconst(spec.fill)), bias, value)
        if keys is not None and lanes is None:  # pad lanes: -inf logits, exp 0
            value = b.select(keys, value, kb.vconst(-math.inf))
        return value

    def fmax(a, x):  # type: ignore[no-untyped-def]
        return kb.nan_extreme("fmax", a, x)  # NaN propagates, as in the softmax kernel

    top = kb.hreduce("fmax", fold(fmax, -math.inf, logits))
    finite = b.fcmp_ordered("<", kb.call_unary("fabs", kb.splat(top)), kb.vconst(math.inf))
    shift = b.select(finite, kb.splat(top), kb.vconst(0.0))

    def exps(exp):  # type: ignore[no-untyped-def]
        return fold(b.fadd, 0.0, lambda offset, lanes, keys: exp(kb, b.fsub(kb.vload(kb.at(row, offset), mask=lanes), shift)))

    if LEAN_EXP:
        # a finite maximum (neither inf nor NaN: a NaN entry makes the maximum NaN) bounds
        # every entry minus it to [-inf, 0]: no upper limit, no NaN to keep
        with b.goto_block(kb.fn.entry_basic_block):
            sums = b.alloca(vec())
        bounded = b.and_(b.fcmp_ordered(">", top, ir.Constant(F32, -math.inf)), b.fcmp_ordered("<", top, ir.Constant(F32, math.inf)))
        with b.if_else(bounded) as (then, otherwise):
            with then:
                b.store(exps(exp_nonpositive), sums)
            with otherwise:
                b.store(exps(vector_exp), sums)
        total = b.load(sums)
    else:
        total = exps(vector_exp)
    b.store(b.fdiv(ir.Constant(F32, 1.0), kb.hreduce("fadd", total)), inverse_slot)
