"""Windowed max/average pooling over NCHW planes, 16 outputs of a row per vector.

Max pooling at a column stride of 1 or 2 goes through a padded row (`_row_max_kernel`): per
output row, the max over the window's input rows is stored into a stack row that has -inf
where the window reaches past the input, then each output vector takes the max over the
window's columns of that row with plain loads. Otherwise window taps outside the input are
masked out of the loads (masked loads at stride 1, two and an even-lane shuffle at stride 2,
gathers otherwise); the average divides by the count of taps inside the input (exclude_pad)
or inside the padded input (ceil-mode overhang never counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.irutil import F32, I32, I64, VW, KernelBuilder, i64, vec, vector_constant
from irforge.backends.cpu.codegen.mathfn import BINARY

LOWEST = -3.4028234663852886e38
ROW_MAX = True
"""Max pooling at column stride 1 or 2 through a padded stack row (`_row_max_kernel`): the
masked, per-tap loads of the general kernel (two 16-lane masked loads and their i64 lane
masks per tap) made ResNet-50's 3x3 stride-2 pool 0.85 ms against onnxruntime's 0.11."""
ROW_FLOATS_MAX = 16384
"""Longest padded row (floats) kept on the stack; wider planes take the general kernel."""


@dataclass(frozen=True)
class PoolSpec:
    geometry: ConvGeometry
    method: str
    exclude_pad: bool
    pad_end: tuple[int, int]


def pool_kernel(module: ir.Module, spec: PoolSpec, name: str) -> None:
    """args: X, out; threads split the (n, c) planes."""
    g = spec.geometry
    if ROW_MAX and spec.method == "max" and g.stride[1] in (1, 2) and _row_floats(g) <= ROW_FLOATS_MAX:
        _row_max_kernel(module, g, name)
        return
    kb = KernelBuilder(module, name)
    x, out = kb.slot(0), kb.slot(1)
    b = kb.b
    with b.goto_block(kb.fn.entry_basic_block):
        acc_slot, count_slot = b.alloca(vec()), b.alloca(vec())
    q0, q1 = kb.partition(g.n * g.c)
    lanes = ir.Constant(vec(VW, I64), list(range(VW)))
    with kb.loop(q0, q1, name="plane") as q:
        src = kb.at(x, b.mul(q, i64(g.h * g.w)))
        with kb.loop(0, g.oh, name="oy") as oy, kb.loop(0, g.ow, VW, name="ox") as ox0:
            ox = b.add(kb.splat(ox0), lanes)
            ox_ok = b.icmp_signed("<", ox, kb.splat(i64(g.ow)))
            b.store(kb.vconst(LOWEST if spec.method == "max" else 0.0), acc_slot)
            b.store(kb.vconst(0.0), count_slot)
            for ky in range(g.kh):
                iy = b.sub(b.add(b.mul(oy, i64(g.stride[0])), i64(ky * g.dilation[0])), i64(g.pad[0]))
                _tap_row(kb, spec, src, iy, ox, ox0, ox_ok, acc_slot, count_slot)
            acc = b.load(acc_slot)
            if spec.method == "avg":
                acc = b.fdiv(acc, b.load(count_slot))
            kb.vstore(acc, kb.at(out, b.add(b.mul(q, i64(g.p)), b.add(b.mul(oy, i64(g.ow)), ox0))), ox_ok)
    kb.finish()


def _tap_row(kb: KernelBuilder, spec: PoolSpec, src, iy, ox, ox0, ox_ok, acc_slot, count_slot) -> None:  # type: ignore[no-untyped-def]
    g = spec.geometry
    b = kb.b
    row_ok = b.icmp_unsigned("<", iy, i64(g.h))
    row_counted = b.and_(b.icmp_signed(">=", iy, i64(-g.pad[0])), b.icmp_signed("<", iy, i64(g.h + spec.pad_end[0])))
    if spec.method == "avg" and not spec.exclude_pad:
        with kb.if_(row_counted):
            count = b.load(count_slot)
            for kx in range(g.kw):
                ix = b.add(b.mul(ox, kb.splat(i64(g.stride[1]))), kb.splat(i64(kx * g.dilation[1] - g.pad[1])))
                inside = b.and_(b.icmp_signed(">=", ix, kb.splat(i64(-g.pad[1]))), b.icmp_signed("<", ix, kb.splat(i64(g.w + spec.pad_end[1]))))
                count = b.fadd(count, b.select(inside, kb.vconst(1.0), kb.vconst(0.0)))
            b.store(count, count_slot)
    with kb.if_(row_ok):
        row = kb.at(src, b.mul(iy, i64(g.w)))
        acc, count = b.load(acc_slot), b.load(count_slot)
        for kx in range(g.kw):
            ix = b.add(b.mul(ox, kb.splat(i64(g.stride[1]))), kb.splat(i64(kx * g.dilation[1] - g.pad[1])))
            ok = b.and_(ox_ok, b.icmp_unsigned("<", ix, kb.splat(i64(g.w))))
            fill = LOWEST if spec.method == "max" else 0.0
            if g.stride[1] == 1:
                start = b.add(ox0, i64(kx * g.dilation[1] - g.pad[1]))
                values = kb.vload(kb.at(row, start), mask=ok, fill=fill)
            elif g.stride[1] == 2:
                start = b.add(b.mul(ox0, i64(2)), i64(kx * g.dilation[1] - g.pad[1]))
                values = kb.load_strided(row, start, [kb.inside(start, g.w), kb.inside(b.add(start, i64(VW)), g.w)], fill)
            else:
                values = kb.gather(row, ix, ok, fill)
            if spec.method == "max":
                acc = b.select(b.fcmp_unordered(">", values, acc), values, acc)
            else:
                acc = b.fadd(acc, values)
                if spec.exclude_pad:
                    count = b.fadd(count, b.select(ok, kb.vconst(1.0), kb.vconst(0.0)))
        b.store(acc, acc_slot)
        b.store(count, count_slot)



def _row_floats(g: ConvGeometry) -> int:
    """Floats of the padded row: the left pad and the input's whole vectors (the vertical
    pass stores whole vectors), and every lane the column taps of the last output vector read."""
    vectors = -(-g.ow // VW)
    return max(g.pad[1] + -(-g.w // VW) * VW, vectors * VW * g.stride[1] + (g.kw - 1) * g.dilation[1])


def _row_max_kernel(module: ir.Module, g: ConvGeometry, name: str) -> None:
    """Max pooling through a padded row: -inf where the window reaches past the input (as
    the reference pads; NaN propagates as the reference's max does, in any tap order)."""
    kb = KernelBuilder(module, name)
    x, out = kb.slot(0), kb.slot(1)
    b = kb.b
    length = _row_floats(g)
    full, tail = divmod(g.w, VW)
    with b.goto_block(kb.fn.entry_basic_block):
        row = b.bitcast(b.alloca(ir.ArrayType(F32, length)), ir.PointerType(F32))
        blank = b.bitcast(b.alloca(ir.ArrayType(F32, -(-g.w // VW) * VW)), ir.PointerType(F32))
    lowest = kb.vconst(-math.inf)
    with kb.loop(0, length - VW + 1, VW, name="fill") as i:  # pads: never written below
        kb.vstore(lowest, kb.at(row, i))
    if length % VW:
        kb.vstore(lowest, kb.at(row, length - VW))
    with kb.loop(0, -(-g.w // VW) * VW, VW, name="blank") as i:  # the row of a tap outside
        kb.vstore(lowest, kb.at(blank, i))
    q0, q1 = kb.partition(g.n * g.c)
    with kb.loop(q0, q1, name="plane") as q:
        src = kb.at(x, b.mul(q, i64(g.h * g.w)))
        dst = kb.at(out, b.mul(q, i64(g.p)))
        with kb.loop(0, g.oh, name="oy") as oy:
            rows = []
            for ky in range(g.kh):
                iy = b.sub(b.add(b.mul(oy, i64(g.stride[0])), i64(ky * g.dilation[0])), i64(g.pad[0]))
                rows.append(b.select(b.icmp_unsigned("<", iy, i64(g.h)), kb.at(src, b.mul(iy, i64(g.w))), blank))
            with kb.loop(0, full * VW, VW, name="xv") as xv:
                _column_max(kb, rows, xv, kb.at(row, i64(g.pad[1])), None)
            if tail:
                _column_max(kb, rows, i64(full * VW), kb.at(row, i64(g.pad[1])), kb.mask(tail))
            out_row = kb.at(dst, b.mul(oy, i64(g.ow)))
            whole, rest = divmod(g.ow, VW)
            with kb.loop(0, whole * VW, VW, name="ox") as ox0:
                kb.vstore(_window_max(kb, g, row, ox0), kb.at(out_row, ox0))
            if rest:
                kb.vstore(_window_max(kb, g, row, i64(whole * VW)), kb.at(out_row, i64(whole * VW)), kb.mask(rest))
    kb.finish()


def _column_max(kb: KernelBuilder, rows: list, xv, padded, mask) -> None:  # type: ignore[no-untyped-def]
    """padded[xv:xv+16] = the max over the window's input rows at columns xv..xv+15."""
    acc = None
    for r in rows:
        v = kb.vload(kb.at(r, xv), mask=mask, fill=-math.inf)
        acc = v if acc is None else BINARY["max"](kb, acc, v)
    kb.vstore(acc, kb.at(padded, xv))


def _window_max(kb: KernelBuilder, g: ConvGeometry, row, ox0):  # type: ignore[no-untyped-def]
    """The max over the window's columns of the padded row for outputs ox0..ox0+15."""
    b = kb.b
    acc = None
    for kx in range(g.kw):
        start = b.add(b.mul(ox0, i64(g.stride[1])), i64(kx * g.dilation[1]))
        if g.stride[1] == 1:
            v = kb.vload(kb.at(row, start))
        else:
            lo, hi = kb.vload(kb.at(row, start)), kb.vload(kb.at(row, b.add(start, i64(VW))))
            v = b.shuffle_vector(lo, hi, vector_constant(vec(VW, I32), list(range(0, 2 * VW, 2))))
        acc = v if acc is None else BINARY["max"](kb, acc, v)
    return acc
