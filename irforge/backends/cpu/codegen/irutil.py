"""LLVM IR building blocks shared by the kernel generators.

Every generated kernel has the signature `void k(i8** slots, i64 tid, i64 nthreads)`: the
runtime's slot table holds one pointer per buffer (inputs, outputs, arena tensors, packed
weights, scratch); a kernel reads its pointers at constant slot indices and processes the
part of its iteration space that belongs to thread `tid`. Shapes and strides are compile-time
constants, so LLVM sees fully specialised loops.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from llvmlite import ir

F32 = ir.FloatType()
F16 = ir.HalfType()
F64 = ir.DoubleType()
I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
VOID = ir.VoidType()
VW = 16
"""float lanes of one 512-bit vector."""
SLOTS = ir.PointerType(ir.PointerType(I8))
KERNEL_TYPE = ir.FunctionType(VOID, [SLOTS, I64, I64])

Value = ir.Value


def vec(n: int = VW, element: ir.Type = F32) -> ir.VectorType:
    return ir.VectorType(element, n)


def suffix(element: ir.Type) -> str:
    """The type suffix of an element type in LLVM intrinsic names (f32, f16, i8, i64, ...)."""
    if isinstance(element, ir.FloatType):
        return "f32"
    if isinstance(element, ir.HalfType):
        return "f16"
    if isinstance(element, ir.DoubleType):
        return "f64"
    return f"i{element.width}"


@cache
def native_vector_bytes() -> int:
    """Width of the host's vector registers: 64 with AVX-512, else 32 (AVX2)."""
    import llvmlite.binding as llvm

    return 64 if "+avx512f" in llvm.get_host_cpu_features().flatten().split(",") else 32


def itemsize(element: ir.Type) -> int:
    """Bytes of one element in memory (i1 tensors are stored one byte per element)."""
    if isinstance(element, ir.FloatType):
        return 4
    if isinstance(element, ir.HalfType):
        return 2
    if isinstance(element, ir.DoubleType):
        return 8
    return max(1, element.width // 8)


def i64(v: int) -> ir.Constant:
    return ir.Constant(I64, v)


@cache
def _vector_constant(t: ir.VectorType, lanes: tuple[str, ...], values: tuple) -> ir.Constant:  # type: ignore[type-arg]
    return ir.Constant(t, list(values))


def vector_constant(t: ir.VectorType, values: list) -> ir.Constant:  # type: ignore[type-arg]
    """The constant vector `values` of type `t`, one shared object per distinct value: llvmlite
    wraps and formats a vector constant lane by lane, once per object (ResNet-50's kernels
    built ~9,000 of them, most alike; keyed by the lanes' repr, so -0.0 is not 0.0)."""
    return _vector_constant(t, tuple(map(repr, values)), tuple(values))


@cache
def undef(t: ir.Type) -> ir.Constant:
    """An undefined value of type `t`, printed as one word (`ir.Constant(t, ir.Undefined)` of a
    vector type prints `<i64 undef, i64 undef, ...>`: a fifth of a GEMM module's text)."""
    value = ir.Constant(t, None)
    value.constant = ir.Undefined  # llvmlite prints an unwrapped Undefined as `undef`
    return value


def f32(v: float) -> ir.Constant:
    return ir.Constant(F32, v)


class KernelBuilder:
    """An IRBuilder positioned in a fresh kernel function, with loop and vector helpers."""

    def __init__(self, module: ir.Module, name: str, fn_type: ir.FunctionType = KERNEL_TYPE) -> None:
        self.module = module
        self.fn = ir.Function(module, fn_type, name)
        self.fn.linkage = "external"
        self.b = ir.IRBuilder(self.fn.append_basic_block("entry"))
        if fn_type is KERNEL_TYPE:
            self.slots, self.tid, self.nth = self.fn.args

    # -- pointers --------------------------------------------------------------------
    def slot(self, index: int, element: ir.Type = F32) -> Value:
        """The buffer in slot `index`, as a pointer to `element`."""
        raw = self.b.load(self.b.gep(self.slots, [i64(index)], inbounds=True))
        return self.b.bitcast(raw, ir.PointerType(element))

    def at(self, base: Value, offset: Value | int) -> Value:
        return self.b.gep(base, [offset if isinstance(offset, ir.Value) else i64(offset)], inbounds=True)

    # -- integer arithmetic that folds constants --------------------------------------
    def add(self, a: Value | int, b: Value | int) -> Value | int:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if isinstance(b, int) and b == 0:
            return a
        if isinstance(a, int) and a == 0:
            return b
        return self.b.add(self._v(a), self._v(b))

    def mul(self, a: Value | int, b: Value | int) -> Value | int:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if isinstance(b, int) and b == 1:
            return a
        if isinstance(a, int) and a == 1:
            return b
        if 0 in (a, b):
            return 0
        return self.b.mul(self._v(a), self._v(b))

    def _v(self, x: Value | int) -> Value:
        return x if isinstance(x, ir.Value) else i64(x)

    def min(self, a: Value | int, b: Value | int) -> Value:
        a, b = self._v(a), self._v(b)
        return self.b.select(self.b.icmp_signed("<", a, b), a, b)

    # -- control flow ----------------------------------------------------------------
    @contextmanager
    def loop(self, start: Value | int, stop: Value | int, step: int = 1, name: str = "i") -> Iterator[Value]:
        """for (iv = start; iv < stop; iv += step): the body is emitted inside the `with`."""
        b = self.b
        start_v, stop_v = self._v(start), self._v(stop)
        pre = b.block
        head = b.append_basic_block(f"{name}.head")
        body = b.append_basic_block(f"{name}.body")
        done = b.append_basic_block(f"{name}.done")
        b.branch(head)
        b.position_at_end(head)
        iv = b.phi(I64, name=name)
        iv.add_incoming(start_v, pre)
        b.cbranch(b.icmp_signed("<", iv, stop_v), body, done)
        b.position_at_end(body)
        yield iv
        nxt = b.add(iv, i64(step))
        iv.add_incoming(nxt, b.block)
        b.branch(head)
        b.position_at_end(done)

    @contextmanager
    def if_(self, cond: Value) -> Iterator[None]:
        with self.b.if_then(cond):
            yield

    def partition(self, total: int, align: int = 1) -> tuple[Value, Value]:
        """This thread's [begin, end) of `total` units, split evenly in multiples of `align`."""
        blocks = -(-total // align)
        b = self.b
        begin = b.mul(b.sdiv(b.mul(i64(blocks), self.tid), self.nth), i64(align))
        end = b.mul(b.sdiv(b.mul(i64(blocks), b.add(self.tid, i64(1))), self.nth), i64(align))
        return self.min(begin, total), self.min(end, total)

    # -- vectors ---------------------------------------------------------------------
    def intrinsic(self, name: str, ret: ir.Type, args: list[ir.Type]) -> ir.Function:
        fn = self.module.globals.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, args), name)
        return fn

    def splat(self, x: Value, n: int = VW) -> Value:
        v = self.b.insert_element(undef(vec(n, x.type)), x, ir.Constant(I32, 0))
        return self.b.shuffle_vector(v, undef(vec(n, x.type)), vector_constant(vec(n, I32), [0] * n))

    def vconst(self, value: float, n: int = VW, element: ir.Type = F32) -> ir.Constant:
        if isinstance(element, ir.IntType):
            value = int(value)
        return vector_constant(vec(n, element), [value] * n)

    def mask(self, count: Value | int, n: int = VW) -> Value:
        """Lanes [0, count) on."""
        lanes = vector_constant(vec(n, I64), list(range(n)))
        if isinstance(count, int):
            return vector_constant(vec(n, I1), [i < count for i in range(n)])
        return self.b.icmp_signed("<", lanes, self.splat(count, n))

    def vload(self, ptr: Value, n: int = VW, mask: Value | None = None, fill: float = 0.0) -> Value:
        """n lanes from `ptr` (of its element type); masked-off lanes are `fill`."""
        element = ptr.type.pointee
        vp = self.b.bitcast(ptr, ir.PointerType(vec(n, element)))
        align = itemsize(element)
        if mask is None:
            return self.b.load(vp, align=align)
        lanes = self._native_lanes(element, n)
        if lanes < n:  # see _native_lanes
            halves = [self.vload(self.at(ptr, p), lanes, self._lanes(mask, p, lanes), fill) for p in range(0, n, lanes)]
            return self.concat(halves)
        t = vec(n, element)
        fn = self.intrinsic(f"llvm.masked.load.v{n}{suffix(element)}.p0", t, [vp.type, I32, vec(n, I1), t])
        return self.b.call(fn, [vp, ir.Constant(I32, align), mask, self.vconst(fill, n, element)])

    def vstore(self, value: Value, ptr: Value, mask: Value | None = None) -> None:
        t = value.type
        element, n = t.element, t.count
        vp = self.b.bitcast(ptr, ir.PointerType(t))
        align = itemsize(element)
        if mask is None:
            self.b.store(value, vp, align=align)
            return
        lanes = self._native_lanes(element, n)
        if lanes < n:
            for p in range(0, n, lanes):
                self.vstore(self._lanes(value, p, lanes), self.at(ptr, p), self._lanes(mask, p, lanes))
            return
        fn = self.intrinsic(f"llvm.masked.store.v{n}{suffix(element)}.p0", VOID, [t, vp.type, I32, vec(n, I1)])
        self.b.call(fn, [value, vp, ir.Constant(I32, align), mask])

    @staticmethod
    def _native_lanes(element: ir.Type, n: int) -> int:
        """Lanes of one host register: masked loads and stores wider than that are issued per
        register. LLVM's own splitting of a 16-lane masked load on AVX2 miscompiled
        (Winograd's input transform read masked-off lanes of a 7x7 plane from memory)."""
        lanes = max(1, native_vector_bytes() // itemsize(element))
        parts = n // lanes
        return lanes if n > lanes and n % lanes == 0 and parts & (parts - 1) == 0 else n

    def _lanes(self, v: Value, start: int, count: int) -> Value:
        return self.b.shuffle_vector(v, undef(v.type), vector_constant(vec(count, I32), list(range(start, start + count))))

    def concat(self, parts: list[Value]) -> Value:
        """One wide vector of `parts` (vectors of one width) end to end; an odd count at any
        level is padded with an undefined vector, whose lanes follow the parts'."""
        while len(parts) > 1:
            if len(parts) % 2:
                parts = [*parts, undef(parts[-1].type)]
            width = parts[0].type.count
            mask = vector_constant(vec(2 * width, I32), list(range(2 * width)))
            parts = [self.b.shuffle_vector(left, right, mask) for left, right in zip(parts[::2], parts[1::2])]
        return parts[0]

    def inside(self, start: Value, size: int) -> Value:
        """Lanes l with 0 <= start + l < size (one unsigned compare)."""
        lanes = vector_constant(vec(VW, I64), list(range(VW)))
        return self.b.icmp_unsigned("<", self.b.add(self.splat(start), lanes), self.splat(i64(size)))

    def load_strided(self, row: Value, start: Value, masks: list[Value], fill: float = 0.0) -> Value:
        """row[start + s l] for lanes l at stride s = len(masks), 1 or 2: masks[p] guards the
        contiguous load at start + 16 p, and stride 2 keeps the even lanes of the two loads
        (a gather would issue 16 loads)."""
        b = self.b
        parts = [self.vload(b.gep(row, [b.add(start, i64(p * VW)) if p else start]), mask=m, fill=fill) for p, m in enumerate(masks)]
        if len(parts) == 1:
            return parts[0]
        return b.shuffle_vector(parts[0], parts[1], vector_constant(vec(VW, I32), list(range(0, 2 * VW, 2))))

    def gather(self, base: Value, offsets: Value, mask: Value, fill: float = 0.0) -> Value:
        """Lanes base[offsets[i]] where mask[i] (i64 offsets in elements), else `fill`."""
        n = offsets.type.count
        element = base.type.pointee
        size = itemsize(element)
        scaled = self.b.mul(offsets, vector_constant(vec(n, I64), [size] * n))
        addr = self.b.add(self.splat(self.b.ptrtoint(base, I64), n), scaled)
        ptrs = self.b.inttoptr(addr, vec(n, ir.PointerType(element)))
        align = ir.Constant(I32, size)
        t = vec(n, element)
        fn = self.intrinsic(f"llvm.masked.gather.v{n}{suffix(element)}.v{n}p0", t, [ptrs.type, I32, vec(n, I1), t])
        return self.b.call(fn, [ptrs, align, mask, self.vconst(fill, n, element)])

    def scatter(self, value: Value, base: Value, offsets: Value, mask: Value) -> None:
        """base[offsets[i]] = value[i] where mask[i] (i64 offsets in elements)."""
        n = offsets.type.count
        element = base.type.pointee
        size = itemsize(element)
        scaled = self.b.mul(offsets, vector_constant(vec(n, I64), [size] * n))
        ptrs = self.b.inttoptr(self.b.add(self.splat(self.b.ptrtoint(base, I64), n), scaled), vec(n, ir.PointerType(element)))
        fn = self.intrinsic(f"llvm.masked.scatter.v{n}{suffix(element)}.v{n}p0", VOID, [value.type, ptrs.type, I32, vec(n, I1)])
        self.b.call(fn, [value, ptrs, ir.Constant(I32, size), mask])

    def prefetch(self, ptr: Value) -> None:
        """A read prefetch of `ptr`'s cache line into all levels."""
        i8p = ir.PointerType(ir.IntType(8))
        fn = self.intrinsic("llvm.prefetch.p0", VOID, [i8p, I32, I32, I32])
        self.b.call(fn, [self.b.bitcast(ptr, i8p), ir.Constant(I32, 0), ir.Constant(I32, 3), ir.Constant(I32, 1)])

    def call_unary(self, name: str, x: Value) -> Value:
        """An LLVM math intrinsic (`llvm.<name>.*`) on a float or float vector."""
        suffix = f"v{x.type.count}f32" if isinstance(x.type, ir.VectorType) else "f32"
        return self.b.call(self.intrinsic(f"llvm.{name}.{suffix}", x.type, [x.type]), [x])

    def call_binary(self, name: str, x: Value, y: Value) -> Value:
        suffix = f"v{x.type.count}f32" if isinstance(x.type, ir.VectorType) else "f32"
        return self.b.call(self.intrinsic(f"llvm.{name}.{suffix}", x.type, [x.type, x.type]), [x, y])

    def fma(self, a: Value, b: Value, c: Value) -> Value:
        suffix = f"v{a.type.count}f32" if isinstance(a.type, ir.VectorType) else "f32"
        fn = self.intrinsic(f"llvm.fma.{suffix}", a.type, [a.type] * 3)
        return self.b.call(fn, [a, b, c])

    def hreduce(self, kind: str, v: Value) -> Value:
        """Horizontal fadd/fmax/fmin of a float vector to a scalar; a NaN lane makes fmax /
        fmin NaN (numpy's max / min: LLVM's reduce.fmax is maxnum's, which drops a NaN)."""
        n = v.type.count
        if kind == "fadd":
            fn = self.intrinsic(f"llvm.vector.reduce.fadd.v{n}f32", F32, [F32, v.type])
            return self.b.call(fn, [f32(0.0), v])
        fn = self.intrinsic(f"llvm.vector.reduce.{kind}.v{n}f32", F32, [v.type])
        any_nan = self.intrinsic(f"llvm.vector.reduce.or.v{n}i1", ir.IntType(1), [ir.VectorType(ir.IntType(1), n)])
        nan = self.b.call(any_nan, [self.b.fcmp_unordered("uno", v, v)])
        return self.b.select(nan, f32(math.nan), self.b.call(fn, [v]))

    def nan_extreme(self, kind: str, a: Value, v: Value) -> Value:
        """max (kind "fmax") or min ("fmin") of a and v per lane, NaN where either is NaN
        (numpy's maximum / minimum; one unordered compare alone keeps a's NaN only while v's
        next value is not compared against it)."""
        b = self.b
        take = b.fcmp_unordered(">=" if kind == "fmax" else "<=", v, a)  # v's NaN or v past a
        return b.select(b.fcmp_unordered("uno", a, a), a, b.select(take, v, a))

    def finish(self) -> None:
        self.b.ret_void()
