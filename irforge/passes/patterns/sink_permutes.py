"""Moving Permutes toward the outputs, through ops that do not care about the layout.

`op(permute(x, p))` becomes `permute(op'(x), p)`, where `op'` is `op` with its axes (and
constant operands) expressed in x's layout. Repeated, this carries the transpose an NHWC
importer puts after every convolution down to the next convolution, where it meets that
one's inverse transpose and both cancel (`ComposePermutes`, then identity forwarding).

    %t = nn.permute %conv {order = array<i64: 0, 2, 3, 1>}       // NCHW -> NHWC
    %r = nn.relu %t
    %u = nn.permute %r {order = array<i64: 0, 3, 1, 2>}          // NHWC -> NCHW
becomes
    %r = nn.relu %conv
    %t = nn.permute %r {order = array<i64: 0, 2, 3, 1>}
    %u = nn.permute %t {order = array<i64: 0, 3, 1, 2>}          // composes to identity

Only rewrites that leave no new transpose on another path are made: an element-wise op
sinks a Permute when each of its other operands is a constant (permuted at compile time)
or a Permute with the same order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irforge.backends.reference import constant_value
from irforge.builder import constant_op
from irforge.dialects.nn.activation import Activation, Clamp, ReLU
from irforge.dialects.nn.base import DYN, NNOp, build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Convert, Eltwise, Identity, Select
from irforge.dialects.nn.linear import FullyConnected, MatMul, Power
from irforge.dialects.nn.normalization import MVN, SoftMax
from irforge.dialects.nn.reduce import Reduce
from irforge.dialects.nn.resample import Resample
from irforge.dialects.nn.shape import Concat, Flatten, Pad, Permute, Reshape
from irforge.model import store_of
from irforge.passes.patterns.compose import layer_of

UNARY = (ReLU, Activation, Clamp, Power, Convert, Identity)
ELEMENTWISE = (Eltwise, Select)


def inverse(order: Sequence[int]) -> list[int]:
    result = [0] * len(order)
    for k, axis in enumerate(order):
        result[axis] = k
    return result


def op_props(op: NNOp, **changed: object) -> dict[str, object]:
    """The op's properties (as attributes) with some replaced by new Python values."""
    props: dict[str, object] = dict(op.properties)
    props.pop("name", None)
    props.update(changed)
    return props


def _permuted_constant(value: SSAValue, order: Sequence[int], anchor: Operation) -> tuple[SSAValue, Constant]:
    """A constant equal to `value` broadcast to rank len(order), then transposed by `order`."""
    owner = value.owner
    assert isinstance(owner, Constant)
    store = store_of(anchor)
    array = constant_value(owner, store)
    array = array.reshape((1,) * (len(order) - array.ndim) + array.shape).transpose(order)
    new = constant_op(np.ascontiguousarray(array), store, layer_of(owner) or "permuted")
    return new.output, new


def _permute_operand(op: Operation) -> Permute | None:
    for operand in op.operands:
        if isinstance(operand.owner, Permute):
            return operand.owner
    return None


def _rank(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    return len(t.get_shape())


class SinkPermuteThroughElementwise(RewritePattern):
    """unary(permute(x)) and eltwise(permute(x), permute(y) | constant) -> permute(op(x, ...))."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, UNARY + ELEMENTWISE):
            return
        permute = _permute_operand(op)
        if permute is None:
            return
        order = permute.ints("order")
        rank = len(order)
        if _rank(op.results[0]) != rank:
            return
        back = inverse(order)
        operands: list[SSAValue] = []
        new_ops: list[Operation] = []
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Permute) and owner.ints("order") == order:
                operands.append(owner.operands[0])
            elif isinstance(owner, Constant) and _rank(operand) <= rank:
                value, constant = _permuted_constant(operand, back, op)
                operands.append(value)
                new_ops.append(constant)
            else:
                return
        inner = build(type(op), operands, **op_props(op), name=layer_of(op))  # type: ignore[arg-type]
        outer = build(Permute, [inner.results[0]], order=list(order), name=layer_of(permute))
        rewriter.replace(op, [*new_ops, inner, outer], [outer.output])


class SinkPermuteThroughAxisOps(RewritePattern):
    """Concat, SoftMax, Pad, Reduce and MVN over permute(x): the same op on x with remapped axes."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, Concat):
            self._concat(op, rewriter)
        elif isinstance(op, SoftMax | Pad | Reduce | MVN) and isinstance(op.operands[0].owner, Permute):
            permute = op.operands[0].owner
            order = permute.ints("order")
            if isinstance(op, Reduce):
                self._reduce(op, permute, rewriter)
                return
            if isinstance(op, SoftMax):
                changed: dict[str, object] = {"axis": order[op.softmax_axis()]}
            elif isinstance(op, MVN):  # normalised over the same axes of x, wherever they sit
                changed = {"axes": sorted(order[a] for a in op.reduced_axes())}
            else:
                back = inverse(order)
                changed = {
                    "pads_begin": [op.ints("pads_begin")[k] for k in back],
                    "pads_end": [op.ints("pads_end")[k] for k in back],
                }
            self._replace(op, [permute.operands[0]], changed, order, rewriter)

    @staticmethod
    def _replace(op: NNOp, operands: list[SSAValue], changed: dict[str, object], order: Sequence[int], rewriter: PatternRewriter) -> None:
        inner = build(type(op), operands, **op_props(op, **changed), name=layer_of(op))
        outer = build(Permute, [inner.results[0]], order=list(order), name=layer_of(op))
        rewriter.replace(op, [inner, outer], [outer.output])

    def _concat(self, op: Concat, rewriter: PatternRewriter) -> None:
        owners = [v.owner for v in op.operands]
        if not all(isinstance(o, Permute) for o in owners):
            return
        order = owners[0].ints("order")  # type: ignore[union-attr]
        if any(o.ints("order") != order for o in owners):  # type: ignore[union-attr]
            return
        axis = op.int_prop("axis") % len(order)
        self._replace(op, [o.operands[0] for o in owners], {"axis": order[axis]}, order, rewriter)  # type: ignore[union-attr]

    @staticmethod
    def _reduce(op: Reduce, permute: Permute, rewriter: PatternRewriter) -> None:
        order = permute.ints("order")
        axes = sorted(order[a] for a in op.reduced_axes())
        inner = build(Reduce, [permute.operands[0]], **op_props(op, axes=axes), name=layer_of(op))
        if op.bool_prop("keep_dims"):
            remaining: list[int] = list(order)
        else:
            # the kept axes of x, in the order the permuted tensor had them, renumbered
            kept = [a for a in order if a not in axes]
            remaining = [sorted(kept).index(a) for a in kept]
        if remaining == sorted(remaining):
            rewriter.replace(op, inner, [inner.output])
            return
        outer = build(Permute, [inner.output], order=remaining, name=layer_of(op))
        rewriter.replace(op, [inner, outer], [outer.output])


class SinkPermuteThroughResample(RewritePattern):
    """resample(permute(x, p)) -> permute(resample'(x), p), with sizes/scales read in x's
    axis order: a resize keeps the layout its input has, so an NHWC resize needs no
    transposes around it."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, Resample) or not isinstance(op.operands[0].owner, Permute):
            return
        permute = op.operands[0].owner
        back = inverse(permute.ints("order"))
        prop = "scales" if op.scales is not None else "sizes"
        values = op.floats(prop) if prop == "scales" else op.ints(prop)
        changed = {prop: [values[k] for k in back]}
        SinkPermuteThroughAxisOps._replace(op, [permute.operands[0]], changed, permute.ints("order"), rewriter)


class FlattenPermuteIntoWeights(RewritePattern):
    """fully_connected / matmul(flatten(permute(x)), W) -> the same of flatten(x) with W's
    input features reordered, so flattening an NHWC tensor keeps TensorFlow's element order
    without a transpose (Reshape to [N, K] and Flatten at axis 1 alike)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        features_axis = self._features_axis(op)
        if features_axis is None:
            return
        flat = op.operands[0].owner
        if not isinstance(flat, Reshape | Flatten) or not flat.results[0].has_one_use():
            return
        permute = flat.operands[0].owner
        if not isinstance(permute, Permute) or permute.ints("order")[0] != 0:
            return
        x = permute.operands[0]
        shape = tuple(x.type.get_shape())  # type: ignore[attr-defined]
        out_shape = tuple(flat.results[0].type.get_shape())  # type: ignore[attr-defined]
        if DYN in shape or len(out_shape) != 2 or out_shape != (shape[0], int(np.prod(shape[1:]))):
            return
        store = store_of(op)
        weights = constant_value(op.operands[1].owner, store)  # type: ignore[arg-type]
        order = permute.ints("order")
        # feature k of W reads element k of the permuted tensor; W' must read that element of x
        permuted = np.arange(out_shape[1]).reshape([shape[a] for a in order[1:]])
        source = permuted.transpose(inverse([a - 1 for a in order[1:]])).reshape(-1)
        new_weights = constant_op(np.ascontiguousarray(np.take(weights, source, axis=features_axis)), store, layer_of(op) or "fc")
        new_flat = build(Reshape, [x], shape=list(out_shape), name=layer_of(flat))
        operands = [new_flat.output, new_weights.output, *op.operands[2:]]
        new = build(type(op), operands, **op_props(op), name=layer_of(op))  # type: ignore[arg-type]
        rewriter.replace(op, [new_weights, new_flat, new], [new.results[0]])

    @staticmethod
    def _features_axis(op: Operation) -> int | None:
        """The axis of the constant weights that runs over the input features, if any."""
        if not isinstance(op, FullyConnected | MatMul) or not isinstance(op.operands[1].owner, Constant):
            return None
        if isinstance(op, FullyConnected):
            return 1
        if op.bool_prop("transpose_a") or _rank(op.operands[1]) != 2:
            return None
        return 1 if op.bool_prop("transpose_b") else 0
