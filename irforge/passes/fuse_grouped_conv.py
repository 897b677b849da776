"""fuse-grouped-conv: Split -> N equal Convolutions -> Concat becomes one grouped Convolution.

TensorFlow graphs express grouped convolution as a Split of the channels, one Convolution
per part and a Concat of their outputs in the same order. When the parts are equal, every
convolution has the same properties and constant weights of the same shape (and all or
none have a bias), and each intermediate value has no other user, the block is one
Convolution with group = N * (their group) and the weights (and biases) concatenated.

    %p:2 = nn.split %x {axis = 1 : i64, split_lengths = array<i64: 2, 2>}
    %a = nn.convolution %p#0, %wa : ...          // wa: 3x2x3x3
    %b = nn.convolution %p#1, %wb : ...          // wb: 3x2x3x3
    %y = nn.concat %a, %b {axis = 1 : i64}
becomes
    %w = nn.constant @y/weights : tensor<6x2x3x3xf32>
    %y = nn.convolution %x, %w {group = 2 : i64}
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irforge.dialects.nn.conv import Convolution
from irforge.dialects.nn.shape import Concat, Split
from irforge.model import store_of
from irforge.passes.patterns.affine import add_constant, constant_array, layer_name
from irforge.passes.patterns.fuse_into_layers import only_user


def channel_split_convolutions(concat: Concat) -> tuple[Split, list[Convolution]] | None:
    """The Split and the Convolutions of a Split -> Convolutions -> Concat block, if `concat`
    ends one that can be a single grouped convolution."""
    rank = len(concat.operand_shape(0))
    if len(concat.inputs) < 2 or concat.int_prop("axis") % rank != 1:
        return None
    convs = [v.owner for v in concat.inputs]
    if not all(isinstance(c, Convolution) and only_user(c.output) is concat for c in convs):
        return None
    split = convs[0].input.owner  # type: ignore[union-attr]
    if not isinstance(split, Split) or split.int_prop("axis") % rank != 1:
        return None
    if len(split.outputs) != len(convs) or len(set(split.ints("split_lengths"))) != 1:
        return None
    for part, conv in zip(split.outputs, convs, strict=True):
        if conv.input is not part or only_user(part) is not conv:  # type: ignore[union-attr]
            return None
    return split, convs  # type: ignore[return-value]


def same_configuration(convs: list[Convolution]) -> bool:
    """Equal properties (but the name), weight shapes and presence of a bias."""

    def configuration(conv: Convolution) -> tuple[object, ...]:
        props = {k: v for k, v in conv.properties.items() if k != "name"}
        return (props, conv.weights.type, conv.bias is not None)

    first = configuration(convs[0])
    return all(configuration(c) == first for c in convs[1:])


class FuseSplitConvConcat(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Concat, rewriter: PatternRewriter) -> None:
        block = channel_split_convolutions(op)
        if block is None or not same_configuration(block[1]):
            return
        split, convs = block
        store = store_of(op)
        weights = [constant_array(c.weights, store) for c in convs]
        biases = [constant_array(c.bias, store) for c in convs if c.bias is not None]
        if any(w is None for w in weights) or len(biases) not in (0, len(convs)) or any(b is None for b in biases):
            return
        name = layer_name(op, "grouped_conv")
        w = add_constant(np.concatenate(weights), weights[0].dtype, op, f"{name}/weights")  # type: ignore[arg-type]
        new_ops: list[Operation] = [w]
        operands = [split.input, w.output]
        if biases:
            b = add_constant(np.concatenate(biases), biases[0].dtype, op, f"{name}/bias")  # type: ignore[union-attr]
            new_ops.append(b)
            operands.append(b.output)
        properties = dict(convs[0].properties)
        properties["group"] = IntegerAttr(convs[0].int_prop("group") * len(convs), i64)
        properties["name"] = StringAttr(name)
        new_ops.append(Convolution.create(operands=operands, result_types=[op.output.type], properties=properties))
        rewriter.replace(op, new_ops, [new_ops[-1].results[0]])


@dataclass(frozen=True)
class FuseGroupedConvPass(ModulePass):
    name = "fuse-grouped-conv"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([FuseSplitConvConcat()])).rewrite_module(op)
