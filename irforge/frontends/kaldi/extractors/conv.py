"""nnet3's TimeHeightConvolutionComponent: a convolution over time and height.

A frame's vector is [height_in, filters_in] (filter index fastest); each (time, height) offset
of the model reads the input at frame t + dt and height h_out * subsample + dh (zero outside
the height range); the offsets' inputs, appended in the model's order, go through one affine
map W [filters_out, offsets x filters_in] per output height. The nnet3 graph hands the
component the frames its time offsets read (as for TdnnComponent)."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, FullyConnected, Gather, Reshape, Slice
from irforge.frontends.kaldi.registry import ComponentContext, kaldi_extractor


@kaldi_extractor("<TimeHeightConvolutionComponent>")
def time_height_convolution(ctx: ComponentContext) -> SSAValue:
    c = ctx.component
    f_in, f_out = c.int("<NumFiltersIn>"), c.int("<NumFiltersOut>")
    h_in, h_out, step = c.int("<HeightIn>"), c.int("<HeightOut>"), c.int("<HeightSubsampleOut>")
    offsets = c.array("<Offsets>", 2)
    weights, bias = c.array("<LinearParams>", 2), c.array("<BiasParams>", 1)
    if offsets.size == 0 or weights.shape != (f_out, len(offsets) * f_in) or bias.shape != (f_out,) or min(f_in, f_out, h_in, h_out, step) <= 0:
        raise c.error(f"parameters do not fit {len(offsets)} offsets, {f_in} -> {f_out} filters", code="E508")
    if c.has("<RequiredTimeOffsets>") and set(c.array("<RequiredTimeOffsets>", 1).tolist()) != set(offsets[:, 0].tolist()):
        raise c.error("has optional time offsets (required-time-offsets is not all of them), which are not supported")
    rows, dim = ctx.shape
    ctx.check_dim(h_in * f_in)
    first, last = int(offsets[:, 0].min()), int(offsets[:, 0].max())
    frames = rows - (last - first)
    if frames <= 0:
        raise c.error(f"needs {last - first + 1} frames but gets {rows}", code="E508")
    grid = ctx.value(Reshape, [ctx.input], suffix="/grid", shape=[rows, h_in, f_in])
    padded = ctx.value(Concat, [grid, ctx.constant(np.zeros((rows, 1, f_in), np.float32), "/zero_height")], suffix="/padded", axis=1)
    parts = []
    for k, (dt, dh) in enumerate(offsets.tolist()):
        window = ctx.value(Slice, [padded], suffix=f"/t{k}", begins=[dt - first], ends=[dt - first + frames], axes=[0])
        heights = np.arange(h_out) * step + dh
        heights = np.where((heights >= 0) & (heights < h_in), heights, h_in).astype(np.int32)  # h_in: the zero row
        parts.append(ctx.value(Gather, [window, ctx.constant(heights, f"/h{k}")], suffix=f"/h{k}", axis=1))
    patches = parts[0] if len(parts) == 1 else ctx.value(Concat, parts, suffix="/patches", axis=2)
    out = ctx.value(FullyConnected, [patches, ctx.constant(weights, "/weights"), ctx.constant(bias, "/bias")], suffix="/conv")
    return ctx.value(Reshape, [out], shape=[frames, h_out * f_out])
