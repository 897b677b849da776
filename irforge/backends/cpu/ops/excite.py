"""Squeeze-excite's channel scale folded into the next 1x1 convolution's weights.

An SE block (MobileNetV3, EfficientNet, RegNet-Y, LR-ASPP's backbone) ends in
`Multiply(x [1, c, h, w], s [1, c, 1, 1])` whose only user is a 1x1 convolution; since
`W (s x) = (W s) x`, the product is not computed: the Multiply's result aliases x, and the
convolution scales its packed weights' K rows by s at run time (`codegen.scale_panels`), an
[o, c] matrix instead of the [c, h, w] plane (EfficientNet-B0's 112x112 layer: 512 values
instead of 401,408). Rounding: each term is (w s) x instead of w (s x), one rounding apart.
The Multiply's lowering defers (`defer_channel_scale`); the convolution's takes the scale
(`take_channel_scale`) and folds it (`scaled_weights`), or scales its input as it packs it
into B panels (`linear.SCALED_PACK`: any output channel count), or computes the product after
all (`materialize`) if it lowers some other way.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from irforge.backends.cpu.codegen.gemm import MR
from irforge.backends.cpu.codegen.scale_panels import scale_panels_kernel
from irforge.backends.cpu.lower import Buffer, Lowering, dtype_of, shape_of
from irforge.dialects.nn import Convolution, Eltwise
from irforge.dialects.nn.constant import Constant

FOLD_PLANE_RATIO = 1.0
"""Fold where the convolution's output channels are at most this times its plane's positions
(weights scaled: o * c values; the plane: c * h * w): a 7x7 plane with 192+ outputs keeps the
product (EfficientNet-B0's last blocks). 0: never fold (the A/B knob)."""


def plain_1x1(conv: Convolution) -> bool:
    """A 1x1 stride-1 unpadded single-group convolution of one sample with constant weights:
    the one that lowers to `linear.pack_weights` + `im2col_gemm` on the input itself."""
    x, w = shape_of(conv.input), shape_of(conv.weights)
    # the weights' Constant may come after the Multiply in the function: its op, not its array
    if len(x) != 4 or x[0] != 1 or not isinstance(conv.weights.owner, Constant) or len(w) != 4 or w[2:] != (1, 1):
        return False
    if conv.int_prop("group") != 1 or shape_of(conv.output)[2:] != x[2:]:
        return False
    begin, end = conv.explicit_pads((1, 1))
    return tuple(conv.window("strides", 1)) == (1, 1) and not any(begin) and not any(end)


def defer_channel_scale(ctx: Lowering, op: Eltwise) -> bool:
    """For a Multiply by a per-channel scale whose only user is a 1x1 convolution where the
    fold pays: alias its result to x, leave the scale to the convolution, and say so."""
    if op.str_prop("operation") != "mul" or FOLD_PLANE_RATIO <= 0:
        return False
    conv = ctx.single_use(op.output)
    if not isinstance(conv, Convolution) or conv.input is not op.output or not plain_1x1(conv):
        return False
    shape = shape_of(op.output)
    n, c, h, w = shape
    if shape_of(conv.weights)[0] > FOLD_PLANE_RATIO * h * w and not _scaled_pack(ctx, conv):
        return False
    for x, s in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
        if (shape_of(x) == shape and shape_of(s) in ((1, c, 1, 1), (c, 1, 1)) and x is not s
                and dtype_of(x) == dtype_of(s) == dtype_of(op.output) == np.float32):
            ctx.alias(op.output, ctx.values[x])
            ctx.channel_scales[op.output] = (op, ctx.values[s])
            return True
    return False


def _scaled_pack(ctx: Lowering, conv: Convolution) -> bool:
    """Whether the convolution copies its input into B panels and can scale it there
    (`linear.SCALED_PACK`): then the fold costs nothing whatever its output channels."""
    from irforge.backends.cpu.ops.linear import geometry, scales_in_pack  # linear imports this module

    return scales_in_pack(geometry(conv), shape_of(conv.weights)[0])


def take_channel_scale(ctx: Lowering, conv: Convolution) -> tuple[Operation, Buffer] | None:
    """The (Multiply, scale buffer) deferred onto this convolution's input, if any."""
    return ctx.channel_scales.pop(conv.input, None)


def materialize(ctx: Lowering, deferred: tuple[Operation, Buffer]) -> Buffer:
    """The deferred product computed after all (a lowering that cannot fold it): its buffer."""
    from irforge.backends.cpu.ops.elementwise import emit_pointwise

    mul, _ = deferred
    emit_pointwise(ctx, mul, [ctx.input(mul, 0), ctx.input(mul, 1)], [shape_of(mul.operands[0]), shape_of(mul.operands[1])], "bin.mul")
    return ctx.values[mul.results[0]]


def scaled_weights(ctx: Lowering, packed: np.ndarray, rows: int, k: int, kc: int, scale: Buffer) -> Buffer:
    """A scratch copy of the packed weights (`pack_a` of [rows, k] in K blocks of kc) with
    each K row times scale[k], written by a phase here, before the GEMM's."""
    out = ctx.scratch(packed.nbytes)
    name = ctx.kernel(("scale_panels", kc, MR), lambda m, n: scale_panels_kernel(m, kc, MR, n))
    ctx.phase(name, [ctx.const(packed), scale, out, ctx.const(np.array([-(-rows // MR), k], np.int64))], "excite")
    return out
