"""fuse-linear-ops: BatchNormalization, ScaleShift, Mul and Add folded into adjacent layers.

The three stages of the Model Optimizer's linear operation fusing:

1. decomposition: BatchNormalization becomes x * scale + shift with scale = gamma /
   sqrt(var + eps), shift = beta - mean * scale; ScaleShift and Power (power 1) become
   x * scale + shift; constants get shapes that broadcast along the channel axis;
2. merge: chains of mul and add by constants (also sub and div by a constant) become one
   mul -> add (x + b) * s = x * s + b * s; steps by 1 or 0 vanish;
3. fusion (irforge/passes/patterns/fuse_into_layers.py): into the weights and bias of the
   Convolution, Deconvolution, FullyConnected or MatMul before (backward) or after (forward)
   them; an add is never fused forward into a convolution that reads padding.

Whatever stays unfused becomes one ScaleShift (per-channel constants) or one eltwise.

    %c = nn.convolution %x, %w {...} : ... -> tensor<1x8x4x4xf32>
    %y = nn.batch_norm %c, %g, %b, %m, %v : ...
    %z = nn.batch_norm %x, %g2, %b2, %m2, %v2 : ...     // after an input: nothing to fuse into
becomes
    %y = nn.convolution %x, %w2, %b2 {...}              // new weights and bias
    %z = nn.scale_shift %x, %s, %t {axis = 1 : i64}

`fuse-linear-ops{forward=false}` fuses backward only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irforge.dialects.nn.base import build
from irforge.dialects.nn.elementwise import Convert
from irforge.dialects.nn.linear import BatchNormalization, Power, ScaleShift
from irforge.model import store_of
from irforge.passes.patterns.affine import (
    ADD,
    MUL,
    add_constant,
    broadcast_shape_for,
    channel_vector,
    constant_array,
    dtype_of,
    layer_name,
    linear_step,
    make_step,
    shape_of,
)
from irforge.passes.patterns.fuse_into_layers import (
    FusePermutationForward,
    FuseStepBackward,
    FuseStepForward,
    only_user,
)


def replace_by_steps(
    rewriter: PatternRewriter, op: Operation, x: SSAValue, scale: np.ndarray, shift: np.ndarray, name: str
) -> None:
    """Replace `op` by x * scale -> + shift."""
    scale_const, mul = make_step(x, MUL, scale, op, f"{name}/mul")
    shift_const, add = make_step(mul.output, ADD, shift, op, name)
    rewriter.replace(op, [scale_const, mul, shift_const, add], [add.output])


class DecomposeBatchNorm(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BatchNormalization, rewriter: PatternRewriter) -> None:
        store = store_of(op)
        stats = [constant_array(v, store) for v in op.operands[1:]]
        if any(s is None for s in stats):
            return
        gamma, beta, mean, var = (np.asarray(s, np.float64) for s in stats)  # type: ignore[arg-type]
        scale = gamma / np.sqrt(var + op.float_prop("epsilon"))
        shift = beta - mean * scale
        rank = len(shape_of(op.input))
        name = layer_name(op, "batch_norm")
        replace_by_steps(
            rewriter, op, op.input, broadcast_shape_for(scale, rank, 1), broadcast_shape_for(shift, rank, 1), name
        )


class DecomposeScaleShift(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScaleShift, rewriter: PatternRewriter) -> None:
        store = store_of(op)
        scale, shift = constant_array(op.scale, store), constant_array(op.shift, store)
        if scale is None or shift is None:
            return
        rank, axis = len(shape_of(op.input)), op.channel_axis()
        replace_by_steps(
            rewriter,
            op,
            op.input,
            broadcast_shape_for(scale, rank, axis),
            broadcast_shape_for(shift, rank, axis),
            layer_name(op, "scale_shift"),
        )


class DecomposeLinearPower(RewritePattern):
    """Power with exponent 1 is scale * x + shift."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Power, rewriter: PatternRewriter) -> None:
        if op.float_prop("power") != 1.0 or dtype_of(op.input).kind != "f":
            return
        scale, shift = np.array(op.float_prop("scale")), np.array(op.float_prop("shift"))
        replace_by_steps(rewriter, op, op.input, scale, shift, layer_name(op, "power"))


def dequantization(x: SSAValue) -> bool:
    """Whether `x` is an integer tensor converted to float: the start of a DequantizeLinear's
    (q - z) * s. That add-mul is left as it is: q - z is exact there, so (q - z) * s rounds
    once, as onnxruntime computes it (q * s + (-z * s) is not exact: q == z gave 32768 for 0
    at s = 6.9e10 in quantized Inception v3), and it is the Convert -> Subtract -> Multiply
    form OpenVINO's low-precision transformations read as a dequantization."""
    owner = x.owner
    if not isinstance(owner, Convert):
        return False
    source = owner.operands[0].type
    return isinstance(source, TensorType) and isinstance(source.element_type, IntegerType)


class MergeSteps(RewritePattern):
    """step2(step1(x)) with step1 used only there: mul-mul and add-add become one step,
    add-mul becomes mul-add ((x + b) * s = x * s + b * s) except after a dequantization's
    integer convert (`dequantization`)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        outer = linear_step(op)
        if outer is None or only_user(outer.input) is not op:
            return
        inner = linear_step(outer.input.owner)  # type: ignore[arg-type]
        if inner is None:
            return
        name = layer_name(op, op.name.removeprefix("nn."))
        a, b = inner.value.astype(np.float64), outer.value.astype(np.float64)
        if inner.operation == outer.operation:
            merged = a * b if outer.is_mul else a + b
            const, step = make_step(inner.input, outer.operation, merged, op, name)
            rewriter.replace(op, [const, step], [step.output])
        elif inner.operation == ADD and not dequantization(inner.input):
            scale_const, mul = make_step(inner.input, MUL, b, op, f"{name}/mul")
            shift_const, add = make_step(mul.output, ADD, a * b, op, name)
            rewriter.replace(op, [scale_const, mul, shift_const, add], [add.output])


class RemoveIdentityStep(RewritePattern):
    """x * 1 and x + 0 are x."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        step = linear_step(op)
        if step is None:
            return
        neutral = 1.0 if step.is_mul else 0.0
        if np.all(step.value == neutral):
            rewriter.replace(op, [], [step.input])


class StepsToScaleShift(RewritePattern):
    """x * s -> + t with per-channel s and t (channel axis 1, else the last) is a ScaleShift."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        add = linear_step(op)
        if add is None or add.is_mul or only_user(add.input) is not op:
            return
        mul = linear_step(add.input.owner)  # type: ignore[arg-type]
        if mul is None or not mul.is_mul:
            return
        shape = shape_of(mul.input)
        for axis in dict.fromkeys((1, -1) if len(shape) >= 2 else (-1,)):
            scale = channel_vector(mul.value, shape, axis)
            shift = channel_vector(add.value, shape, axis)
            if scale is None or shift is None:
                continue
            dtype = dtype_of(mul.input)
            scale_const = add_constant(scale, dtype, op, f"{layer_name(op, 'scale_shift')}/scale")
            shift_const = add_constant(shift, dtype, op, f"{layer_name(op, 'scale_shift')}/shift")
            new = build(
                ScaleShift,
                [mul.input, scale_const.output, shift_const.output],
                axis=axis,
                name=layer_name(op, "scale_shift"),
            )
            rewriter.replace(op, [scale_const, shift_const, new], [new.output])
            return


@dataclass(frozen=True)
class FuseLinearOpsPass(ModulePass):
    name = "fuse-linear-ops"

    forward: bool = True
    """Also fuse steps into the layer after them (`fuse-linear-ops{forward=false}`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fusion: list[RewritePattern] = [FuseStepBackward()]
        if self.forward:
            fusion += [FuseStepForward(), FusePermutationForward()]
        patterns = [
            DecomposeBatchNorm(),
            DecomposeScaleShift(),
            DecomposeLinearPower(),
            RemoveIdentityStep(),
            *fusion,
            MergeSteps(),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
        # only once nothing fuses any more: a ScaleShift made earlier would be decomposed again
        PatternRewriteWalker(GreedyRewritePatternApplier([StepsToScaleShift()])).rewrite_module(op)
