"""Vector expressions on non-f32 lanes: integer arithmetic, comparisons, logic, Convert and
Select (the f32 ones are in `mathfn`).

Element types are named as in the weights format: f32, f16, i8, i32, i64, and bool (stored
one byte per element, computed as i1 lanes: `pointwise` converts on load and store).
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import F16, F32, F64, I1, I8, I32, I64, KernelBuilder, itemsize

ELEMENT: dict[str, ir.Type] = {"f32": F32, "f16": F16, "f64": F64, "i8": I8, "i32": I32, "i64": I64, "bool": I8}
FLOATS = frozenset({"f16", "f32", "f64"})
"""storage type of each element type name"""

_ORDER = {"equal": "==", "not_equal": "!=", "less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">="}


def is_float(v: ir.Value) -> bool:
    return isinstance(v.type.element, ir.FloatType | ir.HalfType | ir.DoubleType)


def compare(kb: KernelBuilder, operation: str, a: ir.Value, b: ir.Value) -> ir.Value:
    """numpy's comparisons: false with a NaN operand, except not_equal (true)."""
    if is_float(a):
        if operation == "not_equal":
            return kb.b.fcmp_unordered("!=", a, b)
        return kb.b.fcmp_ordered(_ORDER[operation], a, b)
    if a.type.element == I1:
        a, b = kb.b.zext(a, ir.VectorType(I8, a.type.count)), kb.b.zext(b, ir.VectorType(I8, b.type.count))
    return kb.b.icmp_signed(_ORDER[operation], a, b)


def _safe_divisor(kb: KernelBuilder, a: ir.Value, b: ir.Value) -> tuple[ir.Value, ir.Value, ir.Value]:
    """b with 0 and -1 replaced by 1 (x86 division traps on both: by zero, and MIN / -1),
    and the masks of those lanes."""
    zero, minus_one = kb.vconst(0, a.type.count, a.type.element), kb.vconst(-1, a.type.count, a.type.element)
    is_zero, is_minus = kb.b.icmp_signed("==", b, zero), kb.b.icmp_signed("==", b, minus_one)
    one = kb.vconst(1, a.type.count, a.type.element)
    return kb.b.select(kb.b.or_(is_zero, is_minus), one, b), is_zero, is_minus


def _int_div(kb: KernelBuilder, a: ir.Value, b: ir.Value, kind: str) -> ir.Value:
    """Truncating division (div), its remainder (mod) or the floor remainder (floor_mod);
    a zero divisor gives 0, as numpy's integer division does."""
    bld = kb.b
    safe, is_zero, is_minus = _safe_divisor(kb, a, b)
    zero = kb.vconst(0, a.type.count, a.type.element)
    if kind == "div":
        value = bld.select(is_minus, bld.sub(zero, a), bld.sdiv(a, safe))
        return bld.select(is_zero, zero, value)
    r = bld.select(is_minus, zero, bld.srem(a, safe))
    if kind == "floor_mod":
        fix = bld.and_(bld.icmp_signed("!=", r, zero), bld.xor(bld.icmp_signed("<", r, zero), bld.icmp_signed("<", b, zero)))
        r = bld.select(fix, bld.add(r, b), r)
    return bld.select(is_zero, zero, r)


def _imax(kb: KernelBuilder, a: ir.Value, b: ir.Value, op: str) -> ir.Value:
    return kb.b.select(kb.b.icmp_signed(op, a, b), a, b)


INT_BINARY: dict[str, Callable[[KernelBuilder, ir.Value, ir.Value], ir.Value]] = {
    "sum": lambda kb, a, b: kb.b.add(a, b),
    "sub": lambda kb, a, b: kb.b.sub(a, b),
    "mul": lambda kb, a, b: kb.b.mul(a, b),
    "div": lambda kb, a, b: _int_div(kb, a, b, "div"),
    "mod": lambda kb, a, b: _int_div(kb, a, b, "mod"),
    "floor_mod": lambda kb, a, b: _int_div(kb, a, b, "floor_mod"),
    "max": lambda kb, a, b: _imax(kb, a, b, ">="),
    "min": lambda kb, a, b: _imax(kb, a, b, "<="),
    "squared_diff": lambda kb, a, b: kb.b.mul(kb.b.sub(a, b), kb.b.sub(a, b)),
}

FLOAT_BINARY: dict[str, Callable[[KernelBuilder, ir.Value, ir.Value], ir.Value]] = {
    "sum": lambda kb, a, b: kb.b.fadd(a, b),
    "sub": lambda kb, a, b: kb.b.fsub(a, b),
    "mul": lambda kb, a, b: kb.b.fmul(a, b),
    "div": lambda kb, a, b: kb.b.fdiv(a, b),
    "max": lambda kb, a, b: kb.b.select(kb.b.fcmp_ordered(">=", a, b), a, b),
    "min": lambda kb, a, b: kb.b.select(kb.b.fcmp_ordered("<=", a, b), a, b),
    "squared_diff": lambda kb, a, b: kb.b.fmul(kb.b.fsub(a, b), kb.b.fsub(a, b)),
}
"""Arithmetic of float element types other than f32 (f64: TensorFlow graphs that Cast to
float64), in that type: no narrowing."""

LOGIC: dict[str, Callable[[KernelBuilder, ir.Value, ir.Value], ir.Value]] = {
    "and": lambda kb, a, b: kb.b.and_(a, b),
    "or": lambda kb, a, b: kb.b.or_(a, b),
    "xor": lambda kb, a, b: kb.b.xor(a, b),
}

CONVERTIBLE = frozenset({"f32", "f16", "f64", "i8", "i32", "i64", "bool"})


def convert(kb: KernelBuilder, x: ir.Value, to: str) -> ir.Value:
    """x (lanes of f32/f16/iN/i1) as `to`: float -> int truncates toward zero, anything ->
    bool is != 0 (NaN is true), bool -> number is 0 or 1."""
    b = kb.b
    n = x.type.count
    src = x.type.element
    if to == "bool":
        if is_float(x):
            return b.fcmp_unordered("!=", x, kb.vconst(0.0, n, src))
        return x if src == I1 else b.icmp_signed("!=", x, kb.vconst(0, n, src))
    dst = ELEMENT[to]
    t = ir.VectorType(dst, n)
    if src == dst:
        return x
    if src == I1:
        return b.uitofp(x, t) if to in FLOATS else b.zext(x, t)
    if is_float(x):
        if to in FLOATS:
            return b.fpext(x, t) if itemsize(dst) > itemsize(src) else b.fptrunc(x, t)
        return b.fptosi(x, t)
    if to in FLOATS:
        return b.sitofp(x, t)
    return b.sext(x, t) if dst.width > src.width else b.trunc(x, t)


def typed_expression(expr: str, kb: KernelBuilder, xs: list[ir.Value]) -> ir.Value:
    """`family.name` over the operand vectors: cmp.*, logic.*, ibin.*, fbin.*, convert.<to>, select, not."""
    family, _, name = expr.partition(".")
    if family == "cmp":
        return compare(kb, name, xs[0], xs[1])
    if family == "logic":
        return LOGIC[name](kb, xs[0], xs[1])
    if family == "ibin":
        return INT_BINARY[name](kb, xs[0], xs[1])
    if family == "fbin":
        return FLOAT_BINARY[name](kb, xs[0], xs[1])
    if family == "convert":
        return convert(kb, xs[0], name)
    if family == "select":
        return kb.b.select(xs[0], xs[1], xs[2])
    if family == "not":
        return kb.b.not_(xs[0])
    raise KeyError(expr)
