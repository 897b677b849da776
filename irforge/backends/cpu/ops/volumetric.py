"""Convolution, Deconvolution and Pooling with 3 or more spatial axes (video, 3-D UNets).

Everything runs on the 2-D machinery, through compiled kernels (no host steps):

- Convolution: the leading spatial axes (all but the last two) are unfolded by one copy
  kernel into X'[n, od.., c, kd.., H, W] (one move per leading tap; taps reading the
  padding become zero rows), which is a batch of N * OD.. 2-D images of C * KD.. channels.
  The weights [O, C/g, kd.., kh, kw] are already the weights of that 2-D convolution
  ([O, C/g * kd.., kh, kw]), so the existing im2col and GEMM kernels do the rest; the GEMM
  writes each image's [O, OH, OW] block straight into the 5-D output (batch strides), and
  a fused bias / ReLU / residual Add stays in its epilogue. A (1, k, k) window costs a
  transpose of the input plus the 2-D convolution of N * T images; a (k, 1, 1) window
  (R(2+1)D's temporal half) needs no im2col: the GEMM reads X' itself. A 1x1x1 window
  with no leading padding reads the input in place (no copy). Depthwise (constant weights):
  X' through the direct 2-D depthwise kernel (C * KD.. channels), then a rows reduction over
  the leading taps and a transpose into place (MViT's pooling convolutions, X3D).
- Deconvolution: the GEMM (col = W^T x per sample and group) is the 2-D one over the
  flattened spatial positions; `codegen.col2im_nd` sums the columns into the output.
- Pooling: a box window is separable, max and average alike (the average's divisor, a
  count of taps inside the input or the padded input, is a product of per-axis counts):
  the 2-D pool kernel over the last two axes, then one (k, 1) pool per leading axis.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np

from irforge.backends.cpu.codegen.col2im_nd import Col2imNdSpec, col2im_nd_kernel
from irforge.backends.cpu.codegen.conv import ConvGeometry, im2col_kernel
from irforge.backends.cpu.codegen.copy import FILL, Move, contiguous_strides
from irforge.backends.cpu.codegen.depthwise import DepthwiseSpec, depthwise_kernel, host_lanes
from irforge.backends.cpu.codegen.epilogue import Epilogue
from irforge.backends.cpu.codegen.rows import RowSpec, row_kernel
from irforge.backends.cpu.codegen.gemm import NR, Batch, GemmSpec, pack_a_all
from irforge.backends.cpu.codegen.im2col_flat import flat_pays
from irforge.backends.cpu.codegen.pool import PoolSpec, pool_kernel
from irforge.backends.cpu.lower import Buffer, Lowering, shape_of
from irforge.backends.cpu.ops.gemm_function import gemm_function
from irforge.backends.cpu.ops.fusion import absorb_epilogue, require_f32
from irforge.backends.cpu.ops.movement import emit_moves, relayout
from irforge.dialects.nn import Convolution, Deconvolution, Pooling


SCRATCH_BYTES = 48 << 20
"""Unfolded input + im2col panels of one chunk of output depth slices at most (one slice
at least): a 3-D UNet layer at 128^3 would otherwise unfold gigabytes at once."""


def _unfold_moves(x: tuple[int, ...], out_lead: tuple[int, ...], k_lead: tuple[int, ...], strides, dilations, pads, first: range) -> list[Move]:  # type: ignore[no-untyped-def]
    """Moves filling X'[n, od.., c, kd.., H*W] from x [N, C, D.., H, W], one per leading tap,
    for the output indices `first` along the first leading axis."""
    n, c, lead, plane = x[0], x[1], x[2:-2], x[-2] * x[-1]
    x_strides = contiguous_strides(x)
    taps = math.prod(k_lead)
    chunk = (len(first), *out_lead[1:])
    shape = (n, *chunk, c, plane)
    out_strides = contiguous_strides(chunk)
    dst_strides = (math.prod(chunk) * c * taps * plane, *(s * c * taps * plane for s in out_strides), taps * plane, 1)
    moves = []
    for flat, tap in enumerate(itertools.product(*(range(k) for k in k_lead))):
        maps: list[int | tuple[int, ...]] = [x_strides[0]]
        for j, (size, i) in enumerate(zip(lead, tap)):
            outs = first if j == 0 else range(out_lead[j])
            src = [o * strides[j] + i * dilations[j] - pads[j] for o in outs]
            maps.append(tuple(s * x_strides[2 + j] if 0 <= s < size else FILL for s in src))
        maps += [x_strides[1], 1]
        moves.append(Move(0, 1, shape, tuple(maps), dst_strides, 0, flat * plane))
    return moves


def volumetric_convolution(ctx: Lowering, op: Convolution) -> None:
    """Convolution with 3+ spatial axes: leading axes unfolded, then 2-D im2col + GEMM, in
    chunks of output slices along the first leading axis (bounded scratch)."""
    require_f32(op)
    x, w, y = shape_of(op.input), shape_of(op.weights), shape_of(op.output)
    lead = len(x) - 4
    kernel = w[2:]
    begin, _ = op.explicit_pads(kernel)
    strides, dilations = op.window("strides", 1), op.window("dilations", 1)
    group, o = op.int_prop("group"), w[0]
    k_lead, out_lead = kernel[:lead], y[2:2 + lead]
    taps, outs = math.prod(k_lead), math.prod(out_lead)
    weights = ctx.constant_of(op.weights)
    bias_const = ctx.constant_of(op.bias) if op.bias is not None else None
    if group == x[1] == o > 1 and weights is not None and (op.bias is None or bias_const is not None):
        _depthwise(ctx, op, x, y, weights, bias_const, lead, k_lead, out_lead, strides, dilations, begin)
        return
    per_slice = math.prod(out_lead[1:])  # images per output index along the first leading axis
    g = ConvGeometry(x[0] * per_slice, x[1] * taps, x[-2], x[-1], kernel[-2], kernel[-1], y[-2], y[-1],
                     tuple(strides[-2:]), tuple(dilations[-2:]), tuple(begin[-2:]), group)  # type: ignore[arg-type]
    og, kg = o // group, g.k_per_group
    epilogue, residual, final = absorb_epilogue(ctx, op)
    out = ctx.result(final)
    bias = [ctx.input(op, 2)] if op.bias is not None else []
    tail = bias + ([residual] if residual is not None else [])
    if weights is not None:
        flat = weights.reshape(o, kg)
        a_buf = ctx.const(pack_a_all([flat[i * og:(i + 1) * og] for i in range(group)], og, kg))
        a_layout, group_a = dict(a_panel=True), a_buf.nbytes // 4 // group
    else:
        a_buf, a_layout, group_a = ctx.input(op, 1), dict(a_panel=False, a_rs=kg, a_cs=1), og * kg
    pointwise = g.kh == g.kw == 1 and g.stride == (1, 1) and g.pad == (0, 0) and g.oh == g.h and g.ow == g.w
    plane_in = g.h * g.w
    channel = outs * g.p  # elements between output channels
    tag = "conv" + "x".join(map(str, kernel))

    def gemm(b_buf: Buffer, b_panel: bool, ldb: int, b_group: int, b_image: int, b_sample: int, slices: int, first: int) -> None:
        images = slices * per_slice
        levels = (Batch(x[0], 0, b_sample, o * channel, 0), Batch(images, 0, b_image, g.p, 0), Batch(group, group_a, b_group, og * channel, og))
        from irforge.backends.cpu.ops.linear import PACK_UNALIGNED_LEAST, aliased_blocks  # linear imports this module

        # B rows `ldb` floats apart, a multiple of 4 KiB: packed per block as the 2-D 1x1 layers' are
        b_blocks = not b_panel and aliased_blocks(ldb, kg, over=0) and og >= PACK_UNALIGNED_LEAST[0]
        spec = GemmSpec(m=og, n=g.p, k=kg, b_panel=b_panel, ldb=ldb, ldc=channel, bias="row" if bias else "none",
                        epilogue=epilogue, batches=tuple(lv for lv in levels if lv.count > 1), c_offset=first * per_slice * g.p,
                        b_blocks=b_blocks, **a_layout)  # type: ignore[arg-type]
        name = gemm_function(ctx, spec)
        ctx.phase(name, [a_buf, b_buf, out, *tail], tag, 2 * x[0] * o * images * g.p * kg)

    if pointwise and lead == 1 and taps == 1 and begin[0] == 0 and (out_lead[0] - 1) * strides[0] < x[2]:
        # B read in place: image (n, od) is the depth slice od * stride; rows c are D planes apart
        depth = x[2]
        gemm(ctx.input(op, 0), False, depth * plane_in, (x[1] // group) * depth * plane_in, strides[0] * plane_in,
             x[1] * depth * plane_in, out_lead[0], 0)
        return
    unfolded_slice = x[0] * per_slice * g.c * plane_in  # elements of X' per output slice
    b_image = g.c * g.p if pointwise else group * g.panels * kg * NR
    per_slice_bytes = 4 * (unfolded_slice + (0 if pointwise else x[0] * per_slice * b_image))
    chunk = max(1, min(out_lead[0], SCRATCH_BYTES // per_slice_bytes))
    unfolded = ctx.scratch(4 * unfolded_slice * chunk)
    panels = None if pointwise else ctx.scratch(4 * x[0] * per_slice * b_image * chunk)
    for first in range(0, out_lead[0], chunk):
        slices = min(chunk, out_lead[0] - first)
        emit_moves(ctx, op, [ctx.input(op, 0), unfolded],
                   _unfold_moves(x, out_lead, k_lead, strides, dilations, begin, range(first, first + slices)))
        if pointwise:
            gemm(unfolded, False, g.p, kg * g.p, b_image, slices * per_slice * b_image, slices, first)
            continue
        cg = replace(g, n=x[0] * per_slice * slices)
        im2col = ctx.kernel(("im2col", cg, False, flat_pays(cg)), lambda m, n: im2col_kernel(m, cg, n, False))
        ctx.phase(im2col, [unfolded, panels], "im2col")
        gemm(panels, True, g.p, g.panels * kg * NR, b_image, slices * per_slice * b_image, slices, first)


def _depthwise(ctx: Lowering, op: Convolution, x, y, weights, bias, lead, k_lead, out_lead, strides, dilations, begin) -> None:  # type: ignore[no-untyped-def]
    """Depthwise (one input channel per group): X' [n, od.., c, kd.., H, W] (unfolded as
    above) is a 2-D depthwise convolution of C * KD.. channels, run by the direct depthwise
    kernel ((c, kd..) channel's weights w[c, 0, kd..]; the bias on each channel's first
    tap); then the sum over the leading taps (a rows reduction) and the transpose of
    [n, od.., c] to [n, c, od..]. A following activation is not fused (it follows the sum)."""
    c, taps, outs = x[1], math.prod(k_lead), math.prod(out_lead)
    kernel = weights.shape[2:]
    g = ConvGeometry(x[0] * outs, c * taps, x[-2], x[-1], kernel[-2], kernel[-1], y[-2], y[-1],
                     tuple(strides[-2:]), tuple(dilations[-2:]), tuple(begin[-2:]), c * taps)  # type: ignore[arg-type]
    unfolded = ctx.scratch(4 * g.n * g.c * g.h * g.w)
    emit_moves(ctx, op, [ctx.input(op, 0), unfolded], _unfold_moves(x, out_lead, k_lead, strides, dilations, begin, range(out_lead[0])))
    extra = []
    if bias is not None:
        per_tap = np.zeros((c, taps), np.float32)
        per_tap[:, 0] = bias
        extra = [ctx.const(per_tap.ravel())]
    spec = DepthwiseSpec(g, bias is not None, Epilogue(), host_lanes())
    direct = outs == 1  # [n, od.., c] is [n, c, od..] already
    per_channel = ctx.output(op) if direct and taps == 1 else ctx.scratch(4 * g.n * g.c * g.p)
    name = ctx.kernel(("dwconv", spec), lambda m, n: depthwise_kernel(m, spec, n))
    ctx.phase(name, [unfolded, ctx.const(weights.reshape(c * taps, -1)), per_channel, *extra], "depthwise", 2 * g.n * g.c * g.p * g.kh * g.kw)
    summed = per_channel
    if taps > 1:
        summed = ctx.output(op) if direct else ctx.scratch(4 * g.n * c * g.p)
        rows = RowSpec(g.n * c, taps, g.p, "reduce.sum")
        ctx.phase(ctx.kernel(("rows", rows), lambda m, n: row_kernel(m, rows, n)), [per_channel, summed])
    if not direct:
        relayout(ctx, op, summed, (x[0], outs, c, g.p), (0, 2, 1, 3), ctx.output(op))


def volumetric_deconvolution(ctx: Lowering, op: Deconvolution) -> None:
    """Deconvolution with 3+ spatial axes: col = W^T x (one GEMM per sample and group over
    all input positions), then the N-d col2im gather."""
    require_f32(op)
    x, w, y = shape_of(op.input), shape_of(op.weights), shape_of(op.output)
    group = op.int_prop("group")
    cg, og = x[1] // group, w[1]
    taps = math.prod(w[2:])
    m, p = og * taps, math.prod(x[2:])
    weights = ctx.constant_of(op.weights)
    if weights is not None:  # A panels of each group's W^T [og * taps, cg], packed once
        a_buf = ctx.const(pack_a_all([weights[i * cg:(i + 1) * cg].reshape(cg, m).T for i in range(group)], m, cg))
        a_layout: dict = dict(a_panel=True)  # type: ignore[type-arg]
        group_a = a_buf.nbytes // 4 // group
    else:  # W read in place: A[row, c] = w[c, row]
        a_buf, a_layout, group_a = ctx.input(op, 1), dict(a_panel=False, a_rs=1, a_cs=m), cg * m
    col = ctx.scratch(4 * x[0] * group * m * p)
    levels = (Batch(x[0], 0, x[1] * p, group * m * p, 0), Batch(group, group_a, cg * p, m * p, 0))
    from irforge.backends.cpu.ops.linear import PACK_UNALIGNED_LEAST, aliased_blocks  # linear imports this module

    b_blocks = aliased_blocks(p, cg, over=0) and m >= PACK_UNALIGNED_LEAST[0]  # as the 2-D Deconvolution's
    spec = GemmSpec(m=m, n=p, k=cg, b_panel=False, ldb=p, ldc=p, batches=tuple(lv for lv in levels if lv.count > 1),
                    b_blocks=b_blocks, **a_layout)
    ctx.phase(gemm_function(ctx, spec), [a_buf, ctx.input(op, 0), col], "deconv", 2 * x[0] * group * m * p * cg)
    begin, _ = op.transposed_pads(w[2:], x[2:])
    c2i = Col2imNdSpec(x[0], group, og, tuple(x[2:]), tuple(w[2:]), tuple(y[2:]), tuple(op.window("strides", 1)),
                       tuple(op.window("dilations", 1)), tuple(begin), op.bias is not None)
    bias = [ctx.input(op, 2)] if op.bias is not None else []
    ctx.phase(ctx.kernel(("col2im_nd", c2i), lambda mod, n: col2im_nd_kernel(mod, c2i, n)), [col, ctx.output(op), *bias], "col2im")


def volumetric_pooling(ctx: Lowering, op: Pooling) -> None:
    """Pooling with 3+ spatial axes: 2-D pooling of every (H, W) plane, then a (k, 1) pool
    along each leading axis, last first (exact for max and both average divisors)."""
    require_f32(op)
    x, y = shape_of(op.input), shape_of(op.output)
    lead = len(x) - 4
    kernel = op.ints("kernel")
    begin, end = op.explicit_pads(kernel)
    strides, dilations = op.window("strides", 1), op.window("dilations", 1)
    method, exclude = op.str_prop("method"), op.bool_prop("exclude_pad")
    shape = list(x)
    src: Buffer = ctx.input(op, 0)

    def pool(g: ConvGeometry, pad_end: tuple[int, int], last: bool) -> Buffer:
        spec = PoolSpec(g, method, exclude, pad_end)
        dst = ctx.output(op) if last else ctx.scratch(4 * g.n * g.c * g.p)
        ctx.phase(ctx.kernel(("pool", spec), lambda m, n: pool_kernel(m, spec, n)), [src, dst])
        return dst

    g = ConvGeometry(x[0], math.prod(x[1:-2]), x[-2], x[-1], kernel[-2], kernel[-1], y[-2], y[-1],
                     tuple(strides[-2:]), tuple(dilations[-2:]), tuple(begin[-2:]))  # type: ignore[arg-type]
    src = pool(g, tuple(end[-2:]), False)  # type: ignore[arg-type]
    shape[-2:] = y[-2:]
    for j in range(lead - 1, -1, -1):
        axis = 2 + j
        outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1:])
        g = ConvGeometry(outer, 1, shape[axis], inner, kernel[j], 1, y[axis], inner, (strides[j], 1), (dilations[j], 1), (begin[j], 0))
        src = pool(g, (end[j], 0), j == 0)
        shape[axis] = y[axis]
