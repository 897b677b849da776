"""Lowerings of Convolution, FullyConnected and MatMul onto the GEMM core.

Weights are packed here, once, at compile time. A following residual Add and ReLU/Clamp
are absorbed into the kernel's epilogue (see `fusion.absorb_epilogue`); a convolution's,
FullyConnected's or MatMul's result is stored over its residual where no later op reads it
(`fusion.residual_in_place`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from xdsl.ir import Operation, SSAValue

from irforge.backends.cpu.codegen.conv import ConvGeometry, crop_dead_taps, im2col_kernel, pack_rows_kernel
from irforge.backends.cpu.codegen.depthwise import DepthwiseSpec, padded_layout, depthwise_kernel, host_lanes, panel_output_fits, shared_channels
from irforge.backends.cpu.codegen.deconv import Col2imSpec, col2im_kernel
from irforge.backends.cpu.codegen.epilogue import Epilogue
from irforge.backends.cpu.codegen.gemm import KC, NR, Batch, GemmSpec, pack_a_all, pack_b, runtime_k, splits_columns
from irforge.backends.cpu.codegen.im2col_flat import flat_pays
from irforge.backends.cpu.codegen.irutil import VW
from irforge.backends.cpu.lower import Buffer, Lowering, lowering, shape_of
from irforge.backends.cpu.ops.gemm_function import gemm_function
from irforge.backends.cpu.ops.dilated import dilated_winograd_convolution, dilated_winograd_pays
from irforge.backends.cpu.ops.excite import materialize, plain_1x1, scaled_weights, take_channel_scale
from irforge.backends.cpu.ops.input_activation import materialize_input_activation, take_input_activation
from irforge.backends.cpu.ops.fusion import absorb_bias, absorb_epilogue, require_f32, residual_in_place
from irforge.backends.cpu.ops.movement import relayout
from irforge.backends.cpu.ops.segmented import row_bands, row_bands_pay
from irforge.backends.cpu.ops.volumetric import volumetric_convolution, volumetric_deconvolution
from irforge.backends.cpu.ops.shifted import shifted_convolution, shifted_pays
from irforge.backends.cpu.ops.winograd import weights_fit, winograd_convolution, winograd_pays
from irforge.dialects.nn import Convolution, Deconvolution, FullyConnected, MatMul, Reduce
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError

PACK_PLANE_MAX = 196
"""A 1x1 stride-1 convolution (one sample, one group) over a plane of at most this many
positions packs its input into B panels first (`pack_rows_kernel`, a copy generic in K)
instead of reading B's rows in place: rows of 49 or 196 floats start at any 4-byte
offset, so 16-lane loads split cache lines, and the stream is not contiguous. ResNet-50's
7x7 1x1 layers 0.74-0.92x, 14x14 ones 0.93-0.98x the in-place time (min of 50, two runs,
session 7)."""
PACK_UNALIGNED_MAX = 25000
"""... and so does one over a plane of at most this many positions whose rows are not a whole
number of vectors (LR-ASPP's 33x33: B rows 1089 floats apart, so B's 16-lane loads straddle
cache lines), where its GEMM is large enough against the copy (`packs_unaligned`); planes of
16 k positions (28x28, 56x56) are read in place (session 10: packing them did not pay in
whole models). Same process, CPU time (`bench/cpu_knob_ab.py M
irforge.backends.cpu.ops.linear:PACK_UNALIGNED_MAX --a 0 --b 25000 --cpu-time`, docs/STATUS.md
session 11): LR-ASPP, Inception-v3, keras Xception 0.88-0.91x."""
PACK_UNALIGNED_LEAST = (32, 64)
"""(output channels, K) from which an unaligned plane's B is packed: SqueezeNet's 55x55 1x1
layers (16 outputs, or K = 16) ran 1.02x slower packed (the copy against a GEMM of a few
multiply-adds per element)."""


SCALED_PACK = True
"""A squeeze-excite product `x * s` before a 1x1 layer that packs its input into B panels
(`packs_b`) is done by that copy (`pack_rows_kernel` scaled): no pass of its own over the
plane (RegNet-Y's 14x14 and 7x7 blocks, whose 320-784 output channels are more than their
plane's positions, computed it as a pointwise Multiply: `excite.FOLD_PLANE_RATIO`), and no
scaled copy of the weights where those fold (EfficientNet's 14x14 blocks). The products are
s * x rounded as the Multiply rounds them."""


PACK_ALIASED = True
"""... and so does one whose B rows lie a multiple of 4 KiB apart (planes of 1024 k positions:
32x32, 64x64, 128x128): read in place, a panel's K rows all map to the same cache sets and
evict each other (SegFormer's 128x128 decode-head 1x1 ran at 11.5 GF/s against 32.9 at
120x120, session 11)."""


PACK_BLOCKS_OVER: int | None = 0
"""A 1x1 layer whose B rows alias (`PACK_ALIASED`) over a plane of more than this many
positions packs B inside its GEMM, per block of `NC_PANELS` panels and one K block, on each
thread's stack (`GemmSpec.b_blocks`), instead of copying the whole plane into the arena first
(64 MiB for 256 channels of 256 x 256); a MatMul's aliased B does so over
`PACK_UNALIGNED_MAX` columns (up to that the whole copy: same time). None: no block packing
(aliased planes up to `PACK_UNALIGNED_MAX` copied whole, larger ones read in place: 2.7-4.0x
slower at 256 x 256). Unaligned rows (LR-ASPP's 33x33, 65x65) keep the whole copy: per block
they ran 1.011x slower. A/Bs in docs/STATUS.md, session 12."""


SMALL_PLANE_BLOCKS = True
"""A 1x1 layer over a plane of at most `PACK_PLANE_MAX` positions (ResNet-50's 14x14 and 7x7)
packs B per block inside its GEMM (`GemmSpec.b_blocks`) instead of by a copy of the whole
plane into the arena first (`pack_rows_kernel`): the block is copied while L2 holds it for the
M blocks that read it. Not where B comes as panels (a depthwise layer's `PANEL_OUTPUT`) or
with a channel scale (`SCALED_PACK`)."""


ROW_BLOCKS: dict[int, int] = {}
"""Rows per M block (`GemmSpec.block_rows`) of a one-group 1x1 / im2col layer's GEMM by its
output channels M, where MR-row blocks leave a short last block (AVX2's MR = 6: M = 64 is
10 x 6 + 4, whose last block computes 2 rows past M, `gemm.TAIL_ROWS_WASTE`)."""


def conv_block_rows(g: ConvGeometry, o: int) -> int:
    """`ROW_BLOCKS`' rows for a layer of `o` outputs (0: MR)."""
    return ROW_BLOCKS.get(o, 0) if g.group == 1 else 0


def _aliased(p: int) -> bool:
    """Rows of p floats a multiple of 4 KiB apart (`PACK_ALIASED`)."""
    return PACK_ALIASED and p % 1024 == 0


def _large_enough(g: ConvGeometry, o: int) -> bool:
    """A GEMM large enough against a copy of B (`PACK_UNALIGNED_LEAST`)."""
    least_o, least_k = PACK_UNALIGNED_LEAST
    return o >= least_o and g.k_per_group >= least_k


def packs_unaligned(g: ConvGeometry, o: int) -> bool:
    """Whether a direct 1x1 layer's B is copied whole first for its unaligned rows
    (`PACK_UNALIGNED_MAX`) or rows whose stride aliases in the caches (`PACK_ALIASED`) where
    those are not packed per block (`packs_in_blocks`)."""
    awkward = bool(g.p % VW) or _aliased(g.p)
    return awkward and g.p <= PACK_UNALIGNED_MAX and _large_enough(g, o) and not packs_in_blocks(g, o)


def packs_in_blocks(g: ConvGeometry, o: int) -> bool:
    """Whether a direct 1x1 layer's B is packed per block inside its GEMM (`PACK_BLOCKS_OVER`)."""
    return PACK_BLOCKS_OVER is not None and g.p > PACK_BLOCKS_OVER and _aliased(g.p) and _large_enough(g, o)


CONV_KC = KC
"""The K block of the convolutions' GEMMs (their packed weights' blocks and the kernels')."""
FC_KC: int | None = 512
"""The largest K block of FullyConnected / MatMul GEMMs (A read strided, B packed or rows),
K cut into equal blocks (`fc_kc`); None: the convolutions' KC = 384 from K's start (K = 512 was
384 + 128, 2048 was 5 x 384 + 128). Every K block past the first reloads and stores C again:
Whisper-base's [1500, 2048] FFN output (12 MiB) took two passes for K = 512. Same-process
A/B in CPU time (`bench/cpu_knob_ab.py whisper_base_encoder irforge.backends.cpu.ops.linear:FC_KC
--a None --b 512 --cpu-time`): see docs/STATUS.md, session 10."""


FC_WHOLE_K_ROWS = 1
"""An FC / MatMul GEMM of at most this many rows (M) with constant (packed) weights takes K
in one block: its C is a row of N floats, so blocks save no reloads of it, and each packed
panel's K x NR weights then stream from memory as one run instead of K / FC_KC runs 32 KiB
long in turn across all panels. AlexNet's 9216 -> 4096 classifier at batch 1 (151 MB of
weights, weight-bandwidth bound) 0.875x the time of blocks of 512 (same-process A/B in CPU
time, docs/STATUS.md session 14 round 2). 0: K blocks of `fc_kc` at any M."""


def fc_kc(k: int, m: int = 0, packed: bool = False) -> int:
    """The K block of an FC GEMM of K rows: K in equal blocks of at most `FC_KC` (768 = 2 x 384,
    3072 = 6 x 512, 2048 = 4 x 512); all of K for `m` <= `FC_WHOLE_K_ROWS` rows of `packed`
    constant weights (a block-packed B would size its stack copy by the block: not those)."""
    if packed and 0 < m <= FC_WHOLE_K_ROWS:
        return k
    if FC_KC is None:
        return KC
    return max(1, -(-k // max(1, -(-k // FC_KC))))


def geometry(op: Convolution) -> ConvGeometry:
    x, w, y = shape_of(op.input), shape_of(op.weights), shape_of(op.output)
    if len(x) not in (3, 4):
        raise IrforgeError(f"'{op.name}' with {len(x) - 2} spatial axes has no CPU kernel", where=op.label, code="E846")
    kernel = w[2:]
    begin, _ = op.explicit_pads(kernel)
    strides, dilations = op.window("strides", 1), op.window("dilations", 1)
    if len(x) == 3:
        return ConvGeometry(x[0], x[1], 1, x[2], 1, kernel[0], 1, y[2], (1, strides[0]), (1, dilations[0]), (0, begin[0]), op.int_prop("group"))
    return ConvGeometry(x[0], x[1], x[2], x[3], kernel[0], kernel[1], y[2], y[3], tuple(strides), tuple(dilations), tuple(begin), op.int_prop("group"))  # type: ignore[arg-type]


@lowering(Convolution)
def convolution(ctx: Lowering, op: Convolution) -> None:
    """Depthwise kernel, Winograd (3x3 stride 1), implicit GEMM on a padded copy (other wide
    windows), or GEMM on im2col panels (1x1 stride 1: on the input itself).
    Constant weights are packed into A panels once; others are read in place (strided A)."""
    if len(shape_of(op.input)) > 4:  # 3+ spatial axes: onto the 2-D kernels (ops/volumetric.py)
        volumetric_convolution(ctx, op)
        return
    require_f32(op)
    g = geometry(op)
    weights = ctx.constant_of(op.weights)
    epilogue, residual, final = absorb_epilogue(ctx, op)
    x = ctx.input(op, 0)
    deferred = take_channel_scale(ctx, op)  # squeeze-excite's x * s, left to these weights
    if deferred is not None and not plain_1x1(op):
        x = materialize(ctx, deferred)
        deferred = None
    bias = [ctx.input(op, 2)] if op.bias is not None else []
    tail = bias + ([residual] if residual is not None else [])
    o = shape_of(op.weights)[0]
    if g.group == g.c == o and g.group > 1:
        _depthwise(ctx, op, g, weights, x, final, epilogue, tail, residual is None)
        return
    out = ctx.result(final)
    if weights is not None:
        g, weights = crop_dead_taps(g, weights.reshape(o, g.c // g.group, g.kh, g.kw))
    og, kg = o // g.group, g.k_per_group
    if weights is not None and dilated_winograd_pays(g, epilogue) and weights_fit(weights):
        dilated_winograd_convolution(ctx, op, g, weights, [x, out, *tail], epilogue)
        return
    if weights is not None and winograd_pays(g, o) and weights_fit(weights):  # (geometry first: a pass over the weights)
        winograd_convolution(ctx, op, g, weights, [x, out, *tail], epilogue)
        return
    if weights is not None and shifted_pays(g):
        shifted_convolution(ctx, op, g, weights, [x, out, *tail], epilogue)
        return
    if weights is not None and row_bands_pay(g):
        for band, band_weights, y0 in row_bands(g, weights):
            im2col_gemm(ctx, band, pack_weights(band, band_weights, o), x, out, bias, tail, epilogue, o, plane=g.p, c_offset=y0 * g.ow)
        return
    b_scale = None
    if weights is not None:
        a = pack_weights(g, weights, o, conv_block_rows(g, o) if deferred is None else 0)  # scaled_weights: MR-row blocks
        if deferred is not None and scales_in_pack(g, o, x in ctx.b_panels):  # the copy of x the GEMM needs anyway
            b_scale = deferred[1]
        elif deferred is not None:  # plain_1x1: here (one group), the scale along the packed K rows
            a = (scaled_weights(ctx, a[0], o, g.k_per_group, CONV_KC, deferred[1]), *a[1:])
    else:
        a = (ctx.input(op, 1), dict(a_panel=False, a_rs=kg, a_cs=1), og * kg)
    accumulate = residual is not None and residual_in_place(ctx, op, final, residual)
    if accumulate:
        # C starts as the residual: the GEMM adds into it (no residual read in the epilogue)
        out, tail, epilogue = residual, bias, replace(epilogue, residual=False)
        ctx.alias(final, out)
    im2col_gemm(ctx, g, a, x, out, bias, tail, epilogue, o, accumulate=accumulate, b_scale=b_scale)


def _depthwise(ctx: Lowering, op: Convolution, g: ConvGeometry, weights, x: Buffer, final: SSAValue,  # type: ignore[no-untyped-def]
               epilogue: Epilogue, tail: list[Buffer], no_residual: bool) -> None:
    """The direct depthwise kernel; where its result only feeds a 1x1 layer that packs B
    (`reads_panels`), it writes those panels instead of planes (`depthwise.PANEL_OUTPUT`)."""
    o = g.c
    panels = no_residual and panel_output_fits(g, host_lanes()) and reads_panels(ctx, final)
    act = take_input_activation(ctx, op)  # a ReLU before this layer, applied as its input is copied
    if act is not None and padded_layout(g, host_lanes(), panels) is None:  # not the stack-plane kernel after all
        x, act = materialize_input_activation(ctx, act), None
    if panels:
        out = ctx.buffer(4 * -(-g.p // NR) * NR * o, "arena")
        ctx.alias(final, out)
        ctx.b_panels.add(out)
    else:
        out = ctx.result(final)
    spec = DepthwiseSpec(g, op.bias is not None, epilogue, host_lanes(), panels=panels,
                         input_activation=act[1:] if act is not None else ("none", ()))
    spec, channels = shared_channels(spec)
    name = ctx.kernel(("dwconv", spec), lambda m, n: depthwise_kernel(m, spec, n))
    w_buf = ctx.const(weights.reshape(o, -1)) if weights is not None else ctx.input(op, 1)
    extra = [ctx.const(np.array(channels, np.int64))] if channels else []
    ctx.phase(name, [x, w_buf, out, *tail, *extra], "depthwise", 2 * g.n * o * g.p * g.kh * g.kw)


def packs_b(g: ConvGeometry, o: int) -> bool:
    """Whether a 1x1 stride-1 layer's input is copied into B panels before its GEMM (small and
    unaligned planes: `PACK_PLANE_MAX`, `packs_unaligned`) instead of read as rows in place."""
    direct = g.kh == g.kw == 1 and g.stride == (1, 1) and g.pad == (0, 0) and g.oh == g.h and g.ow == g.w
    return direct and (g.p <= PACK_PLANE_MAX or packs_unaligned(g, o)) and g.n == g.group == 1


def scales_in_pack(g: ConvGeometry, o: int, panels_in: bool = False) -> bool:
    """Whether a squeeze-excite scale on this 1x1 layer's input is applied by the copy of
    its input into B panels (`SCALED_PACK`): where it packs B (`packs_b`) from rows
    (not from a depthwise layer's panels, `panels_in`)."""
    return SCALED_PACK and packs_b(g, o) and not panels_in


def reads_panels(ctx: Lowering, value: SSAValue) -> bool:
    """Whether `value`'s only user is a 2-D convolution that reads it as its input and packs
    it into B panels (`packs_b`): the depthwise layer making `value` can write those panels
    (`depthwise.PANEL_OUTPUT`), and that layer then reads them as they are (`im2col_gemm`)."""
    user = ctx.single_use(value)
    if not isinstance(user, Convolution) or user.operands[0] is not value or len(shape_of(user.input)) != 4:
        return False
    return packs_b(geometry(user), shape_of(user.weights)[0])


def pack_weights(g: ConvGeometry, weights, o: int, rows: int = 0):  # type: ignore[no-untyped-def]
    """(A buffer's array, A layout, elements per group) of constant weights [o, c/g, kh, kw];
    `rows`: rows per M block (`conv_block_rows`; 0: MR)."""
    og, kg = o // g.group, g.k_per_group
    packed = pack_a_all([weights[i * og:(i + 1) * og] for i in range(g.group)], og, kg, CONV_KC, rows)
    return packed, dict(a_panel=True, block_rows=rows) if rows else dict(a_panel=True), packed.size // g.group


def im2col_gemm(ctx: Lowering, g: ConvGeometry, a, x, out, bias, tail, epilogue, o: int, plane: int = 0, c_offset: int = 0,  # type: ignore[no-untyped-def]
                accumulate: bool = False, b_scale: Buffer | None = None) -> None:
    """im2col (none for a 1x1 stride-1 window) and one GEMM per sample and group; C rows are
    `plane` apart (the whole output plane, where g's rows are one band of it) from element
    `c_offset` on; `accumulate`: the GEMM adds into C's content (`GemmSpec.accumulate`);
    `b_scale`: x's channel scale, applied as B is packed (only where `packs_b` copies x)."""
    a_buf, a_layout, group_a = a
    if isinstance(a_buf, np.ndarray):
        a_buf = ctx.const(a_buf)
    og, kg = o // g.group, g.k_per_group
    plane = plane or g.p
    direct = g.kh == g.kw == 1 and g.stride == (1, 1) and g.pad == (0, 0) and g.oh == g.h and g.ow == g.w
    b_blocks = direct and g.n == g.group == 1 and packs_in_blocks(g, o)
    small_blocks = (SMALL_PLANE_BLOCKS and direct and g.n == g.group == 1 and g.p <= PACK_PLANE_MAX and not c_offset
                    and x not in ctx.b_panels and b_scale is None)
    # a depthwise layer's output written as these panels is read as it is; only here
    assert x not in ctx.b_panels or (packs_b(g, o) and not c_offset), "B panels reach a GEMM that reads rows"
    assert b_scale is None or (packs_b(g, o) and x not in ctx.b_panels), "a channel scale reaches a GEMM that does not pack B"
    if small_blocks:
        b_buf, b_group, b_batch, b_blocks = x, kg * g.p, g.c * g.p, True
    elif packs_b(g, o):
        b_group = b_batch = g.panels * kg * NR
        b_buf = x if x in ctx.b_panels else _packed_rows(ctx, x, kg, g.p, b_scale)
        direct = False
    elif direct:
        b_buf, b_group, b_batch = x, kg * g.p, g.c * g.p
    else:
        b_group = g.panels * kg * NR
        b_batch = g.group * b_group
        b_buf = ctx.scratch(4 * g.n * b_batch)
        by_positions = g.n == g.group == 1 and g.stride[1] in (1, 2) and g.oh >= 28 and splits_columns(og, g.p)
        im2col = ctx.kernel(("im2col", g, by_positions, flat_pays(g)), lambda m, n: im2col_kernel(m, g, n, by_positions))
        ctx.phase(im2col, [x, b_buf], "im2col")
    spec = GemmSpec(
        m=og, n=g.p, k=kg, b_panel=not direct, ldb=g.p, ldc=plane,
        bias="row" if bias else "none", epilogue=epilogue,
        batches=tuple(
            level for level in (
                Batch(g.n, 0, b_batch, o * plane, 0),
                Batch(g.group, group_a, b_group, og * plane, og),
            ) if level.count > 1
        ),
        c_offset=c_offset,
        kc=CONV_KC,
        accumulate=accumulate,
        b_blocks=b_blocks,
        **a_layout,  # type: ignore[arg-type]
    )
    spec, sizes = runtime_k(spec)  # one kernel for the layers that differ in K only
    name = gemm_function(ctx, spec)
    tag = "conv1x1" if g.kh == g.kw == 1 else f"conv{g.kh}x{g.kw}"
    extra = [ctx.const(np.array(sizes, np.int64))] if sizes else []
    ctx.phase(name, [a_buf, b_buf, out, *tail, *extra], tag, 2 * g.n * o * g.p * kg)


@lowering(Deconvolution)
def deconvolution(ctx: Lowering, op: Deconvolution) -> None:
    """GEMM (col = W^T x per sample and group, x read in place as B rows) then col2im."""
    if len(shape_of(op.input)) > 4:
        volumetric_deconvolution(ctx, op)
        return
    require_f32(op)
    x, w, y = shape_of(op.input), shape_of(op.weights), shape_of(op.output)
    if len(x) not in (3, 4):
        raise IrforgeError(f"'{op.name}' with {len(x) - 2} spatial axes has no CPU kernel", where=op.label, code="E846")
    flat = len(x) == 3
    h, wd = (1, x[2]) if flat else x[2:]
    kh, kw = (1, w[2]) if flat else w[2:]
    group = op.int_prop("group")
    cg, og = x[1] // group, w[1]
    m, p = og * kh * kw, h * wd
    weights = ctx.constant_of(op.weights)
    if weights is not None:  # A panels of each group's W^T [og*kh*kw, cg], packed once
        a_buf = ctx.const(pack_a_all([weights[i * cg:(i + 1) * cg].reshape(cg, m).T for i in range(group)], m, cg))
        a_layout = dict(a_panel=True)
        group_a = a_buf.nbytes // 4 // group
    else:  # W read in place: A[row, c] = w[c, row], row stride 1, k stride m
        a_buf, a_layout, group_a = ctx.input(op, 1), dict(a_panel=False, a_rs=1, a_cs=m), cg * m
    col = ctx.scratch(4 * x[0] * group * m * p)
    levels = (Batch(x[0], 0, x[1] * p, group * m * p, 0), Batch(group, group_a, cg * p, m * p, 0))
    b_blocks = aliased_blocks(p, cg, over=0) and m >= PACK_UNALIGNED_LEAST[0]
    spec = GemmSpec(m=m, n=p, k=cg, b_panel=False, ldb=p, ldc=p, batches=tuple(lv for lv in levels if lv.count > 1),
                    b_blocks=b_blocks, **a_layout)  # type: ignore[arg-type]
    ctx.phase(gemm_function(ctx, spec), [a_buf, ctx.input(op, 0), col], "deconv", 2 * x[0] * group * m * p * cg)
    begin, _ = op.transposed_pads(w[2:], x[2:])
    pick = (lambda v: (1, v[0])) if flat else (lambda v: tuple(v))
    c2i = Col2imSpec(x[0], group, og, h, wd, kh, kw, *(((1, y[2]) if flat else y[2:])), pick(op.window("strides", 1)),
                     pick(op.window("dilations", 1)), (0, begin[0]) if flat else tuple(begin), op.bias is not None)  # type: ignore[arg-type]
    bias = [ctx.input(op, 2)] if op.bias is not None else []
    ctx.phase(ctx.kernel(("col2im", c2i), lambda mod, n: col2im_kernel(mod, c2i, n)), [col, ctx.output(op), *bias], "col2im")


@lowering(FullyConnected)
def fully_connected(ctx: Lowering, op: FullyConnected) -> None:
    """y[m, :] = x[m, :] @ W^T: x rows are broadcast (A), W^T is packed into B panels (a
    non-constant W is transposed into scratch at run time and read as B rows)."""
    require_f32(op)
    weights = ctx.constant_of(op.weights)
    o, k = shape_of(op.weights)
    m = int(np.prod(shape_of(op.input)[:-1], dtype=np.int64))
    epilogue, residual, final = absorb_epilogue(ctx, op)
    kc = fc_kc(k, m, packed=weights is not None)
    epilogue, residual, out, accumulate = _over_residual(ctx, op, epilogue, residual, final, k, kc)
    bias = [ctx.input(op, 2)] if op.bias is not None else []
    if weights is not None:
        b_buf = ctx.derived_const(op.weights, ("fc", k, o), lambda: pack_b(weights.T, k, o))
    else:
        b_buf = ctx.scratch(4 * o * k)
        relayout(ctx, op, ctx.input(op, 1), (o, k), (1, 0), b_buf)
    spec = GemmSpec(m=m, n=o, k=k, a_panel=False, a_rs=k, a_cs=1, b_panel=weights is not None, ldb=o, ldc=o,
                    bias="col" if bias else "none", epilogue=epilogue, kc=kc, accumulate=accumulate)
    name = gemm_function(ctx, spec)
    args = [ctx.input(op, 0), b_buf, out, *bias]
    ctx.phase(name, args + ([residual] if residual is not None else []), "fc", 2 * m * o * k)


HEADS_AS_K = True
"""heads-in-weights' output projection, `a[B, H, S, D] @ Wo[H, D, N]` then a Reduce sum over
H, runs as one GEMM of K = H * D (`merged_heads`); False: the batched GEMM writes [B, H, S, N]
(H times the output: BERT's 12 x 128 x 768, 4.5 MiB) and the Reduce reads it back."""


HEADS_MIN_D = 64
"""... where each head has at least this many rows of K (D): every K block reloads C, and
Swin-T's D = 32 windows (S = 49) ran 2.3% slower merged (`cpu_knob_ab.py swin_t ...:HEADS_AS_K
--a False --b True --cpu-time`, 1.023, session 11)."""


def merges_heads(ctx: Lowering, op: MatMul) -> bool:
    """Whether `op` is heads-in-weights' output projection that `merged_heads` lowers as one
    GEMM with its Reduce (nothing changed here). Wo is a constant op's (the attention before
    `op` asks this before that op, later in the body, has been lowered)."""
    a_shape, b_shape = shape_of(op.a), shape_of(op.b)
    if (not HEADS_AS_K or not isinstance(op.b.owner, Constant) or len(a_shape) != 4 or len(b_shape) != 3
            or op.bool_prop("transpose_a") or op.bool_prop("transpose_b")):
        return False
    batch, h, s, d = a_shape
    n = b_shape[2]
    user = ctx.single_use(op.output)
    return (b_shape[:2] == (h, d) and d >= HEADS_MIN_D and isinstance(user, Reduce) and user.str_prop("operation") == "sum"
            and user.reduced_axes() == (1,) and shape_of(user.output) in ((batch, s, n), (batch, 1, s, n)))


def merged_heads(ctx: Lowering, op: MatMul) -> bool:
    """Lower `op` with the Reduce summing its heads as one GEMM, if it is heads-in-weights'
    output projection: a[B, H, S, D] (read in place, k = (head, d): one K block of D per head,
    `GemmSpec.a_block_step` = S * D) times the constant Wo[H, D, N] packed as [H * D, N], the
    Reduce's bias Add, residual Add (stored over, `_over_residual`) and activation its
    epilogue. Where the attention kernel wrote a as [B, S, H, D] rows (`ctx.heads_rows`,
    `attention.HEADS_ROWS`), a plain [B * S, H * D] GEMM in K blocks of `fc_kc` instead: the
    blocks of D reloaded C once per head (Whisper-base's 1500 x 512 out-projections 10.0 ms
    against its K projection's 8.0, same shape)."""
    if not merges_heads(ctx, op):
        return False
    batch, h, s, d = shape_of(op.a)
    n = shape_of(op.b)[2]
    w = ctx.constant_of(op.b)
    assert w is not None
    user = ctx.single_use(op.output)
    ctx.absorbed.add(user)
    bias, start = absorb_bias(ctx, user.output, n)
    epilogue, residual, final = absorb_epilogue(ctx, op, start)
    rows = ctx.input(op, 0) in ctx.heads_rows  # a as [B * S, H * D] rows: one plain GEMM in blocks of fc_kc
    kc = fc_kc(h * d) if rows else d
    epilogue, residual, out, accumulate = _over_residual(ctx, op, epilogue, residual, final, h * d, kc)
    b_buf = ctx.const(pack_b(w.reshape(h * d, n), h * d, n))
    if rows:
        spec = GemmSpec(m=batch * s, n=n, k=h * d, a_panel=False, a_rs=h * d, a_cs=1, b_panel=True, ldc=n,
                        bias="col" if bias is not None else "none", epilogue=epilogue, kc=kc, accumulate=accumulate)
    else:
        levels = (Batch(batch, h * s * d, 0, s * n),) if batch > 1 else ()
        spec = GemmSpec(m=s, n=n, k=h * d, a_panel=False, a_rs=d, a_cs=1, a_block_step=s * d, b_panel=True, ldc=n,
                        bias="col" if bias is not None else "none", epilogue=epilogue, batches=levels, kc=d,
                        accumulate=accumulate)
    name = gemm_function(ctx, spec)
    tail = ([bias] if bias is not None else []) + ([residual] if residual is not None else [])
    ctx.phase(name, [ctx.input(op, 0), b_buf, out] + tail, "fc", 2 * batch * s * n * h * d)
    return True


def _over_residual(ctx: Lowering, op: Operation, epilogue: Epilogue, residual: Buffer | None,
                   final: SSAValue, k: int, kc: int) -> tuple[Epilogue, Buffer | None, Buffer, bool]:
    """(epilogue, residual buffer, C buffer, accumulate) of an FC / MatMul GEMM of K rows in
    blocks of `kc`: its result stored over its fused residual where no later op reads that
    (`fusion.residual_in_place`) and K is one block: C starts as the residual and the
    epilogue reads no residual; else a fresh arena buffer. With several K blocks the blocks
    after the first would accumulate onto the residual, rounding at its scale (T5-small's
    error to onnxruntime 3.8e-6 -> 1.1e-5, session 11), for no measured gain (BERT's
    FFN-down 0.991 against its untouched FFN-up's 0.992); the merged heads' blocks of 64 also
    read C once more per tile and block (its out-projections 1.70 -> 1.77 ms)."""
    if residual is not None and kc >= k and residual_in_place(ctx, op, final, residual):
        ctx.alias(final, residual)
        return replace(epilogue, residual=False), None, residual, True
    return epilogue, residual, ctx.result(final), False


def aliased_rows(n: int, k: int) -> bool:
    """Whether a run-time B of k rows of n floats is packed into panels before its GEMM: rows a
    multiple of 4 KiB apart (`PACK_ALIASED`) evict each other from the caches when a panel is
    read in place (a 512 x 1024 x 1024 MatMul of two inputs ran at 33.6 GF/s against 74.2 at n
    = 1000, session 11); the copy is at most `PACK_UNALIGNED_MAX` floats per K row, wider rows
    are packed per block inside the GEMM (`aliased_blocks`)."""
    return _aliased(n) and k >= PACK_UNALIGNED_LEAST[1] and n <= PACK_UNALIGNED_MAX


def aliased_blocks(n: int, k: int, over: int) -> bool:
    """Whether a B of k aliased rows of n floats is packed per block inside the GEMM
    (`PACK_BLOCKS_OVER`, `GemmSpec.b_blocks`): an unbatched MatMul's where it is too wide to
    copy whole (`over`); a batched MatMul's B and a Deconvolution's input, which have no whole
    copy (`over` 0), at any width (session 12, same-process A/Bs in CPU time: batched MatMuls
    with 1024 / 2048 columns 0.43-0.61x, Deconvolutions over 32x32 ... 128x128 inputs
    0.41-0.66x the time read in place)."""
    return PACK_BLOCKS_OVER is not None and _aliased(n) and k >= PACK_UNALIGNED_LEAST[1] and n > max(over, PACK_BLOCKS_OVER)


SHARED_PACKS = True
"""1x1 layers over the same input (Inception's branches: three or four 1x1 layers read each
block's input) read the B panels the first one's copy made (`Lowering.packed_rows`) instead
of copying it again. Sound because nothing stores over a buffer while a reader of it is yet
to be lowered (`fusion.residual_in_place`, `movement.in_place_input`): the later layers are
such readers."""


def _packed_rows(ctx: Lowering, rows: Buffer, k: int, n: int, scale: Buffer | None = None) -> Buffer:
    """B's k rows of n floats copied into the GEMM's NR-column panels (scratch): a 1x1
    layer's input plane or a MatMul's run-time B; with `scale` (k floats) row r times
    scale[r] (a squeeze-excite product left to this copy: `SCALED_PACK`). Unscaled copies
    of one buffer are made once (`SHARED_PACKS`)."""
    key = (rows, k, n, NR)
    if SHARED_PACKS and scale is None and key in ctx.packed_rows:
        return ctx.packed_rows[key]
    panels = ctx.scratch(4 * -(-n // NR) * NR * k)
    if scale is None:
        ctx.packed_rows[key] = panels
    scaled = scale is not None
    pack = ctx.kernel(("pack_rows", n, NR) + (("scaled",) if scaled else ()), lambda m, nm: pack_rows_kernel(m, n, nm, scaled))
    ctx.phase(pack, [rows, panels, ctx.const(np.array([k], np.int64))] + ([scale] if scale is not None else []), "im2col")
    return panels


def _batch_strides(shape: tuple[int, ...], batch: tuple[int, ...], matrix: int) -> list[int]:
    """Element strides of each output batch axis in an operand (0 where broadcast)."""
    padded = (1,) * (len(batch) - len(shape)) + shape
    strides, step = [], matrix
    for size in reversed(padded):
        strides.append(step if size > 1 else 0)
        step *= size
    return list(reversed(strides))


@lowering(MatMul)
def matmul(ctx: Lowering, op: MatMul) -> None:
    """Batched y = op(a) @ op(b): a is read strided (any transpose); b is packed if constant,
    else read as rows (a transposed non-constant b is transposed into scratch first).

    A constant b is packed once per matrix it holds: batch axes it broadcasts over read the
    same panels (stride 0). `[B.., M, K] x [K, N]` with a row-major a is one `[B..*M, K]` GEMM."""
    require_f32(op)
    if merged_heads(ctx, op):
        return
    a_shape, b_shape = shape_of(op.a), shape_of(op.b)
    a_mat = (1, a_shape[0]) if len(a_shape) == 1 else a_shape[-2:]
    b_mat = (b_shape[0], 1) if len(b_shape) == 1 else b_shape[-2:]
    ta = op.bool_prop("transpose_a") and len(a_shape) > 1
    tb = op.bool_prop("transpose_b") and len(b_shape) > 1
    m, k = (a_mat[1], a_mat[0]) if ta else a_mat
    n = b_mat[0] if tb else b_mat[1]
    batch = shape_of(op.output)[: max(len(a_shape), len(b_shape)) - 2] if max(len(a_shape), len(b_shape)) > 2 else ()
    b_batch = b_shape[:-2] if len(b_shape) > 2 else ()
    a_batch = a_shape[:-2] if len(a_shape) > 2 else ()
    if batch and not ta and all(d == 1 for d in b_batch) and tuple(a_batch) == tuple(batch):
        m, batch, b_batch = m * int(np.prod(batch)), (), ()  # rows of every batch entry are one matrix
    b_const = ctx.constant_of(op.b)
    # a Linear's bias Add (one matrix of constant weights): added per column by the GEMM
    bias, start = absorb_bias(ctx, op.output, n) if b_const is not None and not batch else (None, op.output)
    epilogue, residual, final = absorb_epilogue(ctx, op, start)
    kc = fc_kc(k, m * int(np.prod(batch, dtype=np.int64)), packed=b_const is not None)
    epilogue, residual, out, accumulate = _over_residual(ctx, op, epilogue, residual, final, k, kc)
    if b_const is not None:
        mats = b_const.reshape(-1, *b_mat)
        mats = mats.transpose(0, 2, 1) if tb else mats
        b_buf = ctx.derived_const(op.b, ("matmul", tb, k, n), lambda: np.concatenate([pack_b(mt, k, n).ravel() for mt in mats]))
        b_strides = _batch_strides(b_batch, batch, -(-n // NR) * NR * k) if batch else []
        b_panel, ldb = True, 0
    else:
        b_buf, b_panel, ldb = ctx.input(op, 1), False, n
        if tb:  # the GEMM reads B as rows along n: transpose the last two axes into scratch
            rank = len(b_shape)
            b_buf = ctx.scratch(4 * int(np.prod(b_shape)))
            relayout(ctx, op, ctx.input(op, 1), b_shape, (*range(rank - 2), rank - 1, rank - 2), b_buf)
        b_strides = _batch_strides(b_batch, batch, k * n) if batch else []
        if not batch and aliased_rows(n, k):
            b_buf, b_panel, ldb = _packed_rows(ctx, b_buf, k, n), True, 0
    b_blocks = not b_panel and aliased_blocks(n, k, over=0 if batch else PACK_UNALIGNED_MAX)  # batched: no whole copy
    a_strides = _batch_strides(a_batch, batch, m * k) if batch else []
    a_rs, a_cs = (1, m) if ta else (k, 1)
    levels = tuple(Batch(size, sa, sb, sc) for size, sa, sb, sc in zip(batch, a_strides, b_strides, _batch_strides(batch, batch, m * n)))
    spec = GemmSpec(m=m, n=n, k=k, a_panel=False, a_rs=a_rs, a_cs=a_cs, b_panel=b_panel, ldb=ldb, ldc=n,
                    bias="col" if bias is not None else "none", epilogue=epilogue, batches=levels, kc=kc,
                    accumulate=accumulate, b_blocks=b_blocks)
    name = gemm_function(ctx, spec)
    tail = ([bias] if bias is not None else []) + ([residual] if residual is not None else [])
    # tagged with its FLOPs so the benches pair it with onnxruntime's node (`cpu_phase_vs_ort.py`)
    ctx.phase(name, [ctx.input(op, 0), b_buf, out] + tail, "matmul", 2 * int(np.prod(batch, dtype=np.int64)) * m * n * k)
