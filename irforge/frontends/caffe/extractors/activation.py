"""Caffe element-wise layers: ReLU, PReLU, ELU, Sigmoid, TanH, AbsVal, BNLL, Power, Exp, Log,
and the layers that only forward their input (Dropout, Split) or drop it (Silence)."""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Power, PReLU, ReLU
from irforge.frontends.caffe.registry import LayerContext, caffe_extractor

KINDS = {"Sigmoid": "sigmoid", "TanH": "tanh", "AbsVal": "abs", "BNLL": "softplus"}
"""Parameterless layers -> nn.activation kinds (BNLL is log(1 + exp(x)), i.e. softplus)."""


@caffe_extractor("ReLU")
def relu(ctx: LayerContext) -> SSAValue:
    return ctx.value(ReLU, [ctx.bottom(0)], negative_slope=float(ctx.param("relu_param").negative_slope))


@caffe_extractor(*KINDS)
def activation(ctx: LayerContext) -> SSAValue:
    return ctx.value(Activation, [ctx.bottom(0)], kind=KINDS[ctx.type])


@caffe_extractor("ELU")
def elu(ctx: LayerContext) -> SSAValue:
    return ctx.value(Activation, [ctx.bottom(0)], kind="elu", alpha=float(ctx.param("elu_param").alpha))


@caffe_extractor("PReLU")
def prelu(ctx: LayerContext) -> SSAValue:
    channels = 1 if ctx.param("prelu_param").channel_shared else ctx.shape(0)[1]
    return ctx.value(PReLU, [ctx.bottom(0), ctx.constant(ctx.blob(0, [channels]), "/slope")])


def affine(ctx: LayerContext, x: SSAValue, scale: float, shift: float, suffix: str) -> SSAValue:
    """scale * x + shift, or `x` itself when that is the identity."""
    if scale == 1.0 and shift == 0.0:
        return x
    return ctx.value(Power, [x], suffix=suffix, scale=scale, shift=shift)


@caffe_extractor("Power")
def power(ctx: LayerContext) -> SSAValue:
    # Caffe: y = (shift + scale * x)^power; nn.power is scale * x^power + shift
    p = ctx.param("power_param")
    if p.power == 1.0:
        return ctx.value(Power, [ctx.bottom(0)], scale=float(p.scale), shift=float(p.shift))
    inner = affine(ctx, ctx.bottom(0), float(p.scale), float(p.shift), "/affine")
    return ctx.value(Power, [inner], power=float(p.power))


def log_base(ctx: LayerContext, base: float) -> float:
    """ln(base) for Caffe's `base` (-1 means e)."""
    if base == -1.0:
        return 1.0
    if base <= 0:
        raise ctx.fail(f"base must be positive (or -1 for e), got {base:g}")
    return math.log(base)


@caffe_extractor("Exp")
def exp(ctx: LayerContext) -> SSAValue:
    # y = base^(shift + scale * x) = exp(ln(base) * (shift + scale * x))
    p = ctx.param("exp_param")
    k = log_base(ctx, p.base)
    inner = affine(ctx, ctx.bottom(0), float(k * p.scale), float(k * p.shift), "/affine")
    return ctx.value(Activation, [inner], kind="exp")


@caffe_extractor("Log")
def log(ctx: LayerContext) -> SSAValue:
    # y = log_base(shift + scale * x) = ln(shift + scale * x) / ln(base)
    p = ctx.param("log_param")
    inner = affine(ctx, ctx.bottom(0), float(p.scale), float(p.shift), "/affine")
    ln = ctx.value(Activation, [inner], suffix="/ln" if p.base != -1.0 else "", kind="log")
    return affine(ctx, ln, 1.0 / log_base(ctx, p.base), 0.0, "")


@caffe_extractor("Dropout")
def dropout(ctx: LayerContext) -> SSAValue:
    # Caffe's Dropout scales by 1 / (1 - p) at training time, so at inference it forwards its
    # input; with scale_train false (caffe-fast-rcnn) it scales by 1 - p at inference instead
    p = ctx.param("dropout_param")
    ratio = float(p.dropout_ratio)  # read either way: with scale_train it cannot change inference
    if p.scale_train:
        return ctx.bottom(0)
    return ctx.value(Power, [ctx.bottom(0)], scale=1.0 - ratio)


@caffe_extractor("Split")
def split(ctx: LayerContext) -> list[SSAValue]:
    return [ctx.bottom(0)] * ctx.num_tops


@caffe_extractor("Silence")
def silence(ctx: LayerContext) -> list[SSAValue]:
    ctx.bottoms()  # marks them read, so they are not outputs
    return []
