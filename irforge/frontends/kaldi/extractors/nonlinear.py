"""Nonlinearities and group reductions: sigmoid, tanh, ReLU, (log-)softmax, p-norm, normalize,
and the components that are the identity (or a fixed scale) at inference.

p-norm and normalize are decompositions into existing ops (reshape + reduce, and x * r /
sqrt(max(mean(x^2), floor))), which OpenVINO's IR and every backend already run."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Eltwise, FullyConnected, Power, Reduce, ReLU, Reshape, Slice, SoftMax
from irforge.frontends.kaldi.registry import ComponentContext, kaldi_extractor

NORM_FLOOR = 2.0**-66
"""Kaldi's kNormFloor: the floor of the mean square in NormalizeComponent."""


@kaldi_extractor("<Sigmoid>", "<SigmoidComponent>")
def sigmoid(ctx: ComponentContext) -> SSAValue:
    return ctx.value(Activation, [ctx.input], kind="sigmoid")


@kaldi_extractor("<Tanh>", "<TanhComponent>")
def tanh(ctx: ComponentContext) -> SSAValue:
    return ctx.value(Activation, [ctx.input], kind="tanh")


@kaldi_extractor("<RectifiedLinearComponent>")
def relu(ctx: ComponentContext) -> SSAValue:
    return ctx.value(ReLU, [ctx.input])


@kaldi_extractor("<Softmax>", "<SoftmaxComponent>")
def softmax(ctx: ComponentContext) -> SSAValue:
    return ctx.value(SoftMax, [ctx.input], axis=1)


@kaldi_extractor("<LogSoftmaxComponent>")
def log_softmax(ctx: ComponentContext) -> SSAValue:
    return ctx.value(SoftMax, [ctx.input], axis=1, log=True)


@kaldi_extractor(
    "<Dropout>", "<NoOpComponent>", "<BackpropTruncationComponent>", "<ClipGradientComponent>",
    "<GeneralDropoutComponent>",
)  # fmt: skip
def identity(ctx: ComponentContext) -> SSAValue:
    """Components that only act in training (nnet1's and GeneralDropoutComponent's dropout
    masks are scaled to keep the expectation, so they are the identity at test time)."""
    return ctx.input


@kaldi_extractor("<DropoutComponent>")
def dropout(ctx: ComponentContext) -> SSAValue:
    """nnet3 in test mode scales by 1 - proportion (its training masks are 0/1, not rescaled)."""
    c = ctx.component
    if c.has("<DropoutScale>"):
        raise c.error("is nnet2's DropoutComponent, which has no inference form", fix="remove it with nnet-am-copy --remove-dropout=true")
    keep = 1.0 - c.float("<DropoutProportion>", 0.0)
    if keep == 1.0:
        return ctx.input
    return ctx.value(Eltwise, [ctx.input, ctx.constant(np.array([keep], np.float32), "/keep")], operation="mul")


def group_norm(ctx: ComponentContext, groups: int, p: float) -> SSAValue:
    """(sum over each of `groups` contiguous groups of |x|^p)^(1/p)."""
    rows, dim = ctx.shape
    if groups <= 0 or dim % groups:
        raise ctx.component.error(f"input dim {dim} is not a multiple of the output dim {groups}", code="E508")
    grouped = ctx.value(Reshape, [ctx.input], suffix="/groups", shape=[rows, groups, dim // groups])
    if p in (1.0, 2.0):
        return ctx.value(Reduce, [grouped], operation="l1" if p == 1.0 else "l2", axes=[2], keep_dims=False)
    magnitude = ctx.value(Activation, [grouped], suffix="/abs", kind="abs")
    powered = ctx.value(Power, [magnitude], suffix="/pow", power=p)
    total = ctx.value(Reduce, [powered], suffix="/sum", operation="sum", axes=[2], keep_dims=False)
    return ctx.value(Power, [total], power=1.0 / p)


@kaldi_extractor("<PnormComponent>")
def pnorm(ctx: ComponentContext) -> SSAValue:
    c = ctx.component
    ctx.check_dim(c.int("<InputDim>"))
    p = c.float("<P>", 2.0)
    if not p > 0:
        raise c.error(f"P must be positive, got {p}")
    return group_norm(ctx, c.int("<OutputDim>"), p)


@kaldi_extractor("<NormalizeComponent>")
def normalize(ctx: ComponentContext) -> SSAValue:
    """y = x * r / sqrt(max(mean(x^2) / r^2, 2^-66)) per block (nnet2: r = 1, one block)."""
    c = ctx.component
    if c.bool("<AddLogStddev>", False):
        raise c.error("AddLogStddev T is not supported", fix="retrain without add-log-stddev")
    rows, dim = ctx.shape
    ctx.check_dim(c.int("<InputDim>") if c.has("<InputDim>") else c.int("<Dim>"))
    block = c.int("<BlockDim>", dim)
    if block <= 0 or dim % block:
        raise c.error(f"BlockDim {block} does not divide the dim {dim}", code="E508")
    target = c.float("<TargetRms>", 1.0)
    blocks = ctx.value(Reshape, [ctx.input], suffix="/blocks", shape=[rows, dim // block, block])
    square = ctx.value(Eltwise, [blocks, blocks], suffix="/square", operation="mul")
    mean = ctx.value(Reduce, [square], suffix="/mean", operation="mean", axes=[2], keep_dims=True)
    if target != 1.0:
        mean = ctx.value(Eltwise, [mean, ctx.constant(np.array([1.0 / target**2], np.float32), "/rms")], suffix="/rms", operation="mul")
    floored = ctx.value(Eltwise, [mean, ctx.constant(np.array([NORM_FLOOR], np.float32), "/floor")], suffix="/floor", operation="max")
    inverse = ctx.value(Power, [floored], suffix="/rsqrt", power=-0.5)
    scaled = ctx.value(Eltwise, [blocks, inverse], suffix="/scale", operation="mul")
    return ctx.value(Reshape, [scaled], shape=[rows, dim])


@kaldi_extractor("<LengthNormComponent>")
def length_norm(ctx: ComponentContext) -> SSAValue:
    """nnet1: each frame divided by its L2 norm (no floor, as in Kaldi)."""
    squares = ctx.value(Reduce, [ctx.input], suffix="/sum_square", operation="sum_square", axes=[1], keep_dims=True)
    inverse = ctx.value(Power, [squares], suffix="/rsqrt", power=-0.5)
    return ctx.value(Eltwise, [ctx.input, inverse], operation="mul")


@kaldi_extractor("<SumGroupComponent>")
def sum_group(ctx: ComponentContext) -> SSAValue:
    """Each output sums its group of consecutive inputs: a 0/1 matrix product, exact in f32."""
    sizes = ctx.component.array("<Sizes>", 1)
    if (sizes <= 0).any():
        raise ctx.component.error("has a group of size 0 or below", code="E508")
    ctx.check_dim(int(sizes.sum()))
    weights = np.zeros((len(sizes), int(sizes.sum())), np.float32)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for j, (a, b) in enumerate(zip(starts[:-1], starts[1:])):
        weights[j, a:b] = 1.0
    return ctx.value(FullyConnected, [ctx.input, ctx.constant(weights, "/groups")])


@kaldi_extractor("<ElementwiseProductComponent>")
def elementwise_product(ctx: ComponentContext) -> SSAValue:
    """The input's InputDim / OutputDim consecutive parts multiplied element by element."""
    c = ctx.component
    n_in, n_out = c.int("<InputDim>"), c.int("<OutputDim>")
    ctx.check_dim(n_in)
    if n_out <= 0 or n_in % n_out:
        raise c.error(f"InputDim {n_in} is not a multiple of OutputDim {n_out}", code="E508")
    parts = [
        ctx.value(Slice, [ctx.input], suffix=f"/part{i}", begins=[i * n_out], ends=[(i + 1) * n_out], axes=[1])
        for i in range(n_in // n_out)
    ]
    product = parts[0]
    for i, part in enumerate(parts[1:]):
        product = ctx.value(Eltwise, [product, part], suffix="" if i == len(parts) - 2 else f"/mul{i}", operation="mul")
    return product


@kaldi_extractor("<MaxpoolingComponent>")
def max_pooling(ctx: ComponentContext) -> SSAValue:
    """nnet3's 3-D max pooling of each frame's vector read as [X, Y, Z] (index x*Y*Z + y*Z + z),
    pools of size (px, py, pz) at steps (sx, sy, sz), output [nx, ny, nz] flattened the same
    way: the maximum over the pool offsets of strided slices (pools are small)."""
    c = ctx.component
    dims = [c.int(f"<Input{a}Dim>") for a in "XYZ"]
    sizes = [c.int(f"<Pool{a}Size>") for a in "XYZ"]
    steps = [c.int(f"<Pool{a}Step>") for a in "XYZ"]
    if any(n <= 0 for n in dims + sizes + steps) or any(s > d for s, d in zip(sizes, dims)):
        raise c.error(f"pool sizes {sizes} and steps {steps} do not fit the input {dims}", code="E508")
    rows, _ = ctx.shape
    ctx.check_dim(dims[0] * dims[1] * dims[2])
    pools = [1 + (d - s) // st for d, s, st in zip(dims, sizes, steps)]
    grid = ctx.value(Reshape, [ctx.input], suffix="/xyz", shape=[rows, *dims])
    result: SSAValue | None = None
    for k, (dx, dy, dz) in enumerate(np.ndindex(*sizes)):
        begins = [dx, dy, dz]
        ends = [b + (n - 1) * st + 1 for b, n, st in zip(begins, pools, steps)]
        part = ctx.value(Slice, [grid], suffix=f"/pool{k}", begins=begins, ends=ends, axes=[1, 2, 3], steps=steps)
        result = part if result is None else ctx.value(Eltwise, [result, part], suffix=f"/max{k}", operation="max")
    assert result is not None
    return ctx.value(Reshape, [result], shape=[rows, pools[0] * pools[1] * pools[2]])
