"""channels-first-mlp: a channels-last MLP between two transposes computed as 1x1 convolutions.

ConvNeXt's block moves its NCHW stream to NHWC for the pointwise MLP and back after it:

    %t = nn.permute %x {order = [0, 2, 3, 1]}                  // NCHW -> NHWC
    %a = nn.fully_connected %t, %w1, %b1                       // [N, H, W, 4C]
    %g = nn.activation %a {kind = "gelu"}
    %b = nn.fully_connected %g, %w2, %b2                       // [N, H, W, C]
    %y = nn.permute %b {order = [0, 3, 1, 2]}                  // NHWC -> NCHW
becomes
    %a = nn.convolution %x, %w1', %b1                          // w1' = w1 as [4C, C, 1, 1]
    %g = nn.activation %a {kind = "gelu"}
    %y = nn.convolution %g, %w2', %b2

keras' Tensordot (a MatMul by a constant [K, N]) is taken like an FC. A fully connected layer
over the channel axis is a 1x1 convolution, and a unary element-wise
op does not care about the layout, so the chain computes the same numbers with no transposes
(the CPU backend's 1x1 convolution reads NCHW rows as its GEMM's B in place, and absorbs the
residual Add that follows into its stores). Every intermediate value must have that chain as
its only user; anything else (another user, a non-constant weight, an op that is not unary)
leaves the graph as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.conv import Convolution
from irforge.dialects.nn.linear import FullyConnected, MatMul
from irforge.dialects.nn.shape import Permute
from irforge.model import store_of
from irforge.passes.patterns.affine import add_constant, constant_array
from irforge.passes.patterns.compose import layer_of
from irforge.passes.patterns.sink_permutes import UNARY, op_props

ENABLED = True
"""Off: the pass leaves every module as it is (the knob of the same-process A/B)."""
MIN_POSITIONS = 784
"""Chains over planes of fewer positions (H * W) stay FCs; so do planes that are not a whole
number of 16-float vectors. The CPU backend's 1x1 layer packs B panels first there
(`linear.PACK_PLANE_MAX`, `PACK_UNALIGNED_MAX`), and ConvNeXt-T's 14x14 and 7x7 blocks ran
~0.1 ms slower per block as convolutions (their packs, and GEMMs of 196 / 49 columns against
the FC's 196 / 49 rows); at 56x56 the two 1x1 layers ran as fast as the FCs and the block
saved its two transposes and its residual Add (docs/STATUS.md, session 15)."""
ALIGN = 16
TO_LAST = [0, 2, 3, 1]
TO_FIRST = [0, 3, 1, 2]


def _static4(value: SSAValue) -> bool:
    t = value.type
    return isinstance(t, TensorType) and len(t.get_shape()) == 4 and DYN not in t.get_shape()


def _only_user(value: SSAValue) -> Operation | None:
    uses = list(value.uses)
    return uses[0].operation if len(uses) == 1 else None


def _linear(op: Operation, value: SSAValue) -> bool:
    """`op` is a layer over `value`'s last axis with constant [O, K] weights (FC) or a
    constant [K, N] (or transposed [N, K]) right operand (MatMul: keras' Tensordot)."""
    if isinstance(op, FullyConnected):
        return op.input == value and isinstance(op.weights.owner, Constant) and (op.bias is None or isinstance(op.bias.owner, Constant))
    return (isinstance(op, MatMul) and op.a == value and op.b != value and not op.bool_prop("transpose_a")
            and isinstance(op.b.owner, Constant) and len(op.operand_shape(1)) == 2)


def chain_after(enter: Permute) -> tuple[list[Operation], Permute] | None:
    """The FCs and unary ops from `enter` (NCHW -> NHWC) to the transpose back, or None."""
    if list(enter.ints("order")) != TO_LAST or not _static4(enter.operands[0]):
        return None
    _, _, h, w = enter.operand_shape(0)
    if h * w < MIN_POSITIONS or h * w % ALIGN:
        return None
    chain: list[Operation] = []
    value = enter.output
    while True:
        user = _only_user(value)
        if user is None:
            return None
        if _linear(user, value) and _static4(user.results[0]):
            chain.append(user)
        elif isinstance(user, UNARY) and len(user.operands) == 1 and len(user.results) == 1 and _static4(user.results[0]):
            chain.append(user)
        elif isinstance(user, Permute) and list(user.ints("order")) == TO_FIRST and chain:
            return (chain, user) if any(isinstance(op, FullyConnected | MatMul) for op in chain) else None
        else:
            return None
        value = user.results[0]


def rewrite(enter: Permute, chain: list[Operation], leave: Permute) -> bool:
    """Replace `enter -> chain -> leave` by the chain in NCHW; False (nothing changed) if a
    weight's value is not at hand."""
    store = store_of(enter)
    weights = {}
    for op in chain:
        if isinstance(op, FullyConnected):
            w = constant_array(op.weights, store)
        elif isinstance(op, MatMul):
            w = constant_array(op.b, store)
            w = w if w is None or op.bool_prop("transpose_b") else w.T  # as [O, K]
        else:
            continue
        if w is None or w.ndim != 2:
            return False
        weights[op] = np.ascontiguousarray(w)
    block = enter.parent_block()
    assert block is not None
    x: SSAValue = enter.operands[0]
    for op in chain:
        if op in weights:
            w = weights[op]
            name = layer_of(op)
            kernel = add_constant(w.reshape(*w.shape, 1, 1), w.dtype, op, f"{name}/weights_1x1")
            block.insert_op_before(kernel, leave)
            operands = [x, kernel.output] + ([op.bias] if isinstance(op, FullyConnected) and op.bias is not None else [])
            new = build(Convolution, operands, strides=[1, 1], pads_begin=[0, 0], pads_end=[0, 0], dilations=[1, 1], name=name)
        else:
            new = build(type(op), [x], **op_props(op), name=layer_of(op))  # type: ignore[arg-type]
        block.insert_op_before(new, leave)
        x = new.results[0]
    leave.output.replace_all_uses_with(x)
    replaced = [op.weights.owner if isinstance(op, FullyConnected) else op.b.owner for op in weights]
    for op in [leave, *reversed(chain)]:
        block.erase_op(op)
    if not list(enter.output.uses):
        block.erase_op(enter)
    _drop_orphans(replaced)
    return True


def _drop_orphans(constants: list[Operation]) -> None:
    """Erase the chain's old [O, K] weights that nothing uses any more (a MatMul's right operand
    may feed others; the module's other unused constants are not this pass's to remove)."""
    for op in dict.fromkeys(constants):  # (one weight may serve two layers of the chain)
        block = op.parent_block()
        if isinstance(op, Constant) and block is not None and not list(op.output.uses):
            block.erase_op(op)


@dataclass(frozen=True)
class ChannelsFirstMlpPass(ModulePass):
    name = "channels-first-mlp"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if not ENABLED:
            return
        for enter in [o for o in op.walk() if isinstance(o, Permute)]:
            if enter.parent_block() is None:
                continue
            found = chain_after(enter)
            if found is not None:
                rewrite(enter, *found)
