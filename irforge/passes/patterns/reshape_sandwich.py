"""An element-wise op with a constant between a Reshape and the Reshape back, as one op on
the original tensor.

Swin's shifted-window attention adds its window mask per window: the scores [B*W, H, L, S]
are reshaped to [B, W, H, L, S], the mask [1, W, 1, L, S] added and the sum reshaped back.
The constant, broadcast to the middle shape and reshaped like the data, gives the same sum
without the round trip, and leaves the mask where replace-subgraph's attention patterns
find it (scores + bias + mask, then softmax).

    %r = nn.reshape %s {shape = array<i64: 1, 4, 2, 16, 16>}
    %a = nn.eltwise %r, %c {operation = "sum"}        // %c: tensor<1x4x1x16x16xf32>
    %b = nn.reshape %a {shape = array<i64: 4, 2, 16, 16>}
becomes
    %a = nn.eltwise %s, %c2 {operation = "sum"}        // %c2: tensor<4x2x16x16xf32>

A chain of such ops between the reshapes (Swin v2 adds its mask twice) moves as a whole.
Taken only when the back reshape restores the input's static shape, the middle values have
no other user, no constant grows the middle shape, and the data holds at most MAX_ELEMENTS
values (each materialised constant has its size).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from irforge.backends.reference.interpreter import constant_value
from irforge.builder import constant_op
from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Eltwise
from irforge.dialects.nn.shape import Reshape
from irforge.model import store_of
from irforge.passes.patterns.compose import layer_of

MAX_ELEMENTS = 1 << 22
"""The largest constant materialised (16 MiB of f32)."""


def static_shape(value) -> tuple[int, ...] | None:  # type: ignore[no-untyped-def]
    t = value.type
    if not isinstance(t, TensorType):
        return None
    shape = tuple(t.get_shape())
    return None if DYN in shape else shape


def chain_step(op: object) -> tuple[int, Constant] | None:
    """(index of the data operand, the constant) of a single-use binary eltwise with one
    constant operand, else None."""
    if not isinstance(op, Eltwise) or len(op.operands) != 2 or len(list(op.results[0].uses)) != 1:
        return None
    constants = [isinstance(v.owner, Constant) for v in op.operands]
    if constants.count(True) != 1:
        return None
    index = constants.index(False)
    constant = op.operands[1 - index].owner
    assert isinstance(constant, Constant)
    return index, constant


class EltwiseConstantThroughReshapes(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Reshape, rewriter: PatternRewriter) -> None:
        chain: list[tuple[Eltwise, int, Constant]] = []  # from the outer reshape back
        value = op.input
        while (step := chain_step(value.owner)) is not None:
            eltwise = value.owner
            assert isinstance(eltwise, Eltwise)
            chain.append((eltwise, *step))
            value = eltwise.operands[step[0]]
        inner = value.owner
        if not chain or not isinstance(inner, Reshape) or len(list(inner.output.uses)) != 1:
            return
        source, middle, out = static_shape(inner.input), static_shape(inner.output), static_shape(op.output)
        if source is None or middle is None or out != source or int(np.prod(source)) > MAX_ELEMENTS:
            return
        for eltwise, _, _ in chain:
            result = eltwise.results[0].type
            if static_shape(eltwise.results[0]) != middle or result.element_type != inner.input.type.element_type:  # type: ignore[attr-defined]
                return
        store = store_of(op)
        arrays = [constant_value(constant, store) for _, _, constant in chain]
        try:
            if any(np.broadcast_shapes(a.shape, middle) != middle for a in arrays):
                return
        except ValueError:
            return
        new_ops: list = []  # type: ignore[type-arg]
        current = inner.input
        for (eltwise, index, _), array in zip(reversed(chain), reversed(arrays)):
            moved = np.ascontiguousarray(np.broadcast_to(array, middle).reshape(source))
            constant = constant_op(moved, store, f"{layer_of(eltwise) or 'eltwise'}/reshaped")
            operands = [current, constant.output] if index == 0 else [constant.output, current]
            props = {k: v for k, v in eltwise.properties.items() if k != "name"}
            new = build(Eltwise, operands, **props, name=layer_of(eltwise))  # type: ignore[arg-type]
            new_ops += [constant, new]
            current = new.results[0]
        rewriter.replace(op, new_ops, [current])
        for eltwise, _, _ in chain:
            rewriter.erase(eltwise)
        rewriter.erase(inner)
