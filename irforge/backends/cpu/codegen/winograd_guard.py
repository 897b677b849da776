"""Keeping a non-finite input local in a Winograd layer (see `ops.winograd.NONFINITE_GUARD`).

A Winograd tile's input transform mixes all a x a inputs of its tile, with zero coefficients
too, and its output transform mixes all a x a points: one inf or NaN input (inf * 0 = NaN,
inf - inf = NaN) makes every output of its tile non-finite, where a direct window (onnxruntime,
the reference) reaches only the outputs whose 3x3 window covers it. Two kernels around the
layer's phases keep it exact:

- `scan_kernel` (before the input transform): one flag per input plane (n, c), set where the
  plane holds a value v with !(|v| < bound): inf, NaN, or a finite value so large that the
  transforms (whose coefficients reach 10 and 19 per axis for F(4x4)) could overflow where
  the direct sums do not (`safe_bound`). A load, an and, a compare and an or per 16 floats,
  over data the input transform reads next.
- `fix_kernel` (after the output transform): returns at once where no plane of the batch is
  flagged; else it finds the tiles whose a x a input window holds such a value and recomputes
  their outputs by the direct window (every output channel, with the bias, residual and
  activation), over the Winograd outputs. It reads the 3x3 weights back from the layer's
  packed transformed weights U = G g G^T (`taps_from_points`: a left inverse of G with one or
  two points per tap, exact in the corners, within a few ulps of the taps' magnitude in the
  middle) instead of a second copy of the raw weights among the program's constants (ResNet-50
  +43 MiB, VGG-16 +56 MiB when it kept one).

Both are scalar or plain loops: the scan's cost is what finite inputs pay; the fix-up runs only
for inputs with non-finite (or huge) values, and its direct sums are slow but exact.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from llvmlite import ir

from irforge.backends.cpu.codegen.epilogue import apply_epilogue
from irforge.backends.cpu.codegen.gemm import KC, MR
from irforge.backends.cpu.codegen.irutil import F32, F64, I32, VW, KernelBuilder, f32, i64, undef, vec
from irforge.backends.cpu.codegen.winograd import WinogradSpec, matrices

FLT_MAX = float(np.finfo(np.float32).max)


def safe_bound(u: np.ndarray, spec: WinogradSpec, channels: int) -> float:
    """The largest input magnitude below which no Winograd intermediate of this layer can
    overflow: |V| <= sb^2 |x|, |M| <= channels max|U| |V|, |A^T M A| <= sa^2 |M| (sb, sa: the
    largest row sums of |B^T| and |A^T|), with a factor 4 of slack for the bias and residual.
    0 where U is not finite (every plane is flagged: all outputs by the direct window)."""
    bt, _, at = matrices(spec.m, spec.stride)
    sb = max(sum(abs(float(c)) for c in row) for row in bt)
    sa = max(sum(abs(float(c)) for c in row) for row in at)
    with np.errstate(all="ignore"):
        umax = float(np.abs(u).max()) if u.size else 0.0
    if not np.isfinite(umax):
        return 0.0
    bound = FLT_MAX / (4.0 * sa * sa * sb * sb * max(channels, 1) * max(umax, 1e-30))
    return float(2.0 ** np.floor(np.log2(min(bound, FLT_MAX))))  # (down to a power of 2: layers share scans)


def taps_from_points(g: list[list]) -> list[list[tuple[int, Fraction]]]:  # type: ignore[type-arg]
    """A left inverse L of the weight transform G [a x 3] (L G = I), row t as its nonzero
    (point, coefficient) pairs: a point whose row of G is a multiple of tap t's unit vector,
    else the first pair of points that combine to it (found and checked in exact fractions).
    g[ky, kx] = sum over (x, y) of L[ky][x] L[kx][y] U[x * a + y]."""
    rows = [[Fraction(v) for v in row] for row in g]
    inverse = []
    for t in range(3):
        found = _one_point(rows, t) or _two_points(rows, t)
        if found is None:
            raise ValueError(f"the Winograd weight transform {g} has no left inverse of one or two points per tap")
        inverse.append(found)
    return inverse


def _one_point(rows: list[list[Fraction]], t: int) -> list[tuple[int, Fraction]] | None:
    for i, row in enumerate(rows):
        if row[t] and all(v == 0 for k, v in enumerate(row) if k != t):
            return [(i, 1 / row[t])]
    return None


def _two_points(rows: list[list[Fraction]], t: int) -> list[tuple[int, Fraction]] | None:
    """alpha p + beta q = tap t's unit vector: solved on taps t and t + 1, checked on all three."""
    u = (t + 1) % 3
    for (i, p), (j, q) in itertools.combinations(enumerate(rows), 2):
        det = p[t] * q[u] - q[t] * p[u]
        if det == 0:
            continue
        alpha, beta = q[u] / det, -p[u] / det
        if all(alpha * p[k] + beta * q[k] == (k == t) for k in range(3)):
            return [(i, alpha), (j, beta)]
    return None


@dataclass(frozen=True)
class GuardSpec:
    """The layer (`WinogradSpec`) and its groups. The input magnitude it flags (`safe_bound`)
    is a run-time argument, not part of the spec: it follows the weights, and a model with
    other weights must find every kernel in the object cache."""

    spec: WinogradSpec
    group: int


@dataclass(frozen=True)
class ScanSpec:
    """The planes a scan flags: their count and their floats each (the magnitude it flags is
    an argument, see `GuardSpec`)."""

    planes: int
    plane: int


def scan_kernel(module: ir.Module, scan: ScanSpec, name: str) -> None:
    """args: X [planes, plane], flags i32 [planes], the bound (one f32); threads split the planes, each writes all
    of its planes' flags (0 or 1) every run. A plane's largest |x| is kept as bits (an and
    and an unsigned max per vector, vpmaxud: NaN and inf above every finite value), compared
    with the bound's once per plane."""
    kb = KernelBuilder(module, name)
    x, flags = kb.slot(0, I32), kb.slot(1, I32)
    b = kb.b
    bound_bits = b.load(kb.slot(2, I32))  # positive f32s, inf and NaNs order as their bits (unsigned)
    plane, whole = scan.plane, scan.plane - scan.plane % VW
    ints = vec(VW, I32)
    magnitude = kb.vconst(0x7FFFFFFF, element=I32)
    acc = b.alloca(ints)
    top = kb.intrinsic(f"llvm.vector.reduce.umax.v{VW}i32", I32, [ints])

    def fold(v: ir.Value) -> None:
        v, was = b.and_(v, magnitude), b.load(acc)
        b.store(b.select(b.icmp_unsigned(">", v, was), v, was), acc)

    p0, p1 = kb.partition(scan.planes)
    with kb.loop(p0, p1, name="plane") as p:
        base = kb.at(x, b.mul(p, i64(plane)))
        b.store(kb.vconst(0, element=I32), acc)
        if whole:
            with kb.loop(0, whole, VW, name="v") as i:
                fold(kb.vload(kb.at(base, i)))
        if plane % VW:
            fold(kb.vload(kb.at(base, whole), mask=kb.mask(plane % VW)))  # (masked lanes: 0)
        flagged = b.icmp_unsigned(">=", b.call(top, [b.load(acc)]), bound_bits)
        b.store(b.zext(flagged, I32), kb.at(flags, p))
    kb.finish()


def fix_kernel(module: ir.Module, guard: GuardSpec, name: str) -> None:
    """args: X, flags, the layer's packed U (`pack_a_all` of its [point, group] matrices of
    [O / group, C / group], K blocks of `KC`), Y, [bias], [residual], the bound (one f32);
    threads split the output channels."""
    spec = guard.spec
    module.unroll = False  # type: ignore[attr-defined]  # a rare path: small code
    kb = KernelBuilder(module, name)
    x, flags, wt, y = kb.slot(0), kb.slot(1, I32), kb.slot(2), kb.slot(3)
    bias = kb.slot(4) if spec.bias else None
    res = kb.slot(4 + spec.bias) if spec.epilogue.residual else None
    b = kb.b
    bound = b.load(kb.slot(4 + spec.bias + bool(spec.epilogue.residual)))
    s, m, a = spec.stride, spec.m, spec.a
    og, cg = spec.o // guard.group, spec.c // guard.group
    plane, out_plane = spec.h * spec.w, spec.oh * spec.ow
    zero32 = ir.Constant(I32, 0)
    with b.goto_block(kb.fn.entry_basic_block):
        flagged = b.alloca(I32)
        bad = b.alloca(I32)
        acc = b.alloca(F32)
    o0, o1 = kb.partition(spec.o)

    def inside(index, size: int) -> ir.Value:  # type: ignore[no-untyped-def]
        return b.icmp_unsigned("<", index, i64(size))

    with kb.loop(0, spec.n, name="n") as n:
        b.store(zero32, flagged)
        with kb.loop(0, spec.c, name="fc") as c:
            b.store(b.or_(b.load(flagged), b.load(kb.at(flags, b.add(b.mul(n, i64(spec.c)), c)))), flagged)
        with kb.if_(b.icmp_unsigned("!=", b.load(flagged), zero32)):
            with kb.loop(0, spec.th, name="ty") as ty, kb.loop(0, spec.tw, name="tx") as tx:
                # the tile's input window: the a x a inputs its transform reads
                b.store(zero32, bad)
                with kb.loop(0, spec.c, name="c") as c:
                    nc = b.add(b.mul(n, i64(spec.c)), c)
                    with kb.if_(b.icmp_unsigned("!=", b.load(kb.at(flags, nc)), zero32)):
                        with kb.loop(0, a, name="wi") as i, kb.loop(0, a, name="wj") as j:
                            iy = b.sub(b.add(b.mul(ty, i64(s * m)), i), i64(spec.pad[0]))
                            ix = b.sub(b.add(b.mul(tx, i64(s * m)), j), i64(spec.pad[1]))
                            with kb.if_(b.and_(inside(iy, spec.h), inside(ix, spec.w))):
                                v = b.load(kb.at(x, b.add(b.mul(nc, i64(plane)), b.add(b.mul(iy, i64(spec.w)), ix))))
                                big = b.fcmp_unordered(">=", kb.call_unary("fabs", v), bound)
                                b.store(b.or_(b.load(bad), b.zext(big, I32)), bad)
                with kb.if_(b.icmp_unsigned("!=", b.load(bad), zero32)):
                    _direct_tile(kb, guard, x, wt, y, bias, res, acc, n, ty, tx, o0, o1, og, cg, plane, out_plane)
    kb.finish()


def _direct_tile(kb: KernelBuilder, guard: GuardSpec, x, wt, y, bias, res, acc, n, ty, tx, o0, o1, og: int, cg: int,  # type: ignore[no-untyped-def]
                 plane: int, out_plane: int) -> None:
    """Outputs of tile (n, ty, tx) for channels [o0, o1) by the direct 3x3 window over the
    input (taps in the padding skipped), then the bias, residual and activation; each tap's
    weight read back from U (`taps_from_points`, summed in f64)."""
    spec = guard.spec
    b = kb.b
    s, m, a = spec.stride, spec.m, spec.a
    inverse = taps_from_points(matrices(m, s)[1])
    blocks = -(-og // MR)
    matrix = blocks * MR * cg  # one (point, group) matrix's packed floats
    point_step = guard.group * matrix  # from one transform point's matrices to the next's
    with kb.loop(o0, o1, name="o") as o:
        group = b.udiv(o, i64(og))
        first = b.mul(group, i64(cg))  # the group's first input channel
        row = b.urem(o, i64(og))
        lane = b.add(b.mul(group, i64(matrix)), b.urem(row, i64(MR)))
        row_block = b.udiv(row, i64(MR))
        with kb.loop(0, m, name="i") as i, kb.loop(0, m, name="j") as j:
            oy, ox = b.add(b.mul(ty, i64(m)), i), b.add(b.mul(tx, i64(m)), j)
            with kb.if_(b.and_(b.icmp_unsigned("<", oy, i64(spec.oh)), b.icmp_unsigned("<", ox, i64(spec.ow)))):
                b.store(f32(0.0), acc)
                for k0 in range(0, cg, KC):  # the pack's K blocks: [row block][width][MR] each
                    width = min(KC, cg - k0)
                    block_at = b.add(lane, b.add(i64(k0 * blocks * MR), b.mul(row_block, i64(MR * width))))
                    with kb.loop(k0, k0 + width, name="c") as c:
                        at = b.add(block_at, b.mul(b.sub(c, i64(k0)), i64(MR)))  # U[point 0][o][c]
                        plane_at = b.mul(b.add(b.mul(n, i64(spec.c)), b.add(first, c)), i64(plane))
                        for ky in range(3):
                            iy = b.sub(b.add(b.mul(oy, i64(s)), i64(ky)), i64(spec.pad[0]))
                            for kx in range(3):
                                ix = b.sub(b.add(b.mul(ox, i64(s)), i64(kx)), i64(spec.pad[1]))
                                with kb.if_(b.and_(b.icmp_unsigned("<", iy, i64(spec.h)), b.icmp_unsigned("<", ix, i64(spec.w)))):
                                    xv = b.load(kb.at(x, b.add(plane_at, b.add(b.mul(iy, i64(spec.w)), ix))))
                                    weight = _tap_weight(kb, wt, at, [((px * a + py) * point_step, float(cy * cx))
                                                                      for px, cy in inverse[ky] for py, cx in inverse[kx]])
                                    b.store(b.fadd(b.load(acc), b.fmul(weight, xv)), acc)
                value = b.load(acc)
                if bias is not None:
                    value = b.fadd(value, b.load(kb.at(bias, o)))
                at = b.add(b.mul(b.add(b.mul(n, i64(spec.o)), o), i64(out_plane)), b.add(b.mul(oy, i64(spec.ow)), ox))
                lane = ir.Constant(I32, 0)
                one = b.insert_element(undef(vec(1, F32)), value, lane)
                residual = b.insert_element(undef(vec(1, F32)), b.load(kb.at(res, at)), lane) if res is not None else None
                b.store(b.extract_element(apply_epilogue(kb, spec.epilogue, one, residual), lane), kb.at(y, at))


def _tap_weight(kb: KernelBuilder, wt: ir.Value, at: ir.Value, terms: list[tuple[int, float]]) -> ir.Value:
    """One 3x3 weight from U: the sum, in f64, of coefficient x U at `at` + offset over `terms`."""
    b = kb.b
    total = None
    for offset, coefficient in terms:
        term = b.fmul(b.fpext(b.load(kb.at(wt, b.add(at, i64(offset)))), F64), ir.Constant(F64, coefficient))
        total = term if total is None else b.fadd(total, term)
    return b.fptrunc(total, F32)
