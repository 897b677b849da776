"""Weighted sums of source positions along one axis: interpolation and window sums.

The input is viewed as [outer, n_in, inner] and the output as [outer, n_out, inner], with
out[o, j, i] = sum over taps t of weight[t][j] * in[o, index[t][j], i], where an index of
-1 contributes nothing (a window reaching past the edge). Linear/cubic Resample is one such
pass per resized axis; LRN sums squares over a window with weights 1. The index and weight
tables are compiled into the kernel as constants.

When inner > 1, vectors run along it (contiguous loads of whole source rows, one pass per
tap, accumulating into the output row, which stays in L1); when inner is 1, vectors run
along j, 16 outputs at a time, with masked gathers of their taps.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import F32, I64, VW, KernelBuilder, i64


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
    if spec.inner > 1:
        _along_inner(kb, spec, index, weight)
    else:
        _along_j(kb, spec, index, weight)
    kb.finish()


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
