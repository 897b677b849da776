"""Winograd F(m x m, 3x3): a 3x3 convolution as a*a GEMMs of fewer FMAs (stride 1: a = m + 2;
stride 2: a = 2m + 1, see `STRIDE2_MATRICES`).

Each m x m output tile is A^T [(G g G^T) . (B^T d B)] A of its a x a input tile d (Lavin and
Gray, 2016). With V = B^T d B per input channel and U = G g G^T per (output, input)
channel, the a*a positions (xi, nu) of the transform domain are independent GEMMs,
M[xi nu] (O x T) = U[xi nu] (O x C) . V[xi nu] (C x T) over the T tiles, which the GEMM
core runs as one batched kernel: 2.25x fewer FMAs than the direct convolution for
F(2x2, 3x3), 4x for F(4x4, 3x3). This module has the algorithms (B^T, G, A^T), the layer's
`WinogradSpec`, the layout of V and M, and the weights' transform U; `winograd_transforms`
has the two kernels around the GEMMs.

Tiles are numbered t = (n * TH + ty) * TW + tx. F(2x2, 3x3)'s transforms use only 0, +-1 and
+-1/2 (results within a few ulps of the direct convolution); F(4x4, 3x3)'s up to 8 and 1/24,
which costs about an order of magnitude more rounding (3e-6 of the output's range at 64
channels against 2e-7).

Stride 2: an m x m output tile reads a (2m + 1) x (2m + 1) input tile, tiles 2m input columns
apart. Along each axis the 3-tap stride-2 window splits into its even input samples (taps 0
and 2: a 2-tap stride-1 window, Winograd F(m, 2) of m + 1 points) and its odd ones (tap 1: m
plain products), one 1-D algorithm of 2m + 1 points (`strided_matrices`), nested into 2-D as
for stride 1: (2m + 1)^2 GEMMs per m x m outputs, 25/36 of the direct FMAs for m = 2 and
81/144 for m = 4. The odd rows of B^T and columns of A^T are unit vectors (free).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from irforge.backends.cpu.codegen.epilogue import Epilogue
from irforge.backends.cpu.codegen.irutil import VW

F = Fraction
MATRICES = {
    # m: (B^T [a x a], G [a x 3], A^T [m x a])
    2: (
        [[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
        [[1, 0, 0], [F(1, 2), F(1, 2), F(1, 2)], [F(1, 2), F(-1, 2), F(1, 2)], [0, 0, 1]],
        [[1, 1, 1, 0], [0, 1, -1, -1]],
    ),
    4: (
        [[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
         [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
        [[F(1, 4), 0, 0], [F(-1, 6), F(-1, 6), F(-1, 6)], [F(-1, 6), F(1, 6), F(-1, 6)],
         [F(1, 24), F(1, 12), F(1, 6)], [F(1, 24), F(-1, 12), F(1, 6)], [0, 0, 1]],
        [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
    ),
}

F_M_2 = {
    # m: Winograd F(m, 2) for the even input samples (B^T [m+1 x m+1], G [m+1 x 2], A^T [m x m+1]),
    # Toom-Cook at the points 0, -1 (m = 2) and 0, 1, -1, 2 (m = 4), and infinity
    2: ([[1, 1, 0], [0, 1, 0], [0, 1, 1]], [[1, 0], [-1, 1], [0, 1]], [[1, 1, 0], [0, -1, 1]]),
    4: (
        [[2, -1, -2, 1, 0], [0, -2, -1, 1, 0], [0, 2, -3, 1, 0], [0, -1, 0, 1, 0], [0, 2, -1, -2, 1]],
        [[F(1, 2), 0], [F(-1, 2), F(-1, 2)], [F(-1, 6), F(1, 6)], [F(1, 6), F(1, 3)], [0, 1]],
        [[1, 1, 1, 1, 0], [0, 1, -1, 2, 0], [0, 1, 1, 4, 0], [0, 1, -1, 8, 1]],
    ),
}


def strided_matrices(m: int) -> tuple[list[list], list[list], list[list]]:  # type: ignore[type-arg]
    """The 1-D stride-2 algorithm of 2m + 1 points over the input samples x_0..x_2m of a tile:
    points 0..m are F(m, 2) on the even samples with taps (g0, g2); point m + 1 + i is
    g1 * x_(2i+1), added to output i."""
    be, ge, ae = F_M_2[m]
    a = 2 * m + 1
    bt = [[0] * a for _ in range(a)]
    g = [[0] * 3 for _ in range(a)]
    at = [[0] * a for _ in range(m)]
    for j in range(m + 1):
        for col in range(m + 1):
            bt[j][2 * col] = be[j][col]
        g[j][0], g[j][2] = ge[j]
        for i in range(m):
            at[i][j] = ae[i][j]
    for i in range(m):
        bt[m + 1 + i][2 * i + 1] = 1
        g[m + 1 + i][1] = 1
        at[i][m + 1 + i] = 1
    return bt, g, at


STRIDE2_MATRICES = {m: strided_matrices(m) for m in F_M_2}


def matrices(m: int, stride: int = 1) -> tuple[list[list], list[list], list[list]]:  # type: ignore[type-arg]
    """(B^T [a x a], G [a x 3], A^T [m x a]) of F(m x m, 3x3) at this stride."""
    return MATRICES[m] if stride == 1 else STRIDE2_MATRICES[m]


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
    m: int = 2
    """output tile size: F(m x m, 3x3)"""
    stride: int = 1
    """1 or 2 (both axes)"""

    @property
    def step(self) -> int:
        """Input columns (rows) from one tile to the next."""
        return self.stride * self.m

    @property
    def a(self) -> int:
        """Input tile size = transform-domain points per axis."""
        return self.step + 3 - self.stride

    @property
    def th(self) -> int:
        return -(-self.oh // self.m)

    @property
    def tw(self) -> int:
        return -(-self.ow // self.m)

    @property
    def tiles(self) -> int:
        return self.n * self.th * self.tw


WHOLE_VECTOR_STORES = True
"""One sample's V is stored in whole vectors (see `v_channel`)."""


def whole_vector_stores(spec: WinogradSpec) -> bool:
    """Whether the input transform stores whole vectors: the lanes past a tile row land on
    the next tile row's first tiles, which the same thread writes afterwards (threads take
    whole channels), or, after a channel's last row, in its slack (`v_channel`). Masked
    stores (vmaskmovps, two per 16 lanes on AVX2) are slow on AMD hosts, and every tile row
    narrower than a vector (56x56 and 28x28 outputs: 14 and 7 tiles) took one per point.
    With several samples a channel's rows are not consecutive: masked stores there."""
    return WHOLE_VECTOR_STORES and spec.n == 1


EXACT_SLACK = 1
"""A channel's slack in V (`v_channel`): 0: a whole vector; 1: none where the whole-vector
stores end within the channel's tiles (`winograd_transforms.store_end`: 14x14 F(4x4) and 7x7
F(2x2), 16 tiles as one vector of four tile rows, where V was twice its tiles), else a
vector; 2: exactly the lanes the last store reaches past the tiles everywhere (49 tiles: 58,
not 65; 196: 198, not 212). The GEMM reads V's rows at that stride: the same values."""


def v_channel(spec: WinogradSpec) -> int:
    """Elements from one channel's tiles in V to the next's: the tiles, plus the slack the
    whole-vector stores write past them where they are used (`EXACT_SLACK`)."""
    if not whole_vector_stores(spec):
        return spec.tiles
    if not EXACT_SLACK:
        return spec.tiles + VW
    from irforge.backends.cpu.codegen.winograd_transforms import store_end  # it knows the stores' forms

    end = store_end(spec)
    if end <= spec.tiles:
        return spec.tiles
    return end if EXACT_SLACK == 2 else spec.tiles + VW


SPREAD_POINTS = True
"""The a*a transform-domain matrices of V and M are spaced apart by an odd number of cache
lines (see `point_stride`)."""


def point_stride(elements: int) -> int:
    """Elements from one transform-domain point's matrix to the next's: `elements` rounded up
    to a cache line, plus one line where that is an even number of lines. The transforms
    touch all a*a points per vector; at a multiple of 4 KiB apart (a 7x7 layer's V: 512
    channels x 32 tiles) they all map to one L1 set and alias: its input transform ran 7x
    slower per element than a 14x14 layer's."""
    if not SPREAD_POINTS:
        return elements
    lines = -(-elements // 16)
    return (lines + (lines % 2 == 0)) * 16


WEIGHT_CHUNK = 4096
"""(output, input) channel pairs transformed at a time: the f64 intermediates of a chunk stay
in L2 instead of streaming [a*a, O*C] f64 arrays through memory."""


def transform_weights(weights: np.ndarray, m: int = 2, stride: int = 1) -> np.ndarray:
    """[O, C, 3, 3] -> U [a*a, O, C] (xi-major), computed in float64.

    G g G^T as the two products by G, each row a few vector multiply-adds of f64 planes
    (one plane per weight tap) skipping G's zeros, chunk by chunk: 3-4x less CPU than one
    three-operand einsum (ResNet-50's sixteen 3x3 layers ~0.5 s), within an f32 ulp of it."""
    g = np.array(matrices(m, stride)[1], np.float64)
    a = g.shape[0]
    pairs = weights.shape[0] * weights.shape[1]
    taps = weights.reshape(pairs, 9)
    u = np.empty((a * a, pairs), np.float32)
    for start in range(0, pairs, WEIGHT_CHUNK):
        w = taps[start : start + WEIGHT_CHUNK].T.astype(np.float64)
        rows = [[_weighted_sum(g[x], (w[j], w[3 + j], w[6 + j])) for j in range(3)] for x in range(a)]
        for x in range(a):
            for y in range(a):
                u[x * a + y, start : start + WEIGHT_CHUNK] = _weighted_sum(g[y], rows[x])
    return u.reshape(-1, *weights.shape[:2])


def _weighted_sum(coefficients: np.ndarray, planes: tuple[np.ndarray, ...] | list[np.ndarray]) -> np.ndarray:
    """sum of coefficient * plane over the nonzero coefficients (a +-1 is an add/sub)."""
    out = None
    for coef, plane in zip(coefficients, planes):
        if coef == 0:
            continue
        term = plane if coef == 1 else -plane if coef == -1 else coef * plane
        out = term if out is None else out + term
    return out if out is not None else np.zeros_like(planes[0])
