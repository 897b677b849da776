"""A batched 2-D transpose in tiles: out[b, c, r] = in[b, r, c] (32-bit elements).

The permute copy (`pointwise` "copy" with permuted input strides) runs along the output's
rows and reads the input a column at a time: for SegFormer's [16384, 256] -> [256, 16384]
each output row touches 16384 input lines, evicted before the next row reads them again
(31.6 ms for 16 MiB, onnxruntime's Transpose 17.8). Here threads split TILE x TILE tiles;
a tile reads TILE input rows and writes TILE output rows, every line of both in L1 while the
tile is copied (the inner loop writes along an output row).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import KernelBuilder, i64

TILE = 32


@dataclass(frozen=True)
class TransposeSpec:
    batch: int
    rows: int
    """R: the input's rows, the output's columns"""
    cols: int
    """C: the input's columns, the output's rows"""
    itemsize: int = 4


def as_transpose(shape: tuple[int, ...], order: tuple[int, ...]) -> tuple[int, int, int] | None:
    """(batch, R, C) when permuting `shape` by `order` is [batch, R, C] -> [batch, C, R]
    once size-1 axes are dropped and axes that stay neighbours are merged; else None."""
    rank = {a: i for i, a in enumerate(a for a in range(len(shape)) if shape[a] > 1)}  # size-1 axes dropped
    groups: list[list[int]] = []
    for axis in (rank[a] for a in order if a in rank):
        if groups and groups[-1][-1] + 1 == axis:
            groups[-1].append(axis)
        else:
            groups.append([axis])
    real = [shape[a] for a in rank]
    size = [math.prod(real[a] for a in g) for g in groups]
    firsts = [g[0] for g in groups]
    if len(groups) == 2 and firsts[0] > firsts[1]:
        return 1, size[1], size[0]
    if len(groups) == 3 and firsts[0] < firsts[2] < firsts[1]:
        return size[0], size[2], size[1]
    return None


UNROLL_LOOPS = False
"""Whether LLVM may unroll the tile loops (`jit.unrolls`). Not: keras NASNetMobile's 8 transpose
modules (29 KiB of IR) 0.76 -> 0.48 s of LLVM (session 14, `bench/cpu_compile_profile.py
keras_NASNetMobile --rounds 2 --set irforge.backends.cpu.codegen.transpose:UNROLL_LOOPS=True,False`),
their phases 0.92-1.05x each, 0.517 -> 0.509 ms in all (`bench/cpu_knob_ab.py keras_NASNetMobile
irforge.backends.cpu.codegen.transpose:UNROLL_LOOPS --a True --b False --runs 15 --cpu-time
--phases transpose`, load 10)."""


def transpose_kernel(module: ir.Module, spec: TransposeSpec, name: str) -> None:
    """args: in [batch, R, C], out [batch, C, R]."""
    module.unroll = UNROLL_LOOPS  # type: ignore[attr-defined]
    kb = KernelBuilder(module, name)
    t = ir.IntType(8 * spec.itemsize)
    src, dst = kb.slot(0, t), kb.slot(1, t)
    b = kb.b
    r_tiles, c_tiles = -(-spec.rows // TILE), -(-spec.cols // TILE)
    u0, u1 = kb.partition(spec.batch * c_tiles * r_tiles)
    with kb.loop(u0, u1, name="tile") as u:
        r0 = b.mul(b.urem(u, i64(r_tiles)), i64(TILE))
        rest = b.udiv(u, i64(r_tiles))
        c0 = b.mul(b.urem(rest, i64(c_tiles)), i64(TILE))
        batch = b.udiv(rest, i64(c_tiles))
        r1, c1 = kb.min(b.add(r0, i64(TILE)), spec.rows), kb.min(b.add(c0, i64(TILE)), spec.cols)
        src_plane = kb.at(src, b.mul(batch, i64(spec.rows * spec.cols)))
        dst_plane = kb.at(dst, b.mul(batch, i64(spec.rows * spec.cols)))
        with kb.loop(c0, c1, name="c") as c:
            row = kb.at(dst_plane, b.mul(c, i64(spec.rows)))
            column = kb.at(src_plane, c)
            with kb.loop(r0, r1, name="r") as r:
                b.store(b.load(kb.at(column, b.mul(r, i64(spec.cols)))), kb.at(row, r))
    kb.finish()
