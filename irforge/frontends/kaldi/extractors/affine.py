"""Affine and per-feature linear components: y = x W^T + b, shifts, scales, batch norm."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Eltwise, FullyConnected
from irforge.frontends.kaldi.registry import ComponentContext, kaldi_extractor


def affine(ctx: ComponentContext, weights: np.ndarray, bias: np.ndarray | None) -> SSAValue:
    """x W^T + b with W [out, in] as Kaldi stores it."""
    ctx.check_dim(weights.shape[1])
    if bias is not None and bias.shape != (weights.shape[0],):
        raise ctx.component.error(f"bias has {bias.shape[0]} values for {weights.shape[0]} outputs", code="E508")
    operands = [ctx.input, ctx.constant(weights, "/weights")]
    if bias is not None:
        operands.append(ctx.constant(bias, "/bias"))
    return ctx.value(FullyConnected, operands)


def per_feature(ctx: ComponentContext, values: np.ndarray, operation: str) -> SSAValue:
    """x (op) v for a vector v over the features (Kaldi's AddShift / Rescale)."""
    ctx.check_dim(values.shape[0])
    return ctx.value(Eltwise, [ctx.input, ctx.constant(values.astype(np.float32), "/" + operation)], operation=operation)


@kaldi_extractor("<AffineTransform>")
def affine_transform(ctx: ComponentContext) -> SSAValue:
    return affine(ctx, ctx.component.array("<Linearity>", 2), ctx.component.array("<Bias>", 1))


@kaldi_extractor("<LinearTransform>")
def linear_transform(ctx: ComponentContext) -> SSAValue:
    return affine(ctx, ctx.component.array("<Linearity>", 2), None)


@kaldi_extractor(
    "<AffineComponent>", "<FixedAffineComponent>", "<NaturalGradientAffineComponent>",
    "<AffineComponentPreconditioned>", "<AffineComponentPreconditionedOnline>",
)  # fmt: skip
def affine_component(ctx: ComponentContext) -> SSAValue:
    return affine(ctx, ctx.component.array("<LinearParams>", 2), ctx.component.array("<BiasParams>", 1))


@kaldi_extractor("<LinearComponent>")
def linear_component(ctx: ComponentContext) -> SSAValue:
    return affine(ctx, ctx.component.array("<Params>", 2), None)


@kaldi_extractor("<AddShift>")
def add_shift(ctx: ComponentContext) -> SSAValue:
    return per_feature(ctx, ctx.component.array("<Shift>", 1), "sum")


@kaldi_extractor("<Rescale>")
def rescale(ctx: ComponentContext) -> SSAValue:
    return per_feature(ctx, ctx.component.array("<Scale>", 1), "mul")


@kaldi_extractor("<FixedScaleComponent>")
def fixed_scale(ctx: ComponentContext) -> SSAValue:
    return per_feature(ctx, ctx.component.array("<Scales>", 1), "mul")


@kaldi_extractor("<FixedBiasComponent>")
def fixed_bias(ctx: ComponentContext) -> SSAValue:
    return per_feature(ctx, ctx.component.array("<Bias>", 1), "sum")


@kaldi_extractor("<PerElementScaleComponent>", "<NaturalGradientPerElementScaleComponent>")
def per_element_scale(ctx: ComponentContext) -> SSAValue:
    return per_feature(ctx, ctx.component.array("<Params>", 1), "mul")


@kaldi_extractor("<BatchNormComponent>")
def batch_norm(ctx: ComponentContext) -> SSAValue:
    """Test mode (as nnet3-compute sets it): y = (x - mean) * target_rms / sqrt(var + eps),
    the statistics shared by the Dim / BlockDim blocks of each frame."""
    c = ctx.component
    dim, block = c.int("<Dim>"), c.int("<BlockDim>")
    mean, var = c.array("<StatsMean>", 1), c.array("<StatsVar>", 1)
    if c.float("<Count>") <= 0:
        # Kaldi itself would invent random statistics here (a unit-test path)
        raise c.error("has no statistics (Count 0): it was never trained in test mode", fix="train or recompute the batch-norm statistics (nnet3-recompute-stats)")
    if block <= 0 or dim % block or mean.shape != (block,) or var.shape != (block,):
        raise c.error(f"Dim {dim}, BlockDim {block} and statistics of {mean.shape[0]}/{var.shape[0]} values disagree", code="E508")
    scale = c.float("<TargetRms>") / np.sqrt(np.maximum(var.astype(np.float64), 0.0) + c.float("<Epsilon>"))
    offset = -mean * scale
    ctx.check_dim(dim)
    reps = dim // block
    scaled = ctx.value(Eltwise, [ctx.input, ctx.constant(np.tile(scale, reps).astype(np.float32), "/scale")], suffix="/scale", operation="mul")
    return ctx.value(Eltwise, [scaled, ctx.constant(np.tile(offset, reps).astype(np.float32), "/offset")], operation="sum")


def tiled(ctx: ComponentContext, values: np.ndarray, what: str) -> np.ndarray:
    """A per-block vector repeated over the Dim / BlockDim blocks of a frame."""
    dim = ctx.component.int("<Dim>", ctx.shape[1])
    ctx.check_dim(dim)
    if values.size == 0 or dim % values.size:
        raise ctx.component.error(f"{what} has {values.size} values for dim {dim}", code="E508")
    return np.tile(values, dim // values.size).astype(np.float32)


@kaldi_extractor("<PerElementOffsetComponent>")
def per_element_offset(ctx: ComponentContext) -> SSAValue:
    offsets = tiled(ctx, ctx.component.array("<Offsets>", 1), "<Offsets>")
    return ctx.value(Eltwise, [ctx.input, ctx.constant(offsets, "/offsets")], operation="sum")


@kaldi_extractor("<ScaleAndOffsetComponent>")
def scale_and_offset(ctx: ComponentContext) -> SSAValue:
    scales = tiled(ctx, ctx.component.array("<Scales>", 1), "<Scales>")
    offsets = tiled(ctx, ctx.component.array("<Offsets>", 1), "<Offsets>")
    scaled = ctx.value(Eltwise, [ctx.input, ctx.constant(scales, "/scales")], suffix="/scale", operation="mul")
    return ctx.value(Eltwise, [scaled, ctx.constant(offsets, "/offsets")], operation="sum")
