"""Liveness-based placement of arena buffers (tensors and scratch) in one allocation.

A buffer is live from the first to the last phase that touches it (views share their
source's buffer, so their uses extend it; model outputs live to the end). Buffers are placed
largest first at the lowest 64-byte-aligned offset that overlaps no placed buffer with an
intersecting lifetime: the classic greedy-by-size offset assignment, close to optimal for
the chain-like lifetimes of inference graphs. A buffer stored inside another (`Buffer.parent`:
a Concat's input in its slice of the output) is not placed itself: its outermost parent is
live over both lifetimes, and the child lies `within` bytes into it.
"""

from __future__ import annotations

from irforge.backends.cpu.lower import Buffer

ALIGN = 64


def _aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def plan(buffers: list[Buffer]) -> int:
    """Set `offset` of every arena/scratch buffer that is used; return the arena size."""
    placed: list[Buffer] = []
    size = 0
    children = [b for b in buffers if b.parent is not None and b.first >= 0]
    for child in children:  # the outermost parent lives as long as any buffer inside it
        root = _root(child)[0]
        root.first = child.first if root.first < 0 else min(root.first, child.first)
        root.last = max(root.last, child.last)
    movable = [b for b in buffers if b.kind in ("arena", "scratch") and b.first >= 0 and b.parent is None]
    for buf in sorted(movable, key=lambda b: (-b.nbytes, b.first)):
        clashes = sorted(
            (p for p in placed if p.first <= buf.last and buf.first <= p.last), key=lambda p: p.offset
        )
        offset = 0
        for other in clashes:
            if offset + buf.nbytes <= other.offset:
                break
            offset = max(offset, _aligned(other.offset + other.nbytes))
        buf.offset = offset
        placed.append(buf)
        size = max(size, _aligned(offset + buf.nbytes))
    for child in children:
        root, within = _root(child)
        child.offset = root.offset + within
    return size


def _root(buf: Buffer) -> tuple[Buffer, int]:
    """The outermost buffer `buf` lies in, and `buf`'s byte offset inside it."""
    within = 0
    while buf.parent is not None:
        within += buf.within
        buf = buf.parent
    return buf, within


def naive_size(buffers: list[Buffer]) -> int:
    """The arena size without reuse (for reporting what planning saves)."""
    return sum(_aligned(b.nbytes) for b in buffers if b.kind in ("arena", "scratch") and b.first >= 0 and b.parent is None)
