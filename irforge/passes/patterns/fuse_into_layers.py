"""Fusion of linear steps (x * s, x + t) into the weights and bias of an adjacent layer.

Layers are Convolution, Deconvolution, FullyConnected and MatMul with a constant 2-D right
operand (which becomes a FullyConnected when a step fuses into it), grouped and depthwise
convolutions included. Backward: a step after a layer whose only user it is scales the
layer's output channels (weights and bias) or adds to its bias. Forward: a step whose only
user is a layer's input scales the layer's input channels; an added constant becomes
bias += sum of weights * constant, which is exact only where no padding is read, so it is
refused for convolutions with nonzero padding (padded zeros are not shifted) and for
deconvolutions. A constant channel permutation (nn.gather along axis 1, as preprocess's
reverse-input-channels) before an ungrouped convolution permutes the weights' input axis.

    %c = nn.convolution %x, %w {...}           // w: 4x3x3x3
    %s = nn.constant dense<[...]> : tensor<1x4x1x1xf32>
    %y = nn.eltwise %c, %s {operation = "mul"}
becomes
    %w2 = nn.constant @conv/weights : tensor<4x3x3x3xf32>   // w * s per output channel
    %y = nn.convolution %x, %w2 {...}

New weights always go to new constants: arrays other ops may still read are never changed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irforge.dialects.nn.base import DYN, NNOp, build
from irforge.dialects.nn.conv import Convolution, Deconvolution
from irforge.dialects.nn.linear import FullyConnected, MatMul
from irforge.dialects.nn.shape import Gather
from irforge.model import store_of
from irforge.passes.patterns.affine import (
    LinearStep,
    add_constant,
    channel_vector,
    constant_array,
    layer_name,
    linear_step,
    shape_of,
)


@dataclass(frozen=True)
class Layer:
    """A layer with constant weights, seen in its own weight layout (MatMul as FC: [O, K])."""

    op: NNOp
    input: SSAValue
    weights: np.ndarray
    bias: np.ndarray | None

    @property
    def kind(self) -> type[NNOp]:
        return FullyConnected if isinstance(self.op, MatMul) else type(self.op)

    @property
    def channel_axis(self) -> int:
        """The channel axis of the input and of the output."""
        return -1 if self.kind is FullyConnected else 1

    @property
    def out_channels(self) -> int:
        if self.kind is Deconvolution:
            return self.weights.shape[1] * self.op.int_prop("group")
        return self.weights.shape[0]


def layer_of(op: Operation | None) -> Layer | None:
    """The layer `op` is, if its weights (and bias) are constants."""
    if isinstance(op, (Convolution, Deconvolution, FullyConnected)):
        store = store_of(op)
        weights = constant_array(op.weights, store)
        bias = constant_array(op.bias, store) if op.bias is not None else None
        if weights is None or (op.bias is not None and bias is None):
            return None
        return Layer(op, op.input, weights, bias)
    if isinstance(op, MatMul) and not op.bool_prop("transpose_a"):
        b = constant_array(op.b, store_of(op))
        if b is None or b.ndim != 2:
            return None
        return Layer(op, op.a, b if op.bool_prop("transpose_b") else b.T, None)
    return None


def _group_index(layer: Layer) -> np.ndarray:
    """For a (de)convolution, the global channel of each entry of the weights' first two
    axes [R, C/g]: conv [O, I/g] -> the input channel, deconv [I, O/g] -> the output
    channel. Row r belongs to group r // (R/g), whose channels start at group * (C/g)."""
    w, group = layer.weights, layer.op.int_prop("group")
    rows, cols = w.shape[0], w.shape[1]
    return (np.arange(rows) // (rows // group))[:, None] * cols + np.arange(cols)[None, :]


def _expand(matrix: np.ndarray, ndim: int) -> np.ndarray:
    return matrix.reshape(matrix.shape + (1,) * (ndim - matrix.ndim))


def scale_outputs(layer: Layer, s: np.ndarray) -> np.ndarray:
    w = layer.weights.astype(np.float64)
    if layer.kind is Deconvolution:
        return w * _expand(s[_group_index(layer)], w.ndim)
    return w * _expand(s, w.ndim)


def scale_inputs(layer: Layer, s: np.ndarray) -> np.ndarray:
    w = layer.weights.astype(np.float64)
    if layer.kind is Convolution:
        return w * _expand(s[_group_index(layer)], w.ndim)
    if layer.kind is Deconvolution:
        return w * _expand(s, w.ndim)
    return w * s[None, :]


def reads_no_padding(op: Convolution) -> bool:
    """Whether the convolution provably reads no padded element (all pads resolve to 0)."""
    auto_pad = op.str_prop("auto_pad")
    if auto_pad == "valid":
        return True
    in_dims = op.operand_shape(0)[2:]
    if auto_pad != "explicit" and DYN in in_dims:
        return False
    begin, end = op.explicit_pads(op.operand_shape(1)[2:])
    return not any(begin) and not any(end)


def input_shift_bias(layer: Layer, t: np.ndarray) -> np.ndarray | None:
    """What adding `t` per input channel adds to the output, or None where that is not a
    per-output-channel constant (padding, transposed windows)."""
    w = layer.weights.astype(np.float64)
    if layer.kind is FullyConnected:
        return w @ t
    if layer.kind is Convolution and reads_no_padding(layer.op):  # type: ignore[arg-type]
        summed = w.reshape(w.shape[0], w.shape[1], -1).sum(axis=2)
        return (summed * t[_group_index(layer)]).sum(axis=1)
    return None


def rebuild(layer: Layer, x: SSAValue, weights: np.ndarray, bias: np.ndarray | None) -> list[Operation]:
    """New constants and the layer with them (the last op); its result type is unchanged."""
    op = layer.op
    name = layer_name(op, op.name.removeprefix("nn."))
    dtype = layer.weights.dtype
    w = add_constant(weights, dtype, op, f"{name}/weights")
    new_ops: list[Operation] = [w]
    operands = [x, w.output]
    if bias is not None:
        b = add_constant(bias, dtype, op, f"{name}/bias")
        new_ops.append(b)
        operands.append(b.output)
    if isinstance(op, MatMul):
        new_ops.append(build(FullyConnected, operands, name=name))
    else:
        new_ops.append(type(op).create(operands=operands, result_types=[op.output.type], properties=dict(op.properties)))
    return new_ops


def fuse_backward(layer: Layer, step: LinearStep) -> list[Operation] | None:
    """The layer computing layer(x) * s or layer(x) + t, or None if the step is not per
    output channel."""
    out = shape_of(layer.op.results[0])
    vector = channel_vector(step.value, out, layer.channel_axis)
    if vector is None or vector.size != layer.out_channels:
        return None
    vector = vector.astype(np.float64)
    if step.is_mul:
        bias = layer.bias * vector if layer.bias is not None else None
        return rebuild(layer, layer.input, scale_outputs(layer, vector), bias)
    bias = vector + (layer.bias if layer.bias is not None else 0.0)
    return rebuild(layer, layer.input, layer.weights, bias)


def fuse_forward(step: LinearStep, layer: Layer) -> list[Operation] | None:
    """The layer computing layer(x * s) or layer(x + t), or None if it cannot."""
    vector = channel_vector(step.value, shape_of(step.input), layer.channel_axis)
    if vector is None:
        return None
    vector = vector.astype(np.float64)
    if step.is_mul:
        return rebuild(layer, step.input, scale_inputs(layer, vector), layer.bias)
    delta = input_shift_bias(layer, vector)
    if delta is None:
        return None
    bias = delta + (layer.bias if layer.bias is not None else 0.0)
    return rebuild(layer, step.input, layer.weights, bias)


def only_user(value: SSAValue) -> Operation | None:
    """The op using `value`, if it is used exactly once."""
    return value.get_user_of_unique_use()


class FuseStepBackward(RewritePattern):
    """layer -> step (the layer's only user) becomes one layer."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        step = linear_step(op)
        if step is None or only_user(step.input) is not op:
            return
        layer = layer_of(step.input.owner)  # type: ignore[arg-type]
        new_ops = fuse_backward(layer, step) if layer is not None else None
        if new_ops:
            rewriter.replace(op, new_ops, [new_ops[-1].results[0]])


class FuseStepForward(RewritePattern):
    """step -> layer (the step's only user, through the layer's input) becomes one layer."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        step = linear_step(op)
        if step is None:
            return
        user = only_user(op.results[0])
        layer = layer_of(user)
        if layer is None or layer.input is not op.results[0]:
            return
        new_ops = fuse_forward(step, layer)
        if new_ops:
            rewriter.replace(layer.op, new_ops, [new_ops[-1].results[0]])


def channel_permutation(op: Operation) -> np.ndarray | None:
    """The permutation a Gather along axis 1 with constant indices 0..C-1 (reordered) is."""
    if not isinstance(op, Gather) or op.int_prop("batch_dims") != 0:
        return None
    shape = op.operand_shape(0)
    if len(shape) < 2 or op.gather_axes()[0] != 1 or shape[1] == DYN:
        return None
    indices = constant_array(op.indices, store_of(op))
    if indices is None or indices.ndim != 1:
        return None
    indices = indices % shape[1]
    if sorted(indices.tolist()) != list(range(shape[1])):
        return None
    return indices


class FusePermutationForward(RewritePattern):
    """gather(x, perm, axis=1) -> ungrouped convolution becomes a convolution whose weights'
    input channels are permuted: sum_c W[o, c] x[perm[c]] = sum_j W[o, inv[j]] x[j]."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        perm = channel_permutation(op)
        if perm is None:
            return
        layer = layer_of(only_user(op.results[0]))
        if layer is None or layer.kind is not Convolution or layer.op.int_prop("group") != 1:
            return
        if layer.input is not op.results[0]:
            return
        weights = layer.weights[:, np.argsort(perm)]
        new_ops = rebuild(layer, op.operands[0], weights, layer.bias)
        rewriter.replace(layer.op, new_ops, [new_ops[-1].results[0]])

