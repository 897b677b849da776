"""3x3 stride-1 and stride-2 convolutions by Winograd F(4x4, 3x3) or F(2x2, 3x3) (see `codegen.winograd`):
an input transform, the 36 or 16 transform-domain GEMMs as one batched GEMM kernel (threads
take whole GEMMs), an output transform carrying the bias, residual and activation."""

from __future__ import annotations

import numpy as np

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.epilogue import Epilogue
from irforge.backends.cpu.codegen.gemm import Batch, GemmSpec, pack_a_all
from irforge.backends.cpu.codegen.irutil import VW
from irforge.backends.cpu.codegen.winograd import WinogradSpec, point_stride, transform_weights, v_channel
from irforge.backends.cpu.codegen.winograd_guard import GuardSpec, ScanSpec, fix_kernel, safe_bound, scan_kernel
from irforge.backends.cpu.codegen.winograd_transforms import input_transform_kernel, output_transform_kernel
from irforge.backends.cpu.lower import Buffer, Lowering
from irforge.backends.cpu.ops.gemm_function import gemm_function
from irforge.dialects.nn import Convolution

MIN_TILES = 16
"""Down to 7x7 outputs (16 tiles): there the transformed weights (16/9 of the direct ones,
17 MB for a 512-channel layer) stream from memory, but a ResNet-50 layer still ran 1.3 ms
against 1.9 ms with im2col; smaller layers keep im2col."""
F4_MIN_TILES = 49
"""F(4x4, 3x3) from 28x28 outputs up (ResNet-50's stages 1-2: a 56x56x64 layer 1.2 -> 0.8 ms,
28x28x128 0.85 -> 0.55). Smaller layers have few tiles and many channels: their GEMMs would be
too narrow, and F(4x4)'s transformed weights (36/9 of the direct ones) stream from memory."""


STRIDE2 = True
"""3x3 stride-2 windows by the 2m + 1 point algorithm (`codegen.winograd.STRIDE2_MATRICES`)."""
STRIDE2_MIN_TILES = 16
"""Stride 2 from this many F(2x2) tiles (7x7 outputs) up. ResNet-50's 14x14 -> 7x7 512-channel
layer ran 0.83x its direct time (`bench/cpu_conv_layers.py --only s2 --ab
irforge.backends.cpu.ops.winograd.STRIDE2_MIN_TILES=16`, session 13) though its transformed
weights (25/9 of the direct ones, 26 MB) stream from memory and its 16 tiles hold 64 outputs
for 49: the direct stride-2 window there runs at 80 GF/s."""
STRIDE2_MIN_CHANNELS = 32
"""Stride 2 where the input and output channels are both at least this many: the GEMMs' work
grows with their product, the transforms' and V's and M's memory traffic with their sum.
One layer's phases in sequence, one thread, against the direct kernels (session 13,
`bench/cpu_conv_seq_ab.py`): 3 -> 32 channels at 224x224 (RegNet's stem) 2.8x, 16 -> 32
at 112x112 1.05x, 128 -> 16 at 56x56 1.07x, 24 -> 96 at 112x112 (EfficientNet-V2-S) 1.21x
(0.98x by F(2x2)), 24 -> 48 1.02x; 32 -> 32 0.89x, 32 -> 64 0.88x, 64 -> 64 0.87x, 48 -> 192
at 56x56 0.81x, 128 -> 128 0.79x."""
STRIDE2_F4_MIN_TILES = 49
"""Stride 2 by F(4x4) from this many of its tiles (28x28 outputs): 81 GEMMs per 16 outputs."""


NONFINITE_GUARD = True
"""A Winograd tile mixes all its inputs (with zero coefficients too): one inf or NaN input made
every output of its tile non-finite where the direct window (onnxruntime, the reference)
reaches only the outputs that cover it. With the guard a scan flags the input planes holding
a non-finite (or overflow-sized) value before the input transform, and after the output
transform the tiles that read one are recomputed by the direct window (`codegen.winograd_guard`).
Finite inputs pay the scan and one flag check per thread."""


GROUPED = False
"""Grouped 3x3 windows too (one GEMM per transform-domain point and group, a nested batch)
from `GROUPED_MIN_CHANNELS` input and output channels per group. Measured not to pay (session
13, `bench/cpu_knob_ab.py M irforge.backends.cpu.ops.winograd:GROUPED --a False --b True
--cpu-time --runs 11`, phase sums): regnet_y_800mf 1.013 (its 16-channel groups' GEMMs 4.24 ->
2.43 ms and phase-plane copies 0.99 -> 0.36, but the transforms 2.73: they grow with the
channels, the GEMMs with channels x channels per group), resnext50_32x4d 1.004; from 32
channels per group (ResNeXt's stage 4 only) 0.998 (-0.56 ms GEMMs, +0.54 transforms)."""
GROUPED_MIN_CHANNELS = 16


def weights_fit(weights: np.ndarray) -> bool:
    """Whether the transformed weights U = G g G^T stay finite: every |U| is at most 2.25
    max |g| (the largest squared row sum of |G| over the tile sizes and strides), so weights
    under FLT_MAX / 4 fit. Layers with larger or non-finite weights take a direct path: the
    guard's fix-up reads its taps back from U (`winograd_guard.taps_from_points`), which an
    inf in U would leave nothing exact to read."""
    with np.errstate(all="ignore"):
        top = float(np.abs(weights).max()) if weights.size else 0.0
    return bool(np.isfinite(top) and top < float(np.finfo(np.float32).max) / 4)


def winograd_pays(g: ConvGeometry, o: int | None = None) -> bool:
    """`o`: the output channels (stride 2 and groups need them); None: the input's."""
    if (g.kh, g.kw) != (3, 3) or g.dilation != (1, 1):
        return False
    if g.group != 1:
        per_group = min(g.c, g.c if o is None else o) // g.group
        if not GROUPED or per_group < GROUPED_MIN_CHANNELS:
            return False
    if g.stride == (2, 2):
        channels = min(g.c, g.c if o is None else o)
        return STRIDE2 and channels >= STRIDE2_MIN_CHANNELS and -(-g.oh // 2) * -(-g.ow // 2) >= STRIDE2_MIN_TILES
    return g.stride == (1, 1) and -(-g.oh // 2) * -(-g.ow // 2) >= MIN_TILES


F4_WHOLE_VECTORS = True
"""F(4x4, 3x3) also where its tiles fill whole vectors of the GEMM's columns (14x14 outputs:
4 x 4 = 16 tiles, one vector; F(2x2)'s 49 are three vectors and a column): 36 GEMMs of one
vector against 16 of three and a bit, 0.73x the FMAs, for transforms of 2.3x (input) and
1.7x (output) F(2x2)'s time. Same-process A/Bs (`bench/cpu_knob_ab.py M
irforge.backends.cpu.ops.winograd:F4_MIN_TILES --a 49 --b 16 --cpu-time`, session 11, load
1-2): ResNet-50 0.976 (its five 14x14 256-channel layers' GEMMs 1.22 -> ~0.9 ms), VGG-16
0.964 (its three 14x14 512-channel GEMMs 5.19 -> 3.21 ms), GoogLeNet 0.959, DeepLab-OS16 0.956. The transformed weights are
36/16 of F(2x2)'s (ResNet-50: +5 MiB a layer). DenseNet-121's 14x14 128 -> 32 layers broke
even (1.003: the GEMMs 0.94x, the transforms 1.12x), hence `F4_WHOLE_MIN_WEIGHTS`."""
F4_WHOLE_MIN_WEIGHTS = 128 * 128
"""`F4_WHOLE_VECTORS` from this many (input, output) channel pairs: the GEMMs' work grows
with their product, the transforms' with their sum."""


def tile_size(g: ConvGeometry, o: int) -> int:
    """F(4x4, 3x3) where its GEMMs still have F4_MIN_TILES tiles, or whole vectors of them
    (`F4_WHOLE_VECTORS`), else F(2x2, 3x3). Stride 2: F(4x4) from `STRIDE2_F4_MIN_TILES` of its tiles."""
    if g.stride == (2, 2):
        return 4 if -(-g.oh // 4) * -(-g.ow // 4) >= STRIDE2_F4_MIN_TILES else 2
    tiles = g.n * -(-g.oh // 4) * -(-g.ow // 4)
    whole = F4_WHOLE_VECTORS and tiles % VW == 0 and g.c // g.group * o >= F4_WHOLE_MIN_WEIGHTS
    return 4 if -(-g.oh // 4) * -(-g.ow // 4) >= F4_MIN_TILES or whole else 2


def winograd_convolution(ctx: Lowering, op: Convolution, g: ConvGeometry, weights: np.ndarray, args: list[Buffer], epilogue: Epilogue) -> None:
    """`args`: input, output, then the bias and residual buffers the epilogue reads."""
    x, out, *tail = args
    o = weights.shape[0]
    spec = WinogradSpec(g.n, g.c, o, g.h, g.w, g.oh, g.ow, g.pad, op.bias is not None, epilogue, tile_size(g, o), g.stride[0])
    tiles, points = spec.tiles, spec.a * spec.a
    channel = v_channel(spec)
    v_point, m_point = point_stride(g.c * channel), point_stride(o * tiles)
    v = ctx.scratch(4 * points * v_point)
    m = ctx.scratch(4 * (points * m_point + VW))  # + VW: the output transform's tail loads
    u = transform_weights(weights, spec.m, spec.stride)  # [points, O, C / group]
    guard = _guard_scan(ctx, spec, g, u, x) if NONFINITE_GUARD else None
    forward = ctx.kernel(("winograd_in", spec), lambda mod, n: input_transform_kernel(mod, spec, n))
    ctx.phase(forward, [x, v], "winograd")
    og, cg = o // g.group, g.c // g.group
    panels = pack_a_all([u[i, j * og:(j + 1) * og] for i in range(points) for j in range(g.group)], og, cg)
    each = panels.size // (points * g.group)
    groups = (Batch(g.group, each, cg * channel, og * tiles),) if g.group > 1 else ()
    gemm = GemmSpec(m=og, n=tiles, k=cg, a_panel=True, ldb=channel, ldc=tiles, split_batches=True,
                    batches=(Batch(points, g.group * each, v_point, m_point), *groups))
    name = gemm_function(ctx, gemm)
    packed = ctx.const(panels)
    ctx.phase(name, [packed, v, m], "conv3x3", 2 * g.n * o * g.p * g.k_per_group)
    backward = ctx.kernel(("winograd_out", spec), lambda mod, n: output_transform_kernel(mod, spec, n))
    ctx.phase(backward, [m, out, *tail], "winograd")
    if guard is not None:
        _guard_fix(ctx, guard, packed, x, out, tail)


def _guard_scan(ctx: Lowering, spec: WinogradSpec, g: ConvGeometry, u: np.ndarray, x: Buffer) -> tuple[GuardSpec, Buffer, Buffer]:
    """The `NONFINITE_GUARD` scan's phase: the guard's spec, its plane flags and its bound."""
    guard = GuardSpec(spec, g.group)
    bound = ctx.const(np.array([safe_bound(u, spec, g.c // g.group)], np.float32))
    flags = ctx.scratch(4 * g.n * g.c)
    planes = ScanSpec(g.n * g.c, g.h * g.w)
    scan = ctx.kernel(("finite_scan", planes), lambda mod, n: scan_kernel(mod, planes, n))
    ctx.phase(scan, [x, flags, bound], "winograd")
    return guard, flags, bound


def _guard_fix(ctx: Lowering, guarded: tuple[GuardSpec, Buffer, Buffer], packed: Buffer, x: Buffer, out: Buffer, tail: list[Buffer]) -> None:
    """The `NONFINITE_GUARD` fix-up's phase: flagged tiles by the direct window, its weights
    read back from the GEMM's packed U (no second copy of the layer's weights; x stays live
    until here)."""
    guard, flags, bound = guarded
    fix = ctx.kernel(("finite_fix", guard), lambda mod, n: fix_kernel(mod, guard, n))
    ctx.phase(fix, [x, flags, packed, out, *tail, bound], "winograd")
