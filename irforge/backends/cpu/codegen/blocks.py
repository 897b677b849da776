"""One copy kernel for every Concat and Split of contiguous blocks: the blocks come from a table.

A move that is one contiguous run of elements (a Concat along the first axis of size > 1,
e.g. channels at batch 1, or a Split of such: its `copy.simplify`d shape is (1, length)) is
a row of the table, read at run time: (source slot, source offset, destination slot,
destination offset, length) in elements, after the row count; slot indices count from the
kernel's first argument, which is the table itself (an i64 constant buffer). One kernel per
element size then serves every such Concat and Split of every model (DenseNet-121 compiled
59 copy kernels, one per concat of its growing feature list: 3.8 s of LLVM). Threads split
each block in equal parts, each a `memcpy` (the per-move kernels gave a block of one row to
one thread).
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir

from irforge.backends.cpu.codegen.copy import Move
from irforge.backends.cpu.codegen.irutil import I1, I8, I64, VOID, KernelBuilder, i64

FIELDS = 5
"""source slot, source offset, destination slot, destination offset, length"""


def block_of(move: Move) -> tuple[int, int, int, int, int] | None:
    """A simplified move's table row, or None when it is not one contiguous run."""
    if len(move.shape) != 2 or move.shape[0] != 1 or move.maps != (0, 1) or move.dst_strides[-1] != 1:
        return None
    return move.src, move.src_offset, move.dst, move.dst_offset, move.shape[-1]


def block_table(moves: list[Move]) -> np.ndarray | None:
    """The table of `moves` (slots shifted by one: the table is argument 0), or None when one
    of them is not a contiguous block."""
    rows = [block_of(m) for m in moves]
    if not rows or any(r is None for r in rows):
        return None
    table = [len(rows)]
    for src, src_offset, dst, dst_offset, length in rows:  # type: ignore[misc]
        table += [src + 1, src_offset, dst + 1, dst_offset, length]
    return np.array(table, np.int64)


def blocks_kernel(module: ir.Module, itemsize: int, name: str) -> None:
    """args: the table, then the buffers its rows name."""
    kb = KernelBuilder(module, name)
    b = kb.b
    bytes_t = ir.PointerType(I8)
    memcpy = kb.intrinsic("llvm.memcpy.p0.p0.i64", VOID, [bytes_t, bytes_t, I64, I1])
    table = kb.slot(0, I64)

    def field(row: ir.Value, index: int) -> ir.Value:
        return b.load(kb.at(table, b.add(b.mul(row, i64(FIELDS)), i64(1 + index))))

    def buffer(slot: ir.Value) -> ir.Value:
        return b.load(b.gep(kb.slots, [slot], inbounds=True))

    with kb.loop(0, b.load(table), name="block") as row:
        length = field(row, 4)
        begin = b.sdiv(b.mul(length, kb.tid), kb.nth)
        end = b.sdiv(b.mul(length, b.add(kb.tid, i64(1))), kb.nth)
        scale = i64(itemsize)
        src = b.gep(buffer(field(row, 0)), [b.mul(b.add(field(row, 1), begin), scale)], inbounds=True)
        dst = b.gep(buffer(field(row, 2)), [b.mul(b.add(field(row, 3), begin), scale)], inbounds=True)
        b.call(memcpy, [dst, src, b.mul(b.sub(end, begin), scale), ir.Constant(I1, 0)])
    kb.finish()
