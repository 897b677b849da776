"""The register-blocked, cache-tiled GEMM core (BLIS/oneDNN structure) with a fused epilogue.

C[m, n] = epilogue(sum over k of A(m, k) * B(k, n)) for one or more batches, where

- A(m, k) is read by scalar broadcast: either a panel packed at compile time
  (`a_panel`: per K block of KC, [M/MR][KC][MR] with zero-padded rows, so the K-block-major
  walk over the M blocks reads A as one sequential stream) or any strided matrix (activations of a
  FullyConnected, a transposed MatMul operand);
- B(k, n) is read as vectors of 16 along n: a packed panel ([N/NR][K][NR], zero-padded
  columns, as im2col and packed FC weights are written) or rows of stride `ldb`;
- C has rows of stride `ldc`; the epilogue (bias per row or per column, a residual tensor
  of C's layout, ReLU/Clamp) is applied when the last K block of a tile is stored.

The micro-kernel keeps an MR x NR tile of C in 2*MR zmm registers and does MR*NR/16 FMAs
per k with two vector loads and MR embedded broadcasts. Loops around it tile K by KC (the
A micro-panel stays in L1) and N by NC panels (the B block stays in L2). Threads split the
N panels when there are enough of them or they split more evenly, else the M blocks. The streams the hardware prefetcher
serves late (packed weights from memory, B rows `ldb` apart, FC weights) are prefetched
in software a fixed number of k rows ahead.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from llvmlite import ir

from irforge.backends.cpu.codegen.epilogue import Epilogue, apply_epilogue
from irforge.backends.cpu.codegen.irutil import F32, I1, I64, VOID, VW, KernelBuilder, i64, vec

MR = 12
NR = 32
NV = NR // VW
KC = 384
A_PREFETCH_ROWS = 64
"""Packed weights are read this many k rows (3 KiB) ahead: the K-block-major panels are one
sequential stream, the next M block's micro-panel follows the current one, and layers
whose weights come from memory (ResNet's last stage: 9 MiB for 49 positions) would
otherwise wait on it."""
B_PREFETCH_ROWS = 16
"""B rows read in place (activations of a 1x1 layer, rows `ldb` apart, which the hardware
prefetcher does not follow across pages) and B panels used by one M block only (FC weights)
are prefetched this many k rows ahead."""
NC_PANELS = 8
BALANCE_THREADS = 2
"""The thread count the N-or-M split is balanced for (the kernels run with any)."""


@dataclass(frozen=True)
class Batch:
    """One batch loop level: element offsets added to A, B, C (and R), bias per iteration."""

    count: int
    a: int
    b: int
    c: int
    bias: int = 0


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

    def a_steps(self) -> tuple[int, int]:
        """(row step, k step) inside an A micro-panel."""
        return (1, MR) if self.a_panel else (self.a_rs, self.a_cs)

    def b_kstep(self) -> int:
        return NR if self.b_panel else self.ldb

    def a_block(self, mb: ir.Value, kb: ir.Value, kc: ir.Value, kbld: KernelBuilder) -> ir.Value | int:
        """Element offset of A's micro-panel for row block `mb`, K block at `kb` of `kc` rows."""
        if self.a_panel:
            return kbld.add(kbld.mul(kb, -(-self.m // MR) * MR), kbld.mul(mb, kbld.mul(kc, MR)))
        return kbld.add(kbld.mul(mb, MR * self.a_rs), kbld.mul(kb, self.a_cs))

    def b_block(self, pn: ir.Value, kb: ir.Value, kbld: KernelBuilder) -> ir.Value | int:
        if self.b_panel:
            return kbld.add(kbld.mul(pn, NR * self.k), kbld.mul(kb, NR))
        return kbld.add(kbld.mul(pn, NR), kbld.mul(kb, self.ldb))


def pack_a(weights, rows: int, k: int):  # type: ignore[no-untyped-def]
    """[rows, k] -> the A panel layout: per K block, [ceil(rows/MR)][kc][MR], zero-padded (numpy)."""
    import numpy as np

    blocks = -(-rows // MR)
    padded = np.zeros((blocks * MR, k), np.float32)
    padded[:rows] = weights.reshape(rows, k)
    parts = [padded[:, k0:k0 + KC].reshape(blocks, MR, -1).transpose(0, 2, 1).ravel() for k0 in range(0, k, KC)]
    return np.concatenate(parts)


def pack_b(matrix, k: int, cols: int):  # type: ignore[no-untyped-def]
    """[k, cols] -> the B panel layout [ceil(cols/NR)][k][NR], zero-padded (numpy)."""
    import numpy as np

    panels = -(-cols // NR)
    padded = np.zeros((k, panels * NR), np.float32)
    padded[:, :cols] = matrix.reshape(k, cols)
    return np.ascontiguousarray(padded.reshape(k, panels, NR).transpose(1, 0, 2))


def micro_kernel(module: ir.Module, spec: GemmSpec, name: str, rows: int, masked: bool) -> ir.Function:
    """An MR x NR (or rows x NR, masked along n) tile: acc over kc, then epilogue and store.

    The masked variant serves the last panel only, so it keeps just the vectors that the
    n tail reaches (a tail of 4 columns costs one vector of FMAs per row, not NR/16).
    Arguments: a, b, c, r, bias pointers at the tile origin, kc, first, last, ncount.
    """
    nv = -(-(spec.n % NR) // VW) if masked and spec.n % NR else NV
    p = ir.PointerType(F32)
    fn_type = ir.FunctionType(VOID, [p, p, p, p, p, I64, I1, I1, I64])
    kb = KernelBuilder(module, name, fn_type)
    kb.fn.linkage = "internal"
    a, b_ptr, c, r, bias, kc, first, last, ncount = kb.fn.args
    for arg in (a, b_ptr, c, r, bias):
        arg.add_attribute("noalias")
    bld = kb.b
    masks = [kb.mask(bld.sub(ncount, i64(j * VW))) if masked else None for j in range(nv)]
    a_ms, a_ks = spec.a_steps()
    b_ks = spec.b_kstep()
    zero = kb.vconst(0.0)
    init = []
    for i in range(rows):
        for j in range(nv):
            loaded = kb.vload(kb.at(c, i * spec.ldc + j * VW), mask=masks[j])
            init.append(bld.select(first, zero, loaded))
    pre = bld.block
    head, body, done = (bld.append_basic_block(s) for s in ("k.head", "k.body", "k.done"))
    bld.branch(head)
    bld.position_at_end(head)
    kk = bld.phi(I64, "k")
    kk.add_incoming(i64(0), pre)
    accs = [bld.phi(vec()) for _ in init]
    for phi, value in zip(accs, init):
        phi.add_incoming(value, pre)
    bld.cbranch(bld.icmp_signed("<", kk, kc), body, done)
    bld.position_at_end(body)
    b_row = kb.at(b_ptr, bld.mul(kk, i64(b_ks)))
    bvals = [kb.vload(kb.at(b_row, j * VW), mask=None if spec.b_panel else masks[j]) for j in range(nv)]
    a_row = kb.at(a, bld.mul(kk, i64(a_ks)))
    if spec.a_panel:
        kb.prefetch(kb.at(a_row, A_PREFETCH_ROWS * MR))
    if not spec.b_panel or spec.m <= MR:
        for j in range(nv):
            kb.prefetch(kb.at(b_row, B_PREFETCH_ROWS * b_ks + j * VW))
    new = []
    for i in range(rows):
        av = kb.splat(bld.load(kb.at(a_row, i * a_ms)))
        for j in range(nv):
            new.append(kb.fma(av, bvals[j], accs[i * nv + j]))
    for phi, value in zip(accs, new):
        phi.add_incoming(value, bld.block)
    kk.add_incoming(bld.add(kk, i64(1)), bld.block)
    bld.branch(head)
    bld.position_at_end(done)
    for i in range(rows):
        for j in range(nv):
            acc = accs[i * nv + j]
            out = _epilogue(kb, spec, acc, i, j, r, bias, masks[j])
            kb.vstore(bld.select(last, out, acc), kb.at(c, i * spec.ldc + j * VW), masks[j])
    kb.finish()
    return kb.fn


def _epilogue(kb: KernelBuilder, spec: GemmSpec, acc, i: int, j: int, r, bias, mask):  # type: ignore[no-untyped-def]
    if spec.bias == "row":
        acc = kb.b.fadd(acc, kb.splat(kb.b.load(kb.at(bias, i))))
    elif spec.bias == "col":
        acc = kb.b.fadd(acc, kb.vload(kb.at(bias, j * VW), mask=mask))
    residual = kb.vload(kb.at(r, i * spec.ldc + j * VW), mask=mask) if spec.epilogue.residual else None
    return apply_epilogue(kb, spec.epilogue, acc, residual)


def gemm_kernel(module: ir.Module, spec: GemmSpec, name: str) -> None:
    """The threaded kernel: args A, B, C, [bias], [residual]."""
    m_full, m_tail = divmod(spec.m, MR)
    n_full, n_tail = divmod(spec.n, NR)
    variants = {}
    for rows in {MR, m_tail} - {0}:
        for masked in {False, n_tail > 0} if n_full else {True}:
            variants[rows, masked] = micro_kernel(module, spec, f"{name}.u{rows}{'m' if masked else ''}", rows, masked)
    kb = KernelBuilder(module, name)
    args = [kb.slot(i) for i in range(3)]
    extra = 3
    bias = kb.slot(extra) if spec.bias != "none" else ir.Constant(ir.PointerType(F32), None)
    extra += spec.bias != "none"
    res = kb.slot(extra) if spec.epilogue.residual else ir.Constant(ir.PointerType(F32), None)
    _batched(kb, spec, variants, list(spec.batches), *args, bias, res)
    kb.finish()


def _batched(kb: KernelBuilder, spec: GemmSpec, variants, levels, a, b, c, bias, res) -> None:  # type: ignore[no-untyped-def]
    if not levels:
        _tiles(kb, spec, variants, a, b, c, bias, res)
        return
    level, rest = levels[0], levels[1:]
    with kb.loop(0, level.count, name="batch") as i:
        def off(ptr, stride):  # type: ignore[no-untyped-def]
            return kb.at(ptr, kb.mul(i, stride)) if stride else ptr
        _batched(kb, spec, variants, rest, off(a, level.a), off(b, level.b), off(c, level.c),
                 off(bias, level.bias) if spec.bias != "none" else bias,
                 off(res, level.c) if spec.epilogue.residual else res)


def largest_share(total: int, unit: int, threads: int = BALANCE_THREADS) -> float:
    """The largest fraction of `total` (cut in blocks of `unit`, the last one partial) that
    `KernelBuilder.partition` gives one of `threads` threads."""
    blocks = -(-total // unit)
    cuts = [min(blocks * t // threads * unit, total) for t in range(threads + 1)]
    return max(b - a for a, b in zip(cuts, cuts[1:])) / total


def splits_columns(m: int, n: int) -> bool:
    """Threads split the N panels when there are many (>= 8) or one M block, or when that
    splits more evenly than the M blocks: at 14x14, 196 columns are 32+32+32 | 32+32+32+4
    (51%) where a 64-row layer's blocks are 12+12+12 | 12+12+4 (56%); a thread then also
    reads only its own columns of B instead of all of it."""
    n_panels, m_blocks = -(-n // NR), -(-m // MR)
    if n_panels >= 8 or m_blocks == 1:
        return True
    return largest_share(n, NR) < largest_share(m, MR)


def _tiles(kb: KernelBuilder, spec: GemmSpec, variants, a, b, c, bias, res) -> None:  # type: ignore[no-untyped-def]
    """This thread's share of one GEMM: NC blocks of panels, K blocks, M blocks, panels."""
    m_blocks, n_panels = -(-spec.m // MR), -(-spec.n // NR)
    if splits_columns(spec.m, spec.n):
        (p0, p1), (m0, m1) = kb.partition(n_panels), (i64(0), i64(m_blocks))
    else:
        (p0, p1), (m0, m1) = (i64(0), i64(n_panels)), kb.partition(m_blocks)
    bld = kb.b
    with kb.loop(p0, p1, NC_PANELS, name="nc") as nc0:
        nc1 = kb.min(bld.add(nc0, i64(NC_PANELS)), p1)
        with kb.loop(0, spec.k, KC, name="kb") as k0:
            kc = kb.min(i64(KC), bld.sub(i64(spec.k), k0))
            first = bld.icmp_signed("==", k0, i64(0))
            last = bld.icmp_signed(">=", bld.add(k0, i64(KC)), i64(spec.k))
            with kb.loop(m0, m1, name="mb") as mb:
                full_rows = bld.icmp_signed("<", mb, i64(spec.m // MR))
                for rows in sorted({r for r, _ in variants}, reverse=True):
                    cond = full_rows if rows == MR else bld.not_(full_rows)
                    with kb.if_(cond):
                        _panels(kb, spec, variants, rows, mb, nc0, nc1, k0, kc, first, last, a, b, c, bias, res)


def _panels(kb, spec, variants, rows, mb, nc0, nc1, k0, kc, first, last, a, b, c, bias, res) -> None:  # type: ignore[no-untyped-def]
    bld = kb.b
    a_tile = kb.at(a, spec.a_block(mb, k0, kc, kb))
    row0 = bld.mul(mb, i64(MR))
    bias_row = kb.at(bias, row0) if spec.bias == "row" else bias
    with kb.loop(nc0, nc1, name="pn") as pn:
        n0 = bld.mul(pn, i64(NR))
        c_off = bld.add(bld.mul(row0, i64(spec.ldc)), n0)
        ncount = bld.sub(i64(spec.n), n0)
        args = [
            a_tile,
            kb.at(b, spec.b_block(pn, k0, kb)),
            kb.at(c, c_off),
            kb.at(res, c_off) if spec.epilogue.residual else res,
            kb.at(bias, n0) if spec.bias == "col" else bias_row,
            kc, first, last, ncount,
        ]
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
