"""Winograd F(2x2, 3x3): a 3x3 stride-1 convolution as 16 GEMMs of 2.25x fewer FMAs.

Each 2x2 output tile is A^T [(G g G^T) . (B^T d B)] A of its 4x4 input tile d (Lavin and
Gray, 2016). With V = B^T d B per input channel and U = G g G^T per (output, input)
channel, the 16 positions (xi, nu) of the 4x4 transform domain are independent GEMMs,
M[xi nu] (O x T) = U[xi nu] (O x C) . V[xi nu] (C x T) over the T tiles, which the GEMM
core runs as one batched kernel. This module has the two transforms around it:

- `input_transform_kernel`: X [N, C, H, W] -> V [16][C][T], 16 tiles of a tile row per
  vector: each input row of the tiles is three masked loads (48 columns from 2 tx0 - pad)
  and even/odd-lane shuffles, then 24 additions;
- `output_transform_kernel`: M [16][O][T] -> Y [N, O, OH, OW], with the bias, a residual
  and ReLU/Clamp applied to the output vectors (interleaved back to 32 columns).

Tiles are numbered t = (n * TH + ty) * TW + tx. F(2, 3)'s transforms use only 0, +-1 and
+-1/2, so results stay within a few ulps of the direct convolution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from llvmlite import ir

from irforge.backends.cpu.codegen.epilogue import Epilogue, apply_epilogue
from irforge.backends.cpu.codegen.irutil import I32, I64, VW, KernelBuilder, i64, vec

G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float64)


@dataclass(frozen=True)
class WinogradSpec:
    n: int
    c: int
    o: int
    h: int
    w: int
    oh: int
    ow: int
    pad: tuple[int, int]
    """pads_begin (top, left)"""
    bias: bool = False
    epilogue: Epilogue = Epilogue()

    @property
    def th(self) -> int:
        return -(-self.oh // 2)

    @property
    def tw(self) -> int:
        return -(-self.ow // 2)

    @property
    def tiles(self) -> int:
        return self.n * self.th * self.tw


def transform_weights(weights: np.ndarray) -> np.ndarray:
    """[O, C, 3, 3] -> U [16, O, C] (xi-major), computed in float64."""
    u = np.einsum("ai,ocij,bj->aboc", G, weights.astype(np.float64), G)
    return u.reshape(16, *weights.shape[:2]).astype(np.float32)


def _lanes(offset: int = 0, step: int = 1) -> ir.Constant:
    return ir.Constant(vec(VW, I64), [offset + step * i for i in range(VW)])


def _shuffle(kb: KernelBuilder, a, b, lanes: list[int]):  # type: ignore[no-untyped-def]
    return kb.b.shuffle_vector(a, b, ir.Constant(vec(VW, I32), lanes))


def input_transform_kernel(module: ir.Module, spec: WinogradSpec, name: str) -> None:
    """args: X, V; threads split the (n, c, tile row) rows."""
    kb = KernelBuilder(module, name)
    x, v = kb.slot(0), kb.slot(1)
    b = kb.b
    rows = spec.n * spec.c * spec.th
    r0, r1 = kb.partition(rows)
    with kb.loop(r0, r1, name="row") as r:
        ty = b.urem(r, i64(spec.th))
        nc = b.udiv(r, i64(spec.th))
        n, c = b.udiv(nc, i64(spec.c)), b.urem(nc, i64(spec.c))
        plane = kb.at(x, b.mul(nc, i64(spec.h * spec.w)))
        tile_row = b.add(b.mul(b.add(b.mul(n, i64(spec.th)), ty), i64(spec.tw)), i64(0))
        with kb.loop(0, spec.tw, VW, name="tx") as tx0:
            d = []
            for i in range(4):
                iy = b.sub(b.add(b.mul(ty, i64(2)), i64(i)), i64(spec.pad[0]))
                row_ok = kb.splat(b.icmp_unsigned("<", iy, i64(spec.h)))
                row = kb.at(plane, b.mul(b.select(b.icmp_unsigned("<", iy, i64(spec.h)), iy, i64(0)), i64(spec.w)))
                start = b.sub(b.mul(tx0, i64(2)), i64(spec.pad[1]))
                parts = []
                for part in range(3):
                    at = b.add(start, i64(part * VW))
                    ok = b.and_(b.icmp_unsigned("<", b.add(kb.splat(at), _lanes()), kb.splat(i64(spec.w))), row_ok)
                    parts.append(kb.vload(b.gep(row, [at]), mask=ok))
                even = _shuffle(kb, parts[0], parts[1], list(range(0, 2 * VW, 2)))
                odd = _shuffle(kb, parts[0], parts[1], list(range(1, 2 * VW, 2)))
                # columns 2 tx + 2 and 2 tx + 3: the even/odd lanes one pair on; the last
                # lane's come from the third load (window columns 32 and 33)
                after = _shuffle(kb, parts[2], parts[2], [0, 1] + [0] * (VW - 2))
                even2 = _shuffle(kb, even, after, list(range(1, VW)) + [VW])
                odd2 = _shuffle(kb, odd, after, list(range(1, VW)) + [VW + 1])
                d.append([even, odd, even2, odd2])
            fsub, fadd = b.fsub, b.fadd
            t = [
                [fsub(d[0][j], d[2][j]) for j in range(4)],
                [fadd(d[1][j], d[2][j]) for j in range(4)],
                [fsub(d[2][j], d[1][j]) for j in range(4)],
                [fsub(d[1][j], d[3][j]) for j in range(4)],
            ]
            tiles_left = b.sub(i64(spec.tw), tx0)
            mask = kb.mask(tiles_left)
            base = b.add(b.mul(c, i64(spec.tiles)), b.add(tile_row, tx0))
            for i in range(4):
                row_v = [fsub(t[i][0], t[i][2]), fadd(t[i][1], t[i][2]), fsub(t[i][2], t[i][1]), fsub(t[i][1], t[i][3])]
                for j in range(4):
                    kb.vstore(row_v[j], kb.at(v, b.add(base, i64((i * 4 + j) * spec.c * spec.tiles))), mask)
    kb.finish()


def output_transform_kernel(module: ir.Module, spec: WinogradSpec, name: str) -> None:
    """args: M, Y, [bias], [residual]; threads split the (n, o, tile row) rows."""
    kb = KernelBuilder(module, name)
    m, y = kb.slot(0), kb.slot(1)
    extra = 2
    bias = kb.slot(extra) if spec.bias else None
    extra += spec.bias
    res = kb.slot(extra) if spec.epilogue.residual else None
    b = kb.b
    rows = spec.n * spec.o * spec.th
    r0, r1 = kb.partition(rows)
    low = list(range(VW // 2))
    interleave_lo = [k for i in low for k in (i, i + VW)]
    interleave_hi = [k for i in range(VW // 2, VW) for k in (i, i + VW)]
    with kb.loop(r0, r1, name="row") as r:
        ty = b.urem(r, i64(spec.th))
        no = b.udiv(r, i64(spec.th))
        n, o = b.udiv(no, i64(spec.o)), b.urem(no, i64(spec.o))
        out_plane = b.mul(no, i64(spec.oh * spec.ow))
        tile_row = b.mul(b.add(b.mul(n, i64(spec.th)), ty), i64(spec.tw))
        bias_v = kb.splat(b.load(kb.at(bias, o))) if bias is not None else None
        with kb.loop(0, spec.tw, VW, name="tx") as tx0:
            base = b.add(b.mul(o, i64(spec.tiles)), b.add(tile_row, tx0))
            mv = [[kb.vload(kb.at(m, b.add(base, i64((i * 4 + j) * spec.o * spec.tiles)))) for j in range(4)] for i in range(4)]
            fadd, fsub = b.fadd, b.fsub
            s = [
                [fadd(fadd(mv[0][j], mv[1][j]), mv[2][j]) for j in range(4)],
                [fsub(fsub(mv[1][j], mv[2][j]), mv[3][j]) for j in range(4)],
            ]
            for i in range(2):
                oy = b.add(b.mul(ty, i64(2)), i64(i))
                with kb.if_(b.icmp_signed("<", oy, i64(spec.oh))):
                    y0 = fadd(fadd(s[i][0], s[i][1]), s[i][2])
                    y1 = fsub(fsub(s[i][1], s[i][2]), s[i][3])
                    at = b.add(out_plane, b.add(b.mul(oy, i64(spec.ow)), b.mul(tx0, i64(2))))
                    for half, lanes in enumerate((interleave_lo, interleave_hi)):
                        value = _shuffle(kb, y0, y1, lanes)
                        cols_left = b.sub(i64(spec.ow), b.add(b.mul(tx0, i64(2)), i64(half * VW)))
                        mask = kb.mask(cols_left)
                        ptr = b.add(at, i64(half * VW))
                        if bias_v is not None:
                            value = fadd(value, bias_v)
                        residual = kb.vload(kb.at(res, ptr), mask=mask) if res is not None else None
                        value = apply_epilogue(kb, spec.epilogue, value, residual)
                        kb.vstore(value, kb.at(y, ptr), mask)
    kb.finish()
