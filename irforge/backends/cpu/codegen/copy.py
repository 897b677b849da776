"""Data movement kernels for any element type: strided/table-driven copies and Gather.

A `Move` copies a source tensor into (part of) a destination: for every index of its
iteration shape, dst[dst_offset + sum i_k * dst_strides[k]] = src[src_offset + sum
map_k(i_k)], where map_k is an element stride or a table of offsets (a Pad's mirrored or
clamped border, Tile's wrap-around, nearest Resample's source index). A table entry of
`FILL` marks a position with no source element (constant padding): it gets the fill value.
Concat (one move per input), Split (one per output), Slice, Pad, Tile, Permute and nearest
Resample are all moves; elements are copied as integers of their width, so one kernel
serves every element type.

Threads split the rows (all axes but the innermost) of each move in turn; moves write
disjoint regions, so no barrier separates them. The innermost axis is cut at compile
time into segments: contiguous runs become `llvm.memcpy` of a constant size (inlined as
vector moves), runs of FILL become stores of the fill value, and anything else a loop
reading offsets from a constant table.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import I1, I8, I64, VOID, KernelBuilder, i64

FILL = -(1 << 40)
"""A table offset meaning "no source element": every real offset sum stays above it."""
MAX_SEGMENTS = 16

AxisMap = int | tuple[int, ...]
"""An element stride, or one source offset per index along the axis."""


@dataclass(frozen=True)
class Move:
    src: int
    """slot of the source buffer"""
    dst: int
    shape: tuple[int, ...]
    maps: tuple[AxisMap, ...]
    dst_strides: tuple[int, ...]
    src_offset: int = 0
    dst_offset: int = 0


@dataclass(frozen=True)
class CopySpec:
    itemsize: int
    moves: tuple[Move, ...]
    fill: int = 0
    """the fill value's bit pattern, as an unsigned integer of `itemsize` bytes"""


def contiguous_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def simplify(move: Move) -> Move:
    """Affine tables become strides, then adjacent stride axes merge where both sides allow
    (so a Slice of whole rows copies whole rows)."""
    maps, offset = [], move.src_offset
    for size, m in zip(move.shape, move.maps):
        if isinstance(m, tuple) and FILL not in m and size > 0:
            step = m[1] - m[0] if size > 1 else 0
            if all(m[i] == m[0] + i * step for i in range(size)):
                offset += m[0]
                m = step
        maps.append(m)
    shape, dst = [1], [0]
    out_maps: list[AxisMap] = [0]
    for size, m, d in zip(move.shape, maps, move.dst_strides):
        if size == 1 and isinstance(m, int):
            continue
        prev = out_maps[-1]
        if isinstance(m, int) and isinstance(prev, int) and prev == m * size and dst[-1] == d * size:
            shape[-1] *= size
            out_maps[-1], dst[-1] = m, d
            continue
        shape.append(size)
        out_maps.append(m)
        dst.append(d)
    return Move(move.src, move.dst, tuple(shape), tuple(out_maps), tuple(dst), offset, move.dst_offset)


def segments(m: AxisMap, size: int) -> list[tuple[str, int, int, int]] | None:
    """The innermost axis as (kind, dst start, src start, length) runs: copy or fill; None
    when it has too many runs (then it is read through its table)."""
    if isinstance(m, int):
        return [("copy", 0, 0, size)] if m == 1 else None
    runs: list[list] = []  # type: ignore[type-arg]
    for i, offset in enumerate(m):
        kind = "fill" if offset == FILL else "copy"
        last = runs[-1] if runs else None
        if last and last[0] == kind and (kind == "fill" or offset == last[2] + last[3]):
            last[3] += 1
        else:
            runs.append([kind, i, offset, 1])
    return [tuple(r) for r in runs] if len(runs) <= MAX_SEGMENTS else None  # type: ignore[misc]


def _table(module: ir.Module, values: tuple[int, ...]) -> ir.GlobalVariable:
    name = f"table.{len(module.globals)}"
    array_t = ir.ArrayType(I64, len(values))
    table = ir.GlobalVariable(module, array_t, name)
    table.initializer = ir.Constant(array_t, list(values))
    table.global_constant = True
    table.linkage = "internal"
    return table


class _Emitter:
    """Emits the moves of one kernel; `t` is the element type (an integer of its width)."""

    def __init__(self, kb: KernelBuilder, spec: CopySpec) -> None:
        self.kb, self.spec = kb, spec
        self.t = ir.IntType(8 * spec.itemsize)
        self.fill = ir.Constant(self.t, spec.fill)
        self.memcpy = kb.intrinsic("llvm.memcpy.p0.p0.i64", VOID, [ir.PointerType(I8), ir.PointerType(I8), I64, I1])

    def move(self, move: Move) -> None:
        kb, b = self.kb, self.kb.b
        src, dst = kb.slot(move.src, self.t), kb.slot(move.dst, self.t)
        outer_shape, inner = move.shape[:-1], move.shape[-1]
        tables = [_table(kb.module, m) if isinstance(m, tuple) else None for m in move.maps]
        rows = 1
        for size in outer_shape:
            rows *= size
        r0, r1 = kb.partition(rows)
        with kb.loop(r0, r1, name="row") as row:
            src_off, dst_off = i64(move.src_offset), i64(move.dst_offset)
            rest = row
            for axis in range(len(outer_shape) - 1, -1, -1):
                index = b.urem(rest, i64(outer_shape[axis])) if axis else rest
                rest = b.udiv(rest, i64(outer_shape[axis]))
                src_off = b.add(src_off, self._offset(move.maps[axis], tables[axis], index))
                dst_off = b.add(dst_off, b.mul(index, i64(move.dst_strides[axis])))
            src_row, dst_row = kb.at(src, src_off), kb.at(dst, dst_off)
            runs = segments(move.maps[-1], inner)
            if any(isinstance(m, tuple) and FILL in m for m in move.maps[:-1]):
                with b.if_else(b.icmp_signed("<", src_off, i64(FILL // 2))) as (fill_row, copy_row):
                    with fill_row:
                        self._store_fill(dst_row, 0, inner, move.dst_strides[-1])
                    with copy_row:
                        self._inner(move, runs, tables[-1], src_row, dst_row)
            else:
                self._inner(move, runs, tables[-1], src_row, dst_row)

    def _offset(self, m: AxisMap, table: ir.GlobalVariable | None, index: ir.Value) -> ir.Value:
        b = self.kb.b
        if table is None:
            return b.mul(index, i64(m))  # type: ignore[arg-type]
        return b.load(b.gep(table, [i64(0), index], inbounds=True))

    def _inner(self, move: Move, runs, table, src_row, dst_row) -> None:  # type: ignore[no-untyped-def]
        kb, b = self.kb, self.kb.b
        inner, step, m = move.shape[-1], move.dst_strides[-1], move.maps[-1]
        if runs is not None and step == 1:
            for kind, start, origin, length in runs:
                if kind == "fill":
                    self._store_fill(dst_row, start, length, 1)
                else:
                    to = b.bitcast(kb.at(dst_row, start), ir.PointerType(I8))
                    frm = b.bitcast(kb.at(src_row, origin), ir.PointerType(I8))
                    b.call(self.memcpy, [to, frm, i64(length * self.spec.itemsize), ir.Constant(I1, 0)])
            return
        with kb.loop(0, inner, name="j") as j:
            offset = self._offset(m, table, j)
            target = kb.at(dst_row, b.mul(j, i64(step)))
            if table is not None and FILL in m:  # type: ignore[operator]
                with b.if_else(b.icmp_signed("<", offset, i64(0))) as (fill, copy):
                    with fill:
                        b.store(self.fill, target)
                    with copy:
                        b.store(b.load(kb.at(src_row, offset)), target)
            else:
                b.store(b.load(kb.at(src_row, offset)), target)

    def _store_fill(self, dst_row: ir.Value, start: int, length: int, step: int) -> None:
        kb = self.kb
        with kb.loop(start, start + length, name="f") as j:
            kb.b.store(self.fill, kb.at(dst_row, kb.b.mul(j, i64(step))))


UNROLL_LOOPS = False
"""Whether LLVM may unroll a copy kernel's loops (`jit.unrolls`). Its unrolling tripled their
LLVM time for no run time (session 14: Swin-T's 33 copy modules, 124 KiB of IR, 1.30 -> 0.41 s
of LLVM, `bench/cpu_compile_profile.py swin_t --rounds 2 --set
irforge.backends.cpu.codegen.copy:UNROLL_LOOPS=True,False`; its copy phases 0.7-1.3x each
either way at load 8.6, the model 1.006, `bench/cpu_knob_ab.py swin_t
irforge.backends.cpu.codegen.copy:UNROLL_LOOPS --cpu-time --runs 15`)."""


def copy_kernel(module: ir.Module, spec: CopySpec, name: str) -> None:
    """args: the slots the moves name."""
    module.unroll = UNROLL_LOOPS  # type: ignore[attr-defined]
    kb = KernelBuilder(module, name)
    emitter = _Emitter(kb, spec)
    for move in spec.moves:
        emitter.move(move)
    kb.finish()


@dataclass(frozen=True)
class GatherSpec:
    """out[b, p, i, :] = data[b, p, index[b, i], :] with data [B, P, size, S], index [B, I]."""

    itemsize: int
    index_bits: int
    batch: int
    before: int
    size: int
    count: int
    after: int


def _report(kb: KernelBuilder, check: ir.Value, value: ir.Value) -> None:
    """Set the check word (see `Lowering.check_word`): [1, value]. Threads that meet bad
    indices at once may each store theirs; any one is reported."""
    b = kb.b
    b.store_atomic(value, kb.at(check, 1), "monotonic", 8)
    b.store_atomic(i64(1), check, "monotonic", 8)


def _from_end(kb: KernelBuilder, raw: ir.Value, bits: int, size: int) -> tuple[ir.Value, ir.Value]:
    """(the index as i64, made non-negative when it counts from the end; whether it is inside
    [0, size))."""
    b = kb.b
    wide = b.sext(raw, I64) if bits < 64 else raw
    index = b.select(b.icmp_signed("<", wide, i64(0)), b.add(wide, i64(size)), wide)
    return wide, index


def gather_kernel(module: ir.Module, spec: GatherSpec, name: str) -> None:
    """args: data, indices, out, check word. Negative indices count from the end; an index
    still out of range sets the check word (the executable raises E880 after the run, as the
    reference does) and gives a row of zeros (native code must not read outside)."""
    kb = KernelBuilder(module, name)
    t = ir.IntType(8 * spec.itemsize)
    data, indices, out = kb.slot(0, t), kb.slot(1, ir.IntType(spec.index_bits)), kb.slot(2, t)
    check = kb.slot(3, I64)
    b = kb.b
    memcpy = kb.intrinsic("llvm.memcpy.p0.p0.i64", VOID, [ir.PointerType(I8), ir.PointerType(I8), I64, I1])
    r0, r1 = kb.partition(spec.batch * spec.before * spec.count)
    with kb.loop(r0, r1, name="row") as row:
        i = b.urem(row, i64(spec.count))
        bp = b.udiv(row, i64(spec.count))
        batch = b.udiv(bp, i64(spec.before))
        raw = b.load(kb.at(indices, b.add(b.mul(batch, i64(spec.count)), i)))
        wide, index = _from_end(kb, raw, spec.index_bits, spec.size)
        dst = kb.at(out, b.mul(row, i64(spec.after)))
        with b.if_else(b.icmp_unsigned("<", index, i64(spec.size))) as (inside, outside):
            with inside:
                src = kb.at(data, b.mul(b.add(b.mul(bp, i64(spec.size)), index), i64(spec.after)))
                b.call(memcpy, [b.bitcast(dst, ir.PointerType(I8)), b.bitcast(src, ir.PointerType(I8)),
                                i64(spec.after * spec.itemsize), ir.Constant(I1, 0)])
            with outside:
                _report(kb, check, wide)
                with kb.loop(0, spec.after, name="z") as j:
                    b.store(ir.Constant(t, 0), kb.at(dst, j))
    kb.finish()


@dataclass(frozen=True)
class ElementsSpec:
    """GatherElements: out[o, i, k] = data[o, index[o, i, k], k], data [O, size, K], index
    and out [O, count, K] (the axis's dims folded: before it O, after it K)."""

    itemsize: int
    index_bits: int
    outer: int
    size: int
    count: int
    inner: int


def gather_elements_kernel(module: ir.Module, spec: ElementsSpec, name: str) -> None:
    """args: data, indices, out, check word. Threads split the [O, count] rows; an element at
    a time along K (the index differs per element). Negative indices count from the end; an
    index still out of range gives 0 and sets the check word (the executable raises E880
    after the run, as the reference does; native code must not read outside). The loop only
    ORs a flag (no branch in it); the bad index is looked up again after it, on that path."""
    kb = KernelBuilder(module, name)
    t = ir.IntType(8 * spec.itemsize)
    data, indices, out = kb.slot(0, t), kb.slot(1, ir.IntType(spec.index_bits)), kb.slot(2, t)
    check = kb.slot(3, I64)
    b = kb.b
    bad = b.alloca(I1, name="bad")  # in the entry block: promoted to a register
    b.store(ir.Constant(I1, 0), bad)
    r0, r1 = kb.partition(spec.outer * spec.count)
    with kb.loop(r0, r1, name="row") as row:
        plane = kb.mul(b.udiv(row, i64(spec.count)), spec.size * spec.inner)  # data's [o] block
        first = kb.mul(row, spec.inner)
        with kb.loop(0, spec.inner, name="k") as k:
            at = b.add(first, k)
            _, index = _from_end(kb, b.load(kb.at(indices, at)), spec.index_bits, spec.size)
            inside = b.icmp_unsigned("<", index, i64(spec.size))
            b.store(b.or_(b.load(bad), b.not_(inside)), bad)
            safe = b.select(inside, index, i64(0))  # a load from the row's first element, discarded
            value = b.load(kb.at(data, kb.add(plane, kb.add(kb.mul(safe, spec.inner), k))))
            b.store(b.select(inside, value, ir.Constant(t, 0)), kb.at(out, at))
    with kb.if_(b.load(bad)):
        with kb.loop(kb.mul(r0, spec.inner), kb.mul(r1, spec.inner), name="find") as at:
            wide, index = _from_end(kb, b.load(kb.at(indices, at)), spec.index_bits, spec.size)
            with kb.if_(b.icmp_unsigned(">=", index, i64(spec.size))):
                _report(kb, check, wide)
    kb.finish()
