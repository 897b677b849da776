"""Dilated 3x3 convolutions as Winograd on the input's phase images (space to batch).

A 3x3 window with dilation (dy, dx) reads rows y + ky*dy - pad: output rows of one residue
y % dy read input rows of that same residue only. Split the input into its dy*dx phase
images (rows py, py + dy, ...; columns px, px + dx, ...) stacked as a batch, and each output
phase is an ordinary (undilated) 3x3 convolution of its input phase with padding pad / d:
the Winograd kernels run it as a batch of dy*dx images, and a copy puts the output phases
back in place. This is TensorFlow's SpaceToBatch rewrite of atrous convolution, done here so
that DeepLab's dilated stage (3x3 at 14x14, dilation 2: 7x7 phases) gets Winograd's 2.25x
fewer multiplications instead of an im2col GEMM.

Applies when every phase has the same size (input and output sizes and the pads divisible
by the dilation) and there is no residual to add (the bias and the activation are per element
and run in the Winograd output transform, on the phase images).
"""

from __future__ import annotations

import numpy as np

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.copy import Move
from irforge.backends.cpu.codegen.epilogue import Epilogue
from irforge.backends.cpu.lower import Buffer, Lowering
from irforge.backends.cpu.ops.movement import emit_moves
from irforge.backends.cpu.ops.winograd import winograd_convolution, winograd_pays
from irforge.dialects.nn import Convolution


def phase_geometry(g: ConvGeometry) -> ConvGeometry | None:
    """The undilated convolution each phase image runs, or None where phases differ in size."""
    (dy, dx), (py, px) = g.dilation, g.pad
    if g.group != 1 or (g.kh, g.kw) != (3, 3) or g.stride != (1, 1) or (dy, dx) == (1, 1):
        return None
    if any(size % d for size, d in ((g.h, dy), (g.oh, dy), (py, dy), (g.w, dx), (g.ow, dx), (px, dx))):
        return None
    return ConvGeometry(g.n * dy * dx, g.c, g.h // dy, g.w // dx, 3, 3, g.oh // dy, g.ow // dx, (1, 1), (1, 1), (py // dy, px // dx))


def dilated_winograd_pays(g: ConvGeometry, epilogue: Epilogue) -> bool:
    sub = phase_geometry(g)
    return sub is not None and not epilogue.residual and winograd_pays(sub)


def _phase_moves(g: ConvGeometry, channels: int, rows: int, cols: int, to_phases: bool) -> list[Move]:
    """Copies between [n][channels][rows][cols] and its phase images, stacked as
    [phase (py, px)][n][channels][rows / dy][cols / dx]."""
    dy, dx = g.dilation
    hs, ws = rows // dy, cols // dx
    image = (channels * hs * ws, hs * ws, ws, 1)
    whole = (channels * rows * cols, rows * cols, dy * cols, dx)
    moves = []
    for py in range(dy):
        for px in range(dx):
            stacked = (py * dx + px) * g.n * channels * hs * ws
            if to_phases:
                moves.append(Move(0, 1, (g.n, channels, hs, ws), whole, image, src_offset=py * cols + px, dst_offset=stacked))
            else:
                moves.append(Move(0, 1, (g.n, channels, hs, ws), image, whole, src_offset=stacked, dst_offset=py * cols + px))
    return moves


def dilated_winograd_convolution(ctx: Lowering, op: Convolution, g: ConvGeometry, weights: np.ndarray, args: list[Buffer], epilogue: Epilogue) -> None:
    """`args`: input, output, then the bias buffer the epilogue reads."""
    sub = phase_geometry(g)
    assert sub is not None
    x, out, *tail = args
    o = weights.shape[0]
    phases_in = ctx.scratch(4 * g.n * g.c * g.h * g.w)
    phases_out = ctx.scratch(4 * g.n * o * g.oh * g.ow)
    emit_moves(ctx, op, [x, phases_in], _phase_moves(g, g.c, g.h, g.w, True))
    winograd_convolution(ctx, op, sub, weights, [phases_in, phases_out, *tail], epilogue)
    emit_moves(ctx, op, [phases_out, out], _phase_moves(g, o, g.oh, g.ow, False))
