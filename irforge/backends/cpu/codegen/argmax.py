"""ArgMax/ArgMin over one axis of an f32 tensor viewed as [outer, R, inner], i64 result.

Lanes run along inner (16 independent rows per vector) when it is larger than 1, else one
row at a time. A running best value and index per lane are updated with numpy's rules:
the first extreme wins (the last with select_last_index), and a NaN beats any number
(numpy's argmax returns the first NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import I64, VW, KernelBuilder, i64, vec


@dataclass(frozen=True)
class ArgSpec:
    outer: int
    r: int
    inner: int
    mode: str
    """max | min"""
    last: bool


def _better(kb: KernelBuilder, spec: ArgSpec, v: ir.Value, best: ir.Value) -> ir.Value:
    b = kb.b
    nan_v = b.fcmp_unordered("uno", v, v)
    if spec.last:
        return b.or_(b.fcmp_ordered(">=" if spec.mode == "max" else "<=", v, best), nan_v)
    number_best = b.fcmp_ordered("ord", best, best)
    return b.or_(b.fcmp_ordered(">" if spec.mode == "max" else "<", v, best), b.and_(nan_v, number_best))


def argmax_kernel(module: ir.Module, spec: ArgSpec, name: str) -> None:
    """args: X, out (i64)."""
    kb = KernelBuilder(module, name)
    src, dst = kb.slot(0), kb.slot(1, I64)
    b = kb.b
    n = VW if spec.inner > 1 else 1
    chunks = -(-spec.inner // n)
    with b.goto_block(kb.fn.entry_basic_block):
        best_slot, index_slot = b.alloca(vec(n)), b.alloca(vec(n, I64))
    u0, u1 = kb.partition(spec.outer * chunks)
    with kb.loop(u0, u1, name="unit") as unit:
        o, i0 = b.udiv(unit, i64(chunks)), b.mul(b.urem(unit, i64(chunks)), i64(n))
        lanes = kb.mask(b.sub(i64(spec.inner), i0), n)
        base = kb.at(src, b.add(b.mul(o, i64(spec.r * spec.inner)), i0))
        b.store(kb.vload(base, n, mask=lanes), best_slot)
        b.store(kb.vconst(0, n, I64), index_slot)
        with kb.loop(1, spec.r, name="k") as k:
            v = kb.vload(kb.at(base, b.mul(k, i64(spec.inner))), n, mask=lanes)
            best = b.load(best_slot)
            better = _better(kb, spec, v, best)
            b.store(b.select(better, v, best), best_slot)
            b.store(b.select(better, kb.splat(k, n), b.load(index_slot)), index_slot)
        kb.vstore(b.load(index_slot), kb.at(dst, b.add(b.mul(o, i64(spec.inner)), i0)), lanes)
    kb.finish()
