"""A ReLU (or a zero-keeping Clamp) applied by the depthwise layer that reads it, as that
layer copies its input into its stack plane.

Xception's residual blocks (and any pre-activation block over a depthwise-separable layer)
read one sum twice: raw, as the next residual, and through a ReLU, by a depthwise layer.
The epilogue of the GEMM making the sum cannot apply the ReLU (the raw sum is needed), so
the ReLU was a pointwise pass of its own over the whole tensor (Xception: 11 of them, a
read and a write of 1-11 MiB each). A depthwise layer on the stack-plane kernel
(`depthwise.padded_layout`: rows up to 32 wide, stride-2 rows up to 64) copies every input
row anyway: it applies the activation to each vector it copies (`DepthwiseSpec.input_activation`).
The activation keeps 0 at 0, so the plane's zero pads are what the activated input's pads
would be. The ReLU's lowering defers (`defer_input_activation`: its result aliases its input,
which it leaves unchanged); the depthwise layer's takes it (`take_input_activation`), or, if
it lowers some other way after all, computes it (`materialize_input_activation`).
"""

from __future__ import annotations

import math

from xdsl.ir import Operation

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.lower import Buffer, Lowering, dtype_of, shape_of
from irforge.dialects.nn import Clamp, Convolution, ReLU

DEPTHWISE_INPUT_ACTIVATION = True
"""Defer a ReLU / Clamp whose only user is a depthwise layer on the stack-plane kernel to
that layer's input copy. False: the ReLU is a pointwise pass (the A/B knob)."""


def _activation(op: Operation) -> tuple[str, tuple[float, ...]] | None:
    """The epilogue kind and params of a ReLU (any slope) or a Clamp whose range holds 0."""
    if isinstance(op, ReLU):
        return "relu", (op.float_prop("negative_slope"),)
    if isinstance(op, Clamp) and op.float_prop("min") <= 0.0 <= op.float_prop("max"):
        return "clamp", (op.float_prop("min"), op.float_prop("max"))
    return None


def _stack_plane(conv: Convolution) -> bool:
    """Whether `conv` is a depthwise layer that `linear._depthwise` runs on the stack-plane
    kernel whatever it writes (planes, or B panels: `panel_output_fits` needs that kernel
    too, and a layout for panels implies one for planes)."""
    from irforge.backends.cpu.codegen.depthwise import padded_layout, host_lanes
    from irforge.backends.cpu.ops.linear import geometry  # linear imports this module

    x = shape_of(conv.input)
    if len(x) != 4 or len(shape_of(conv.weights)) != 4:
        return False
    g: ConvGeometry = geometry(conv)
    o = shape_of(conv.weights)[0]
    return g.group == g.c == o and g.group > 1 and padded_layout(g, host_lanes()) is not None


def defer_input_activation(ctx: Lowering, op: Operation) -> bool:
    """For a ReLU / Clamp whose only user reads it as the input of a depthwise layer on the
    stack-plane kernel: alias its result to its input, leave the activation to that layer,
    and say so."""
    act = _activation(op)
    if not DEPTHWISE_INPUT_ACTIVATION or act is None:
        return False
    x, y = op.operands[0], op.results[0]
    conv = ctx.single_use(y)
    if not isinstance(conv, Convolution) or conv.input is not y or conv.weights is y or not _stack_plane(conv):
        return False
    if shape_of(x) != shape_of(y) or not (dtype_of(x) == dtype_of(y) == dtype_of(conv.output) == "float32"):
        return False
    ctx.alias(y, ctx.values[x])
    ctx.input_activations[y] = (op, *act)
    return True


def take_input_activation(ctx: Lowering, conv: Convolution) -> tuple[Operation, str, tuple[float, ...]] | None:
    """The activation deferred onto this convolution's input, if any."""
    return ctx.input_activations.pop(conv.input, None)


def materialize_input_activation(ctx: Lowering, deferred: tuple[Operation, str, tuple[float, ...]]) -> Buffer:
    """The deferred activation computed after all, into a scratch buffer (its result aliases
    its input, which other ops read raw): that buffer."""
    from irforge.backends.cpu.ops.elementwise import pointwise_phase

    op, kind, params = deferred
    shape = shape_of(op.results[0])
    out = ctx.scratch(4 * math.prod(shape))
    pointwise_phase(ctx, shape, [ctx.input(op, 0)], [shape], kind, params, out)
    return out
