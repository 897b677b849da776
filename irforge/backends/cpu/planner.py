"""Liveness-based placement of arena buffers (tensors and scratch) in one allocation.

A buffer is live from the first to the last phase that touches it (views share their
source's buffer, so their uses extend it; model outputs live to the end). Buffers are placed
largest first at the lowest 64-byte-aligned offset that overlaps no placed buffer with an
intersecting lifetime: the classic greedy-by-size offset assignment, close to optimal for
the chain-like lifetimes of inference graphs.
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
    movable = [b for b in buffers if b.kind in ("arena", "scratch") and b.first >= 0]
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
    return size


def naive_size(buffers: list[Buffer]) -> int:
    """The arena size without reuse (for reporting what planning saves)."""
    return sum(_aligned(b.nbytes) for b in buffers if b.kind in ("arena", "scratch") and b.first >= 0)
