"""A dilated convolution as bands of output rows, each with only the kernel rows it reads.

At a dilation comparable to the input (DeepLab's ASPP: rates 6, 12 and 18 on a 14x14 map at
224 pixels) most taps of most outputs read padding: at rate 12 the top kernel row reads the
input for output rows 12-13 only, the bottom one for rows 0-1, so an im2col GEMM spends 57%
of its flops (and im2col stores) on zeros. Output rows whose live kernel rows are the same
form a band (rate 12: rows 0-1 read kernel rows 1-2, rows 2-11 row 1, rows 12-13 rows 0-1);
each band is a complete convolution of its own (the live kernel rows, the same columns, a
shifted pad) whose GEMM writes that band of the output plane in place (`GemmSpec.c_offset`,
C rows a whole plane apart), so the epilogue (bias, activation, residual) applies unchanged.
Rate 12 at 14x14: 18 of 42 (output row, kernel row) pairs; rate 6: 30 of 42.
"""

from __future__ import annotations

from irforge.backends.cpu.codegen.conv import ConvGeometry, live_taps

MAX_SHARE = 0.8
"""Bands pay when their (output row, kernel row) pairs are at most this share of the whole
window's: each band is one more im2col and GEMM phase, and a GEMM over 2 output rows (28
columns at 14x14) runs its panels half empty."""


def _live_rows(g: ConvGeometry, y: int) -> tuple[int, int] | None:
    """The first and last kernel row that reads an input row at output row y."""
    return live_taps(g.h, range(y, y + 1), g.kh, g.stride[0], g.dilation[0], g.pad[0])


def bands(g: ConvGeometry) -> list[tuple[int, int, int, int]] | None:
    """(first output row, end, first kernel row, last kernel row) per band; None where some
    output row reads only padding (it is the bias alone: left to the whole window)."""
    out: list[tuple[int, int, int, int]] = []
    for y in range(g.oh):
        live = _live_rows(g, y)
        if live is None:
            return None
        if out and out[-1][2:] == live:
            out[-1] = (out[-1][0], y + 1, *live)
        else:
            out.append((y, y + 1, *live))
    return out


def row_bands_pay(g: ConvGeometry) -> bool:
    """A dilated dense window whose bands skip enough padding (see MAX_SHARE)."""
    if g.group != 1 or g.dilation[0] == 1 or g.kh == 1:
        return False
    found = bands(g)
    if found is None or len(found) < 2:
        return False
    pairs = sum((y1 - y0) * (k1 - k0 + 1) for y0, y1, k0, k1 in found)
    return pairs <= MAX_SHARE * g.oh * g.kh


def row_bands(g: ConvGeometry, weights):  # type: ignore[no-untyped-def]
    """(band geometry, its weights [o, c, live rows, kw], first output row) per band: output
    row y of a band is row y0 + y of the whole, kernel row k is row k0 + k, so its input row
    y*s + k*d - pad' equals the whole's (y0 + y)*s + (k0 + k)*d - pad (pad' may be negative:
    the band starts inside the input)."""
    out = []
    for y0, y1, k0, k1 in bands(g) or []:
        pad = (g.pad[0] - y0 * g.stride[0] - k0 * g.dilation[0], g.pad[1])
        band = ConvGeometry(g.n, g.c, g.h, g.w, k1 - k0 + 1, g.kw, y1 - y0, g.ow, g.stride, g.dilation, pad, g.group)
        out.append((band, weights[:, :, k0:k1 + 1].copy(), y0))
    return out
