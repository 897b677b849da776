"""Packed A panels scaled along K: out = A * s[k] for each k row of every panel.

A squeeze-excite block ends in `x * s` (s one value per channel, computed at run time) before
a 1x1 convolution; `W (s x) = (W s) x`, so the scale can go onto the weights instead of the
activation: a [o, c] matrix instead of a [c, h, w] plane (see `ops/excite.py`). The weights
are packed at compile time (`gemm.pack_a`: per K block of `kc` rows, [ceil(o/MR)][kc][MR]),
so this kernel scales the packed copy into a scratch copy of the same layout, which the GEMM
then reads as its A. Generic in the panel count and K (an i64 slot: [panels, k]), so one
kernel serves every such layer of a model.
"""

from __future__ import annotations

from llvmlite import ir

from irforge.backends.cpu.codegen.irutil import I32, I64, KernelBuilder, i64, undef, vec, vector_constant

GROUP = 4
"""K rows scaled per vector step: GROUP * MR lanes (24 on AVX2, 48 on AVX-512: whole vectors)."""


def scale_panels_kernel(module: ir.Module, kc: int, mr: int, name: str) -> None:
    """args: packed A, s (k floats), out (A's layout), sizes (i64: panels, k)."""
    kb = KernelBuilder(module, name)
    b = kb.b
    a, s, out = kb.slot(0), kb.slot(1), kb.slot(2)
    sizes = kb.slot(3, I64)
    panels, k = b.load(sizes), b.load(kb.at(sizes, 1))
    # this thread's panels of every K block (the blocks are small: no finer split needed)
    first = b.sdiv(b.mul(panels, kb.tid), kb.nth)
    last = b.sdiv(b.mul(panels, b.add(kb.tid, i64(1))), kb.nth)
    spread = vector_constant(vec(GROUP * mr, I32), [r for r in range(GROUP) for _ in range(mr)])
    with kb.loop(0, k, kc, name="k0") as k0:
        rows = kb.min(kc, b.sub(k, k0))  # this block's K rows
        whole = b.mul(b.sdiv(rows, i64(GROUP)), i64(GROUP))
        block = b.mul(b.mul(panels, i64(mr)), k0)  # elements before this K block
        with kb.loop(first, last, name="p") as p:
            panel = b.add(block, b.mul(b.mul(p, rows), i64(mr)))
            with kb.loop(0, whole, GROUP, name="r") as r:
                four = kb.vload(kb.at(s, b.add(k0, r)), GROUP)
                scale = b.shuffle_vector(four, undef(four.type), spread)
                at = b.add(panel, b.mul(r, i64(mr)))
                kb.vstore(b.fmul(kb.vload(kb.at(a, at), GROUP * mr), scale), kb.at(out, at))
            with kb.loop(whole, rows, name="t") as r:  # the last 1-3 rows of a block
                scale = kb.splat(b.load(kb.at(s, b.add(k0, r))), mr)
                at = b.add(panel, b.mul(r, i64(mr)))
                kb.vstore(b.fmul(kb.vload(kb.at(a, at), mr), scale), kb.at(out, at))
    kb.finish()
