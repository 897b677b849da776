"""Windowed max/average pooling over NCHW planes, 16 outputs of a row per vector.

Pooling at a column stride of 1 or 2 goes through a padded row (`_row_kernel`): per output
row, the max (sum) over the window's input rows is stored into a stack row that has -inf (0)
where the window reaches past the input, then each output vector takes the max (sum) over
the window's columns of that row with plain loads (an average then divides by the count). Otherwise window taps outside the input are
masked out of the loads (masked loads at stride 1, two and an even-lane shuffle at stride 2,
gathers otherwise); the average divides by the count of taps inside the input (exclude_pad)
or inside the padded input (ceil-mode overhang never counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from llvmlite import ir

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.epilogue import Epilogue, apply_epilogue
from irforge.backends.cpu.codegen.irutil import F32, I32, I64, VW, KernelBuilder, i64, vec, vector_constant
from irforge.backends.cpu.codegen.mathfn import BINARY

LOWEST = -3.4028234663852886e38
ROW_MAX = True
"""Max pooling at column stride 1 or 2 through a padded stack row (`_row_kernel`): the
masked, per-tap loads of the general kernel (two 16-lane masked loads and their i64 lane
masks per tap) made ResNet-50's 3x3 stride-2 pool 0.85 ms against onnxruntime's 0.11."""
ROW_AVG = True
"""Average pooling at column stride 1 (stride 2 on planes of at most a vector's columns) through the same padded row (zeros for the pad),
divided by the separable count of the window's taps inside the input (or the padded input):
Inception-v3's 3x3 stride-1 average pools ran 4.4-5.6x onnxruntime's time on the general
kernel's masked per-tap loads (35x35x192: 0.90 ms against 0.19)."""
SMALL_IN_REGISTERS = True
"""Planes of at most `REGISTER_VECTORS` vectors of columns in and out take the window's
columns as lane shuffles of the column reduction in registers instead of the stack row."""
REGISTER_VECTORS = 2
"""1: rows of up to 16 columns (8x8 planes); 2: up to 32 (Inception-v3's 17x17 pools)."""
ROW_FLOATS_MAX = 16384
"""Longest padded row (floats) kept on the stack; wider planes take the general kernel."""


@dataclass(frozen=True)
class PoolSpec:
    geometry: ConvGeometry
    method: str
    exclude_pad: bool
    pad_end: tuple[int, int]
    epilogue: Epilogue = Epilogue()
    """a following residual Add and activation, applied as each output vector is stored (the
    padded-row kernel only: `row_path`); the residual is the kernel's third slot"""


def row_path(spec: PoolSpec) -> bool:
    """Whether `spec` runs on the padded-row kernel (`_row_kernel`)."""
    g = spec.geometry
    # an average at column stride 2 over the stack row (whose window loads straddle its
    # stores) ran DenseNet's 2x2 stride-2 pools at 56x56 / 28x28 2.4-2.8x the general kernel
    small = SMALL_IN_REGISTERS and g.w <= REGISTER_VECTORS * VW and g.ow <= REGISTER_VECTORS * VW
    row_pays = ROW_MAX if spec.method == "max" else ROW_AVG and (g.stride[1] == 1 or small)
    return row_pays and g.stride[1] in (1, 2) and _row_floats(g) <= ROW_FLOATS_MAX


def pool_kernel(module: ir.Module, spec: PoolSpec, name: str) -> None:
    """args: X, out, [residual (`PoolSpec.epilogue`)]; threads split the (n, c) planes."""
    g = spec.geometry
    if row_path(spec):
        _row_kernel(module, spec, name)
        return
    assert spec.epilogue == Epilogue(), "a pool epilogue on the general kernel"
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


def _row_kernel(module: ir.Module, spec: PoolSpec, name: str) -> None:
    """Max or average pooling through a padded row. Max: -inf where the window reaches past
    the input (as the reference pads; NaN propagates as the reference's max does, in any tap
    order). Average: zeros there, the window's sum divided by rows counted (per output row)
    times columns counted (per output column, a stack row computed once): taps inside the
    input, or (without exclude_pad) inside the padded input; ceil-mode overhang never counts."""
    g, average = spec.geometry, spec.method == "avg"
    kb = KernelBuilder(module, name)
    x, out = kb.slot(0), kb.slot(1)
    res = kb.slot(2) if spec.epilogue.residual else None
    b = kb.b
    length = _row_floats(g)
    full, tail = divmod(g.w, VW)
    out_floats = -(-g.ow // VW) * VW
    with b.goto_block(kb.fn.entry_basic_block):
        row = b.bitcast(b.alloca(ir.ArrayType(F32, length)), ir.PointerType(F32))
        blank = b.bitcast(b.alloca(ir.ArrayType(F32, -(-g.w // VW) * VW)), ir.PointerType(F32))
        counts = b.bitcast(b.alloca(ir.ArrayType(F32, out_floats)), ir.PointerType(F32)) if average else None
    lowest = kb.vconst(0.0 if average else -math.inf)
    with kb.loop(0, length - VW + 1, VW, name="fill") as i:  # pads: never written below
        kb.vstore(lowest, kb.at(row, i))
    if length % VW:
        kb.vstore(lowest, kb.at(row, length - VW))
    with kb.loop(0, -(-g.w // VW) * VW, VW, name="blank") as i:  # the row of a tap outside
        kb.vstore(lowest, kb.at(blank, i))
    # the counted span of each axis: the input, or the input and its explicit pads
    (lo_y, hi_y), (lo_x, hi_x) = ((0, g.h), (0, g.w)) if spec.exclude_pad else (
        (-g.pad[0], g.h + spec.pad_end[0]), (-g.pad[1], g.w + spec.pad_end[1]))
    if counts is not None:
        lanes = ir.Constant(vec(VW, I64), list(range(VW)))
        with kb.loop(0, out_floats, VW, name="count") as ox0:
            ox = b.add(kb.splat(ox0), lanes)
            total = kb.vconst(0.0)
            for kx in range(g.kw):
                ix = b.add(b.mul(ox, kb.splat(i64(g.stride[1]))), kb.splat(i64(kx * g.dilation[1] - g.pad[1])))
                inside = b.and_(b.icmp_signed(">=", ix, kb.splat(i64(lo_x))), b.icmp_signed("<", ix, kb.splat(i64(hi_x))))
                total = b.fadd(total, b.select(inside, kb.vconst(1.0), kb.vconst(0.0)))
            kb.vstore(total, kb.at(counts, ox0))
    combine = BINARY["sum"] if average else BINARY["max"]
    # planes of at most a vector's columns in and out keep the row in a register
    # (`SMALL_IN_REGISTERS`): through the stack row, every window load straddled the row's
    # store at the pad's offset (no store forwarding): 8x8x1280 5.5x the general kernel's time
    in_registers = SMALL_IN_REGISTERS and g.w <= REGISTER_VECTORS * VW and g.ow <= REGISTER_VECTORS * VW
    q0, q1 = kb.partition(g.n * g.c)
    with kb.loop(q0, q1, name="plane") as q:
        src = kb.at(x, b.mul(q, i64(g.h * g.w)))
        dst = kb.at(out, b.mul(q, i64(g.p)))
        res_plane = kb.at(res, b.mul(q, i64(g.p))) if res is not None else None
        with kb.loop(0, g.oh, name="oy") as oy:
            rows = []
            counted = ir.Constant(F32, 0.0)
            for ky in range(g.kh):
                iy = b.sub(b.add(b.mul(oy, i64(g.stride[0])), i64(ky * g.dilation[0])), i64(g.pad[0]))
                rows.append(b.select(b.icmp_unsigned("<", iy, i64(g.h)), kb.at(src, b.mul(iy, i64(g.w))), blank))
                if average:
                    inside = b.and_(b.icmp_signed(">=", iy, i64(lo_y)), b.icmp_signed("<", iy, i64(hi_y)))
                    counted = b.fadd(counted, b.select(inside, ir.Constant(F32, 1.0), ir.Constant(F32, 0.0)))
            out_row = kb.at(dst, b.mul(oy, i64(g.ow)))
            res_row = kb.at(res_plane, b.mul(oy, i64(g.ow))) if res_plane is not None else None
            whole, rest = divmod(g.ow, VW)

            def divided(acc, ox0, mask=None):  # type: ignore[no-untyped-def]
                """The output vector at ox0: the average's division, then the epilogue."""
                if counts is not None:
                    acc = b.fdiv(acc, b.fmul(kb.splat(counted), kb.vload(kb.at(counts, ox0))))
                if spec.epilogue == Epilogue():
                    return acc
                residual = kb.vload(kb.at(res_row, ox0), mask=mask) if res_row is not None else None
                return apply_epilogue(kb, spec.epilogue, acc, residual)

            if in_registers:
                # the row's columns (up to REGISTER_VECTORS vectors) stay in registers: each
                # output vector's window columns are constant lane picks of them (pad lanes:
                # the fill)
                inputs = -(-g.w // VW)
                parts = [_column_values(kb, combine, rows, i64(v * VW), kb.mask(g.w - v * VW) if (v + 1) * VW > g.w else None)
                         for v in range(inputs)]
                column = parts[0]
                if inputs == 2:
                    column = b.shuffle_vector(parts[0], parts[1], vector_constant(vec(2 * VW, I32), list(range(2 * VW))))
                fill = kb.vconst(0.0 if average else -math.inf, inputs * VW)
                for o in range(-(-g.ow // VW)):
                    acc = None
                    for kx in range(g.kw):
                        lanes = [g.stride[1] * (o * VW + lane) + kx * g.dilation[1] - g.pad[1] for lane in range(VW)]
                        picks = [i if 0 <= i < g.w and o * VW + lane < g.ow else inputs * VW for lane, i in enumerate(lanes)]
                        v = b.shuffle_vector(column, fill, vector_constant(vec(VW, I32), picks))
                        acc = v if acc is None else combine(kb, acc, v)
                    left = g.ow - o * VW
                    mask = kb.mask(left) if left < VW else None
                    kb.vstore(divided(acc, i64(o * VW), mask), kb.at(out_row, i64(o * VW)), mask)
            else:
                with kb.loop(0, full * VW, VW, name="xv") as xv:
                    _column_reduce(kb, combine, rows, xv, kb.at(row, i64(g.pad[1])), None)
                if tail:
                    _column_reduce(kb, combine, rows, i64(full * VW), kb.at(row, i64(g.pad[1])), kb.mask(tail))

                with kb.loop(0, whole * VW, VW, name="ox") as ox0:
                    kb.vstore(divided(_window_reduce(kb, combine, g, row, ox0), ox0), kb.at(out_row, ox0))
                if rest:
                    ox0 = i64(whole * VW)
                    kb.vstore(divided(_window_reduce(kb, combine, g, row, ox0), ox0, kb.mask(rest)), kb.at(out_row, ox0), kb.mask(rest))
    kb.finish()


def _column_values(kb: KernelBuilder, combine, rows: list, xv, mask):  # type: ignore[no-untyped-def]
    """The max (sum) over the window's input rows at columns xv..xv+15 (masked-off lanes:
    the pad value, -inf or 0)."""
    acc = None
    fill = -math.inf if combine is BINARY["max"] else 0.0
    for r in rows:
        v = kb.vload(kb.at(r, xv), mask=mask, fill=fill)
        acc = v if acc is None else combine(kb, acc, v)
    return acc


def _column_reduce(kb: KernelBuilder, combine, rows: list, xv, padded, mask) -> None:  # type: ignore[no-untyped-def]
    """padded[xv:xv+16] = `_column_values`."""
    kb.vstore(_column_values(kb, combine, rows, xv, mask), kb.at(padded, xv))


def _window_reduce(kb: KernelBuilder, combine, g: ConvGeometry, row, ox0):  # type: ignore[no-untyped-def]
    """The max (sum) over the window's columns of the padded row for outputs ox0..ox0+15."""
    b = kb.b
    acc = None
    for kx in range(g.kw):
        start = b.add(b.mul(ox0, i64(g.stride[1])), i64(kx * g.dilation[1]))
        if g.stride[1] == 1:
            v = kb.vload(kb.at(row, start))
        else:
            lo, hi = kb.vload(kb.at(row, start)), kb.vload(kb.at(row, b.add(start, i64(VW))))
            v = b.shuffle_vector(lo, hi, vector_constant(vec(VW, I32), list(range(0, 2 * VW, 2))))
        acc = v if acc is None else combine(kb, acc, v)
    return acc
