"""Frame splicing and feature copying: nnet1's Splice and Copy, nnet2's SpliceComponent.

Each spliced offset is a Gather of frame indices. nnet1 clamps them to the frames of the
component's input (Kaldi repeats the edge frames); nnet2's input is padded by the model's
context once, so each SpliceComponent only drops the frames its context consumes."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Gather, Slice
from irforge.frontends.kaldi.extractors.affine import affine
from irforge.frontends.kaldi.registry import ComponentContext, kaldi_extractor


def splice(ctx: ComponentContext, offsets: np.ndarray, const_dim: int = 0, suffix: str = "") -> SSAValue:
    rows, dim = ctx.shape
    if offsets.size == 0:
        raise ctx.component.error("has no frame offsets")
    lo, hi = int(offsets.min()), int(offsets.max())
    if ctx.valid_splice:
        out_rows = rows - (hi - lo)
        if out_rows <= 0:
            raise ctx.component.error(f"needs {hi - lo + 1} frames but gets {rows}", code="E508")
        base = np.arange(out_rows) - lo
    else:
        out_rows, base = rows, np.arange(rows)
    varying = ctx.input
    if const_dim:
        varying = ctx.value(Slice, [ctx.input], suffix="/varying", begins=[0], ends=[dim - const_dim], axes=[1])
    parts = [ctx.frames(varying, np.clip(base + int(o), 0, rows - 1), f"/offset{i}") for i, o in enumerate(offsets)]
    if const_dim:
        # nnet2 takes the constant features (e.g. i-vectors) from the first frame of the window
        const = ctx.value(Slice, [ctx.input], suffix="/const", begins=[dim - const_dim], ends=[dim], axes=[1])
        parts.append(ctx.frames(const, base + lo, "/const_frames"))
    if len(parts) == 1:
        return parts[0]
    return ctx.value(Concat, parts, suffix=suffix, axis=1)


@kaldi_extractor("<Splice>")
def nnet1_splice(ctx: ComponentContext) -> SSAValue:
    offsets = ctx.component.array("<Offsets>", 1)
    out_dim = ctx.component.int("<OutputDim>")
    if out_dim != ctx.shape[1] * len(offsets):
        raise ctx.component.error(f"output dim {out_dim} is not {len(offsets)} offsets x input dim {ctx.shape[1]}", code="E508")
    return splice(ctx, offsets)


@kaldi_extractor("<SpliceComponent>")
def nnet2_splice(ctx: ComponentContext) -> SSAValue:
    c = ctx.component
    if c.has("<Context>"):
        context = c.array("<Context>", 1)
    else:
        context = np.arange(-c.int("<LeftContext>"), c.int("<RightContext>") + 1)
    ctx.check_dim(c.int("<InputDim>"))
    const_dim = c.int("<ConstComponentDim>", 0)
    if not 0 <= const_dim < ctx.shape[1]:
        raise c.error(f"ConstComponentDim {const_dim} is outside [0, {ctx.shape[1]})", code="E508")
    return splice(ctx, context, const_dim)


@kaldi_extractor("<Copy>")
def nnet1_copy(ctx: ComponentContext) -> SSAValue:
    """Output feature i is input feature indices[i] (0-based here; the file has them 1-based)."""
    indices = ctx.component.array("<Indices>", 1)
    dim = ctx.shape[1]
    if indices.size == 0 or indices.min() < 0 or indices.max() >= dim:
        raise ctx.component.error(f"copies features outside [1, {dim}]", code="E508")
    columns = ctx.constant(indices.astype(np.int32), "/columns")
    return ctx.value(Gather, [ctx.input, columns], axis=1)


@kaldi_extractor("<TdnnComponent>")
def tdnn(ctx: ComponentContext) -> SSAValue:
    """nnet3's TdnnComponent: its input at each time offset, appended, through one affine map
    (the nnet3 graph hands it the frames its offsets read)."""
    c = ctx.component
    bias = c.array("<BiasParams>", 1)
    return affine_on(ctx, splice(ctx, c.array("<TimeOffsets>", 1), suffix="/spliced"), c.array("<LinearParams>", 2), bias if bias.size else None)


def affine_on(ctx: ComponentContext, x: SSAValue, weights: np.ndarray, bias: np.ndarray | None) -> SSAValue:
    spliced = ComponentContext(ctx.importer, ctx.component, x)
    return affine(spliced, weights, bias)
