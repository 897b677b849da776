"""ONNX CausalConvWithState (opset 27, the short convolution of Mamba / gated-delta-net
layers in new LLM exports) as a composition of nn ops:

    padded  = Concat(past_state or zeros [B, C, k-1], input [B, C, L], axis 2)
    output  = Convolution(padded, weight [C, 1, k], bias, group C, no pads)  [, swish]
    present = padded[:, :, L:]      (the last k-1 positions: the next call's past_state)

OpenVINO writes the convolution as GroupConvolution; silu and swish are Swish-4.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Activation, Concat, Convolution, Slice
from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl

ACTIVATIONS = ("none", "silu", "swish")


@onnx_extractor("CausalConvWithState")
def causal_conv_with_state(ctx: NodeContext) -> list[SSAValue]:
    activation = str(ctx.attr("activation", "none"))
    if activation not in ACTIVATIONS:
        raise ctx.fail(f"activation '{activation}' is not one of {list(ACTIVATIONS)}", fix="use none, silu or swish")
    batch, channels, length = ctx.input_shape(0, rank=3)
    weight = ctx.input_shape(1, rank=3)
    k = weight[2]
    if k == DYN or weight[1] != 1 or (DYN not in (weight[0], channels) and weight[0] != channels):
        raise ctx.fail(f"weight {list(weight)} must be [C, 1, k] of known k for an input of {channels} channels", fix="give a depthwise weight [C, 1, k]")
    if ctx.has_input(3):
        state = ctx.input_shape(3, rank=3)
        if state[2] != k - 1:
            raise ctx.fail(f"past_state {list(state)} must hold k-1 = {k - 1} positions", fix="give the present_state of the previous call")
        past: SSAValue | None = ctx.input(3)
    elif k > 1:
        if DYN in (batch, channels):
            raise ctx.fail("a zero past_state of an input with dims unknown at conversion", fix="give static input shapes (--input_shape) or pass past_state")
        past = ctx.filled([batch, channels, k - 1], np.zeros((), from_xdsl(ctx.input_type(0).element_type)), "/zero_state")
    else:
        past = None
    padded = ctx.value(Concat, [past, ctx.input(0)], suffix="/padded", axis=2) if past is not None else ctx.input(0)
    operands = [padded, ctx.input(1), *([ctx.input(2)] if ctx.has_input(2) else [])]
    conv = ctx.value(Convolution, operands, suffix="" if activation == "none" else "/conv", group=channels if channels != DYN else weight[0],
                     strides=[1], dilations=[1], pads_begin=[0], pads_end=[0])  # fmt: skip
    output = conv if activation == "none" else ctx.value(Activation, [conv], kind="swish", alpha=1.0)
    padded_length = DYN if length == DYN else length + k - 1
    if padded_length == DYN:
        raise ctx.fail("an input length unknown at conversion", fix="give static input shapes (--input_shape)")
    present = ctx.value(Slice, [padded], suffix="/present_state", begins=[padded_length - (k - 1)], ends=[padded_length], axes=[2])
    return [output, present]
