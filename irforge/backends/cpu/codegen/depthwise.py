"""Direct depthwise convolution (one input channel per group) over NCHW planes.

Vectors run along the output width, 16 outputs of each of ROWS rows at a time, with one FMA
per tap and row.
The loop body is straight-line code: a tap's load mask is computed once per vector (the
lanes whose input column is inside the row) and ANDed with its row's validity, so rows
and columns of padding are masked-off lanes, never branches (a row outside the input is
read at row 0 with an all-off mask; a column before the row's start is an off lane of a
load that begins there). At stride 1 a tap is one masked contiguous load; at
stride 2 it is two masked contiguous loads (32 input columns) and one even-lane shuffle
(no gathers); larger strides gather.
"""

from __future__ import annotations

from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.epilogue import Epilogue, apply_epilogue
from irforge.backends.cpu.codegen.irutil import I64, VW, KernelBuilder, i64, vec

_LANES = ir.Constant(vec(VW, I64), list(range(VW)))
ROWS = 4
"""Output rows computed together: a 3x3 window's input rows are loaded once for all four
(18 loads for 36 FMAs instead of 9 for 9); the rows left over run one at a time."""


@dataclass(frozen=True)
class DepthwiseSpec:
    geometry: ConvGeometry
    bias: bool
    epilogue: Epilogue


def depthwise_kernel(module: ir.Module, spec: DepthwiseSpec, name: str) -> None:
    """args: X, W [C][kh*kw], out, [bias], [residual]; threads split the (n, c) planes."""
    g = spec.geometry
    kb = KernelBuilder(module, name)
    x, w, out = kb.slot(0), kb.slot(1), kb.slot(2)
    bias = kb.slot(3) if spec.bias else None
    res = kb.slot(3 + spec.bias) if spec.epilogue.residual else None
    b = kb.b
    q0, q1 = kb.partition(g.n * g.c)
    with kb.loop(q0, q1, name="plane") as q:
        c = b.urem(q, i64(g.c))
        src = kb.at(x, b.mul(q, i64(g.h * g.w)))
        dst_off = b.mul(q, i64(g.p))
        init = kb.splat(b.load(kb.at(bias, c))) if bias is not None else kb.vconst(0.0)
        taps = kb.at(w, b.mul(c, i64(g.kh * g.kw)))
        weights = [kb.splat(b.load(kb.at(taps, t))) for t in range(g.kh * g.kw)]
        blocked = g.oh // ROWS * ROWS
        for first, last, count in ((0, blocked, ROWS), (blocked, g.oh, 1)):
            if first == last:
                continue
            with kb.loop(first, last, count, name="oy") as oy:
                offsets = sorted({r * g.stride[0] + ky * g.dilation[0] for r in range(count) for ky in range(g.kh)})
                rows = dict(zip(offsets, _rows(kb, g, src, oy, offsets)))
                with kb.loop(0, g.ow, VW, name="ox") as ox0:
                    accs = _output_vectors(kb, g, rows, weights, ox0, init, count)
                    mask = kb.mask(b.sub(i64(g.ow), ox0))
                    for r, acc in enumerate(accs):
                        offset = b.add(dst_off, b.add(b.mul(b.add(oy, i64(r)), i64(g.ow)), ox0))
                        residual = kb.vload(kb.at(res, offset), mask=mask) if res is not None else None
                        kb.vstore(apply_epilogue(kb, spec.epilogue, acc, residual), kb.at(out, offset), mask)
    kb.finish()


def _rows(kb: KernelBuilder, g: ConvGeometry, src: ir.Value, oy: ir.Value, offsets: list[int]) -> list[tuple[ir.Value, ir.Value]]:
    """(row pointer, all-lanes validity) of input rows oy * stride + offset - pad."""
    b = kb.b
    rows = []
    for offset in offsets:
        iy = b.sub(b.add(b.mul(oy, i64(g.stride[0])), i64(offset)), i64(g.pad[0]))
        ok = b.icmp_unsigned("<", iy, i64(g.h))
        safe = b.select(ok, iy, i64(0))
        rows.append((kb.at(src, b.mul(safe, i64(g.w))), kb.splat(ok)))
    return rows


def _output_vectors(kb: KernelBuilder, g: ConvGeometry, rows, weights, ox0, init, count: int):  # type: ignore[no-untyped-def]
    """Sums over taps for outputs (oy + r, ox0 .. ox0+15), r < count: each input row's
    vector of a column tap is loaded once and used by every output row that reads it."""
    b = kb.b
    sx = g.stride[1]
    accs = [init] * count
    for kx in range(g.kw):
        start = b.add(b.mul(ox0, i64(sx)), i64(kx * g.dilation[1] - g.pad[1]))
        if sx in (1, 2):
            cols = [kb.inside(b.add(start, i64(p * VW)) if p else start, g.w) for p in range(sx)]
        else:
            ix = b.add(b.mul(b.add(kb.splat(ox0), _LANES), kb.splat(i64(sx))), kb.splat(i64(kx * g.dilation[1] - g.pad[1])))
            cols = [b.icmp_unsigned("<", ix, kb.splat(i64(g.w)))]
        for offset, (row, row_ok) in rows.items():
            masks = [b.and_(m, row_ok) for m in cols]
            if sx in (1, 2):
                values = kb.load_strided(row, start, masks)
            else:
                values = kb.gather(row, ix, masks[0])
            for r in range(count):
                ky, rest = divmod(offset - r * g.stride[0], g.dilation[0])
                if rest == 0 and 0 <= ky < g.kh:
                    accs[r] = kb.fma(weights[ky * g.kw + kx], values, accs[r])
    return accs
