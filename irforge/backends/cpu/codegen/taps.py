"""Weighted sums of source positions along one axis: interpolation and window sums.

The input is viewed as [outer, n_in, inner] and the output as [outer, n_out, inner], with
out[o, j, i] = sum over taps t of weight[t][j] * in[o, index[t][j], i], where an index of
-1 contributes nothing (a window reaching past the edge). Linear/cubic Resample is one such
pass per resized axis; LRN sums squares over a window with weights 1. The index and weight
tables are compiled into the kernel as constants.

When inner > 1, vectors run along it: with every index valid (Resample) each output vector
is its taps' sum in registers, one store; with -1 indices (LRN windows) one pass per tap
accumulates into the output row. When inner is 1, vectors of the host's width run along j.
Where each block of `lanes` outputs reads a window of at most two vectors of source (any
upsampling), the blocks are unrolled at compile time: per block one or two contiguous loads
at a constant offset and, per tap, a constant shuffle and an FMA with a constant weight
vector (a 21 x 65 x 65 -> 520 x 520 bilinear Resize, whole call with its output copy: 46 ->
8.9 ms against masked 16-lane gathers with i64 indices). Elsewhere (downsampling, windows
with -1 indices), 16 outputs at a time take masked gathers of their taps.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import F32, I32, I64, VW, KernelBuilder, i64, vec

MAX_UNROLLED = 4096
"""Most (block, tap) pairs the windowed path unrolls into one row's code (a 4096-wide output
row with 2 taps at 8 lanes: 1024 shuffles and FMAs, ~10 KiB of code and constants)."""


@dataclass(frozen=True)
class TapSpec:
    outer: int
    n_in: int
    n_out: int
    inner: int
    index: tuple[tuple[int, ...], ...]
    """[taps][n_out] source indices, -1: none"""
    weight: tuple[tuple[float, ...], ...]
    """[taps][n_out]"""
    lanes: int = VW
    """f32 lanes of the host's vector register (8 on AVX2, 16 on AVX-512): the windowed
    path's block width."""


@dataclass(frozen=True)
class Block:
    """`lanes` consecutive outputs of a row read from one window of source elements."""

    base: int
    """the window's first source index"""
    picks: tuple[tuple[int, ...], ...]
    """[taps][lanes] index into the window"""
    weights: tuple[tuple[float, ...], ...]
    """[taps][lanes], 0 past the row's end"""


def window_plan(spec: TapSpec) -> tuple[int, list[Block]] | None:
    """(window, blocks) when every block of `lanes` outputs reads inside `window` (one or two
    vectors) consecutive source elements (a row shorter than one vector: the whole row); None where some block spans more
    (downsampling), an index is -1 (a window sum past the edge) or the row is too long to
    unroll."""
    lanes, taps = spec.lanes, len(spec.index)
    blocks = -(-spec.n_out // lanes)
    if spec.inner != 1 or blocks * taps > MAX_UNROLLED or any(v < 0 for row in spec.index for v in row):
        return None
    for window in (lanes, 2 * lanes):
        if window > max(spec.n_in, lanes):
            return None
        plan: list[Block] = []
        for k in range(blocks):
            js = range(k * lanes, min((k + 1) * lanes, spec.n_out))
            used = [spec.index[t][j] for t in range(taps) for j in js]
            # a row shorter than a vector is read with a masked load from its start
            base = max(0, min(min(used), spec.n_in - window))
            if max(used) - base >= window:
                break
            pad = lanes - len(js)
            plan.append(Block(
                base,
                tuple(tuple(spec.index[t][j] - base for j in js) + (0,) * pad for t in range(taps)),
                tuple(tuple(float(spec.weight[t][j]) for j in js) + (0.0,) * pad for t in range(taps)),
            ))
        else:
            return window, plan
    return None


def _global(module: ir.Module, element: ir.Type, values: list) -> ir.GlobalVariable:  # type: ignore[type-arg]
    array_t = ir.ArrayType(element, len(values))
    table = ir.GlobalVariable(module, array_t, f"taps.{len(module.globals)}")
    table.initializer = ir.Constant(array_t, values)
    table.global_constant = True
    table.linkage = "internal"
    table.align = 64
    return table


def taps_kernel(module: ir.Module, spec: TapSpec, name: str) -> None:
    """args: X, out."""
    kb = KernelBuilder(module, name)
    flat_index = [v for row in spec.index for v in row]
    flat_weight = [float(v) for row in spec.weight for v in row]
    index = kb.b.bitcast(_global(module, I64, flat_index), ir.PointerType(I64))
    weight = kb.b.bitcast(_global(module, F32, flat_weight), ir.PointerType(F32))
    plan = window_plan(spec)
    if plan is not None:
        _along_j_windows(kb, spec, *plan)
    elif spec.inner > 1 and all(v >= 0 for row in spec.index for v in row):
        _along_inner_registers(kb, spec, index, weight)
    elif spec.inner > 1:
        _along_inner(kb, spec, index, weight)
    else:
        _along_j(kb, spec, index, weight)
    kb.finish()


def _along_j_windows(kb: KernelBuilder, spec: TapSpec, window: int, plan: list[Block]) -> None:
    """Each row's blocks unrolled: the window's one or two vectors loaded at a constant
    offset, each tap one constant shuffle of them and an FMA (in tap order, as `_along_j`)."""
    src, dst = kb.slot(0), kb.slot(1)
    b, lanes = kb.b, spec.lanes
    t_vec = vec(lanes)
    r0, r1 = kb.partition(spec.outer)
    with kb.loop(r0, r1, name="row") as o:
        plane = kb.at(src, b.mul(o, i64(spec.n_in)))
        out = kb.at(dst, b.mul(o, i64(spec.n_out)))
        for k, block in enumerate(plan):
            parts = []
            for p in range(window // lanes):
                left = spec.n_in - block.base - p * lanes
                parts.append(kb.vload(kb.at(plane, block.base + p * lanes), lanes, mask=kb.mask(left, lanes) if left < lanes else None))
            second = parts[1] if len(parts) > 1 else ir.Constant(t_vec, ir.Undefined)
            acc = kb.vconst(0.0, lanes)
            for picks, weights in zip(block.picks, block.weights):
                picked = b.shuffle_vector(parts[0], second, ir.Constant(vec(lanes, I32), list(picks)))
                acc = kb.fma(ir.Constant(t_vec, list(weights)), picked, acc)
            count = min(lanes, spec.n_out - k * lanes)
            kb.vstore(acc, kb.at(out, k * lanes), None if count == lanes else kb.mask(count, lanes))


def _along_inner_registers(kb: KernelBuilder, spec: TapSpec, index: ir.Value, weight: ir.Value) -> None:
    """Every index valid: each output vector is its taps' FMAs in registers (tap order, as
    `_along_inner`), stored once."""
    src, dst = kb.slot(0), kb.slot(1)
    b = kb.b
    r0, r1 = kb.partition(spec.outer * spec.n_out)
    full = spec.inner - spec.inner % VW
    with kb.loop(r0, r1, name="row") as row:
        o, j = b.udiv(row, i64(spec.n_out)), b.urem(row, i64(spec.n_out))
        out_row = kb.at(dst, b.mul(row, i64(spec.inner)))
        plane = kb.at(src, b.mul(o, i64(spec.n_in * spec.inner)))
        sources, ws = [], []
        for t in range(len(spec.index)):
            at = b.add(j, i64(t * spec.n_out))
            sources.append(kb.at(plane, b.mul(b.load(kb.at(index, at)), i64(spec.inner))))
            ws.append(kb.splat(b.load(kb.at(weight, at))))
        for lo, hi, masked in ((0, full, False), (full, spec.inner, True)):
            if hi <= lo:
                continue
            with kb.loop(lo, hi, VW, name="i") as i:
                mask = kb.mask(spec.inner - full) if masked else None
                acc = kb.vconst(0.0)
                for source, w in zip(sources, ws):
                    acc = kb.fma(w, kb.vload(kb.at(source, i), mask=mask), acc)
                kb.vstore(acc, kb.at(out_row, i), mask)


def _along_inner(kb: KernelBuilder, spec: TapSpec, index: ir.Value, weight: ir.Value) -> None:
    src, dst = kb.slot(0), kb.slot(1)
    b = kb.b
    r0, r1 = kb.partition(spec.outer * spec.n_out)
    full = spec.inner - spec.inner % VW
    with kb.loop(r0, r1, name="row") as row:
        o, j = b.udiv(row, i64(spec.n_out)), b.urem(row, i64(spec.n_out))
        out_row = kb.at(dst, b.mul(row, i64(spec.inner)))
        plane = kb.at(src, b.mul(o, i64(spec.n_in * spec.inner)))
        _row_pass(kb, spec, out_row, None, None, full)
        for t in range(len(spec.index)):
            at = b.add(j, i64(t * spec.n_out))
            source = b.load(kb.at(index, at))
            with kb.if_(b.icmp_signed(">=", source, i64(0))):
                w = kb.splat(b.load(kb.at(weight, at)))
                _row_pass(kb, spec, out_row, kb.at(plane, b.mul(source, i64(spec.inner))), w, full)


def _row_pass(kb: KernelBuilder, spec: TapSpec, out_row, in_row, w, full: int) -> None:  # type: ignore[no-untyped-def]
    """out_row = 0 (in_row None), else out_row += w * in_row."""
    for lo, hi, masked in ((0, full, False), (full, spec.inner, True)):
        if hi <= lo:
            continue
        with kb.loop(lo, hi, VW, name="i") as i:
            mask = kb.mask(spec.inner - full) if masked else None
            target = kb.at(out_row, i)
            if in_row is None:
                value = kb.vconst(0.0)
            else:
                value = kb.fma(w, kb.vload(kb.at(in_row, i), mask=mask), kb.vload(target, mask=mask))
            kb.vstore(value, target, mask)


def _along_j(kb: KernelBuilder, spec: TapSpec, index: ir.Value, weight: ir.Value) -> None:
    src, dst = kb.slot(0), kb.slot(1)
    b = kb.b
    chunks = -(-spec.n_out // VW)
    u0, u1 = kb.partition(spec.outer * chunks)
    with kb.loop(u0, u1, name="unit") as unit:
        o, j0 = b.udiv(unit, i64(chunks)), b.mul(b.urem(unit, i64(chunks)), i64(VW))
        lanes = kb.mask(b.sub(i64(spec.n_out), j0))
        plane = kb.at(src, b.mul(o, i64(spec.n_in)))
        acc = kb.vconst(0.0)
        for t in range(len(spec.index)):
            at = b.add(j0, i64(t * spec.n_out))
            source = kb.vload(kb.at(index, at), mask=lanes, fill=-1)
            valid = b.and_(lanes, b.icmp_signed(">=", source, kb.vconst(0, VW, I64)))
            values = kb.gather(plane, source, valid)
            acc = kb.fma(kb.vload(kb.at(weight, at), mask=lanes), values, acc)
        kb.vstore(acc, kb.at(dst, b.add(b.mul(o, i64(spec.n_out)), j0)), lanes)
