"""Reductions over a contiguous block of axes: Reduce, global pooling, SoftMax, MVN, L2
normalisation (Normalize, GRN).

The input is viewed as [outer, R, inner] with the reduction over R. When inner is 1 the
vectors run along R (a 16-lane partial result, then a horizontal reduction); otherwise they
run along inner, 16 independent rows per vector, looping over R with stride inner. Threads
split the (outer, inner chunk) units. `fold` reduces a function of the elements; `map`
rewrites every element of a unit from its value and the unit's statistics.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import VW, KernelBuilder, i64, vec
from irforge.backends.cpu.codegen.mathfn import vector_exp

FILL = {"fadd": 0.0, "fmax": -math.inf, "fmin": math.inf, "fmul": 1.0}


@dataclass(frozen=True)
class RowSpec:
    outer: int
    r: int
    inner: int
    op: str
    """reduce.<operation> | softmax | logsoftmax | mvn | l2norm (x / sqrt(sum x^2 + params[0]))"""
    params: tuple[float, ...] = ()


class Rows:
    """The traversal of one unit (a row, or 16 rows side by side)."""

    def __init__(self, kb: KernelBuilder, spec: RowSpec, src: ir.Value, unit: ir.Value) -> None:
        self.kb, self.spec = kb, spec
        b = kb.b
        self.along_r = spec.inner == 1
        self.unit = unit
        if self.along_r:
            self.offset = b.mul(unit, i64(spec.r))
            self.lanes = None
        else:
            chunks = -(-spec.inner // VW)
            o, i0 = b.udiv(unit, i64(chunks)), b.mul(b.urem(unit, i64(chunks)), i64(VW))
            self.offset = b.add(b.mul(o, i64(spec.r * spec.inner)), i0)
            self.out_offset = b.add(b.mul(o, i64(spec.inner)), i0)
            # every unit is 16 whole lanes when inner is a multiple of 16: no masks at all
            self.lanes = kb.mask(b.sub(i64(spec.inner), i0)) if spec.inner % VW else None
        self.base = kb.at(src, self.offset)

    def _each(self, body: Callable[[ir.Value, ir.Value | None], None]) -> None:
        """body(offset, mask) for each vector of the unit (mask None: all lanes). Along R the
        full vectors run unmasked and the last partial one with a constant mask: a mask
        computed per vector from the remaining count (16 i64 compares) cost more than the
        exp of a softmax row."""
        kb, spec = self.kb, self.spec
        if not self.along_r:
            with kb.loop(0, spec.r, name="r") as j:
                body(kb.b.mul(j, i64(spec.inner)), self.lanes)
            return
        full = spec.r // VW * VW
        if full:
            with kb.loop(0, full, VW, name="r") as j:
                body(j, None)
        if spec.r > full:
            body(i64(full), kb.mask(spec.r - full))

    def fold(self, combine: str, fn: Callable[[ir.Value], ir.Value] = lambda v: v,
             dst: ir.Value | None = None) -> ir.Value:
        """combine over the unit of fn(x); a vector (splat of the total when along R).
        With `dst`, fn(x) is also stored there (X's layout)."""
        kb, b = self.kb, self.kb.b
        slot = _entry_alloca(kb)
        b.store(kb.vconst(FILL[combine]), slot)
        dst_base = kb.at(dst, self.offset) if dst is not None else None

        def body(offset: ir.Value, mask: ir.Value | None) -> None:
            value = fn(kb.vload(kb.at(self.base, offset), mask=mask))
            if dst_base is not None:
                kb.vstore(value, kb.at(dst_base, offset), mask)
            if mask is not None:
                value = b.select(mask, value, kb.vconst(FILL[combine]))
            b.store(_combine(kb, combine, b.load(slot), value), slot)

        self._each(body)
        acc = b.load(slot)
        if not self.along_r:
            return acc
        return kb.splat(kb.hreduce(combine, acc) if combine != "fmul" else _hmul(kb, acc))

    def map(self, dst: ir.Value, fn: Callable[[ir.Value], ir.Value], src: ir.Value | None = None) -> None:
        """dst = fn(x) over the unit; x from `src` (X's layout) instead of X if given."""
        kb = self.kb
        dst_base = kb.at(dst, self.offset)
        src_base = kb.at(src, self.offset) if src is not None else self.base

        def body(offset: ir.Value, mask: ir.Value | None) -> None:
            kb.vstore(fn(kb.vload(kb.at(src_base, offset), mask=mask)), kb.at(dst_base, offset), mask)

        self._each(body)

    def store(self, dst: ir.Value, value: ir.Value) -> None:
        """One result per row of the unit."""
        kb = self.kb
        if self.along_r:
            kb.b.store(kb.b.extract_element(value, ir.Constant(ir.IntType(32), 0)), kb.at(dst, self.unit))
        else:
            kb.vstore(value, kb.at(dst, self.out_offset), self.lanes)


def _entry_alloca(kb: KernelBuilder) -> ir.Value:
    with kb.b.goto_block(kb.fn.entry_basic_block):
        return kb.b.alloca(vec())


def _combine(kb: KernelBuilder, kind: str, a: ir.Value, v: ir.Value) -> ir.Value:
    b = kb.b
    if kind == "fadd":
        return b.fadd(a, v)
    if kind == "fmul":
        return b.fmul(a, v)
    return kb.nan_extreme(kind, a, v)  # NaN propagates, as numpy's max/min do


def _hmul(kb: KernelBuilder, v: ir.Value) -> ir.Value:
    fn = kb.intrinsic(f"llvm.vector.reduce.fmul.v{v.type.count}f32", v.type.element, [v.type.element, v.type])
    return kb.b.call(fn, [ir.Constant(v.type.element, 1.0), v])


def units(spec: RowSpec) -> int:
    return spec.outer if spec.inner == 1 else spec.outer * -(-spec.inner // VW)


def row_kernel(module: ir.Module, spec: RowSpec, name: str) -> None:
    """args: X, out (out has one value per row for reductions, X's shape otherwise)."""
    kb = KernelBuilder(module, name)
    src, dst = kb.slot(0), kb.slot(1)
    u0, u1 = kb.partition(units(spec))
    with kb.loop(u0, u1, name="unit") as unit:
        rows = Rows(kb, spec, src, unit)
        kind = spec.op.split(".")[0]
        if kind == "reduce":
            rows.store(dst, _reduction(kb, rows, spec.op.split(".")[1], spec.r))
        elif kind in ("softmax", "logsoftmax"):
            _softmax(kb, rows, dst, log=kind == "logsoftmax")
        elif kind == "l2norm":
            total = rows.fold("fadd", lambda v: kb.b.fmul(v, v))
            inverse = kb.b.fdiv(kb.vconst(1.0), kb.call_unary("sqrt", kb.b.fadd(total, kb.vconst(spec.params[0]))))
            rows.map(dst, lambda v: kb.b.fmul(v, inverse))
        else:
            _mvn(kb, rows, dst, spec)
    kb.finish()


def _reduction(kb: KernelBuilder, rows: Rows, operation: str, count: int) -> ir.Value:
    b = kb.b
    square = lambda v: b.fmul(v, v)  # noqa: E731
    if operation in ("sum", "mean"):
        total = rows.fold("fadd")
        return b.fdiv(total, kb.vconst(float(count))) if operation == "mean" else total
    if operation in ("max", "min"):
        return rows.fold("f" + operation)
    if operation == "prod":
        return rows.fold("fmul")
    if operation == "l1":
        return rows.fold("fadd", lambda v: kb.call_unary("fabs", v))
    if operation in ("l2", "sum_square"):
        total = rows.fold("fadd", square)
        return kb.call_unary("sqrt", total) if operation == "l2" else total
    if operation == "log_sum":
        return kb.call_unary("log", rows.fold("fadd"))
    shift = _finite_or_zero(kb, rows.fold("fmax"))
    total = rows.fold("fadd", lambda v: vector_exp(kb, b.fsub(v, shift)))
    return b.fadd(kb.call_unary("log", total), shift)


def _finite_or_zero(kb: KernelBuilder, v: ir.Value) -> ir.Value:
    finite = kb.b.fcmp_ordered("<", kb.call_unary("fabs", v), kb.vconst(math.inf))
    return kb.b.select(finite, v, kb.vconst(0.0))


def _softmax(kb: KernelBuilder, rows: Rows, dst: ir.Value, log: bool) -> None:
    b = kb.b
    # a row of -inf keeps its 0 / 0 = NaN; a row holding +inf shifts by it, so inf - inf makes
    # the whole row NaN, as ONNX's x - max(x) defines it (onnxruntime; a NaN guard then sees it)
    peak = rows.fold("fmax")
    shift = b.select(b.fcmp_ordered("==", peak, kb.vconst(-math.inf)), kb.vconst(0.0), peak)
    if log:
        total = rows.fold("fadd", lambda v: vector_exp(kb, b.fsub(v, shift)))
        log_total = kb.call_unary("log", total)
        rows.map(dst, lambda v: b.fsub(b.fsub(v, shift), log_total))
    else:  # the exps go to dst while summed, then are scaled there: one exp per element
        total = rows.fold("fadd", lambda v: vector_exp(kb, b.fsub(v, shift)), dst=dst)
        inverse = b.fdiv(kb.vconst(1.0), total)
        rows.map(dst, lambda v: b.fmul(v, inverse), src=dst)


def _mvn(kb: KernelBuilder, rows: Rows, dst: ir.Value, spec: RowSpec) -> None:
    """params: (normalize_variance, eps, eps outside sqrt)."""
    b = kb.b
    normalize, eps, outside = spec.params
    mean = b.fdiv(rows.fold("fadd"), kb.vconst(float(spec.r)))
    if not normalize:
        rows.map(dst, lambda v: b.fsub(v, mean))
        return
    var = b.fdiv(rows.fold("fadd", lambda v: b.fmul(b.fsub(v, mean), b.fsub(v, mean))), kb.vconst(float(spec.r)))
    if outside:
        denominator = b.fadd(kb.call_unary("sqrt", var), kb.vconst(eps))
    else:
        denominator = kb.call_unary("sqrt", b.fadd(var, kb.vconst(eps)))
    inverse = b.fdiv(kb.vconst(1.0), denominator)
    rows.map(dst, lambda v: b.fmul(b.fsub(v, mean), inverse))
