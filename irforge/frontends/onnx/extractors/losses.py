"""ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 12/13) as compositions
of existing nn ops; eval graphs exported with a loss carry them.

For input x [N, C, d1..dk] (log-probabilities) and target t [N, d1..dk]:

    valid  = t != ignore_index                        (when ignore_index is given)
    safe   = Select(valid, t, 0)                      (an ignored target may be out of range)
    loss   = -GatherElements(x, unsqueeze(safe, 1), axis=1), squeezed back to t's shape
    loss   = Select(valid, loss, 0)                   (ignored positions add exactly 0)
    w      = Select(valid, Gather(weight, safe), 0)   (when a weight is given)
    loss   = loss * w
    none: loss;  sum: sum(loss);  mean: sum(loss) / sum(w)  (w: the weights, or valid as 0/1
    when only ignore_index is given), else mean(loss)

SoftmaxCrossEntropyLoss is the same on log_prob = LogSoftmax(scores, axis=1), which is its
optional second output. A mean over no valid position is 0/0 = NaN, as in onnxruntime.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Convert, Eltwise, GatherElements, Reduce, Reshape, Select, SoftMax
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.shape import Gather
from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl, to_xdsl

REDUCTIONS = ("none", "sum", "mean")


def _refuse(ctx: NodeContext, message: str, fix: str) -> IrforgeError:
    # E117: a loss node whose inputs or attributes do not fit the op's definition
    return IrforgeError(message, where=ctx.where, fix=fix, code="E117")


def _checked(ctx: NodeContext) -> tuple[str, int | None]:
    """(reduction, ignore_index) after checking the shapes of input, target and weight."""
    reduction = str(ctx.attr("reduction", "mean"))
    if reduction not in REDUCTIONS:
        raise _refuse(ctx, f"reduction '{reduction}' is not one of {list(REDUCTIONS)}", "use reduction none, sum or mean")
    x, target = ctx.input_shape(0), ctx.input_shape(1)
    if len(x) < 2 or len(target) != len(x) - 1:
        raise _refuse(
            ctx, f"input {list(x)} and target {list(target)}: the input must be [N, C, d1..dk] and the target [N, d1..dk]",
            "give the class scores as axis 1 of the input and one class index per other position in the target",
        )  # fmt: skip
    if DYN in target[1:]:
        raise _refuse(ctx, f"target {list(target)} has dims unknown at conversion besides N", "give static input shapes (--input_shape)")
    if any(a != DYN and b != DYN and a != b for a, b in zip((x[0], *x[2:]), target)):
        raise _refuse(ctx, f"target {list(target)} does not match input {list(x)} without its class axis", "give the target the input's shape without axis 1")
    if from_xdsl(ctx.input_type(1).element_type).kind not in "iu":
        raise _refuse(ctx, f"target must hold integer class indices, got {ctx.input_type(1).element_type}", "give an int64 or int32 target")
    if ctx.has_input(2) and (len(ctx.input_shape(2)) != 1 or ctx.input_type(2).element_type != ctx.input_type(0).element_type):
        raise _refuse(
            ctx, f"weight {ctx.input_type(2)} must be a 1-D tensor of the input's element type {ctx.input_type(0).element_type}",
            "give one weight per class",
        )  # fmt: skip
    ignore = ctx.attr("ignore_index", None)
    return reduction, None if ignore is None else int(ignore)


def _scalar(ctx: NodeContext, value: float, dtype: np.dtype, suffix: str) -> SSAValue:
    return ctx.constant(np.array(value, dtype), suffix)


def negative_log_likelihood(ctx: NodeContext, log_prob: SSAValue, target: SSAValue, weight: SSAValue | None, reduction: str, ignore: int | None) -> SSAValue:
    """The loss of `log_prob` [N, C, d..] at class indices `target` [N, d..] (module docstring)."""
    dtype = from_xdsl(ctx.input_type(0).element_type)
    index_dtype = from_xdsl(ctx.input_type(1).element_type)
    dims = list(ctx.input_shape(1)[1:])
    safe, valid = target, None
    if ignore is not None and not np.iinfo(index_dtype).min <= ignore <= np.iinfo(index_dtype).max:
        ignore = None  # no target of its type equals it: nothing is ignored (and a mean over all is the same)
    if ignore is not None:
        valid = ctx.value(Eltwise, [target, _scalar(ctx, ignore, index_dtype, "/ignore_index")], suffix="/valid", operation="not_equal")
        safe = ctx.value(Select, [valid, target, _scalar(ctx, 0, index_dtype, "/class0")], suffix="/safe_target")
    column = ctx.value(Reshape, [safe], suffix="/target_column", shape=[0, 1, *dims])  # 0 copies N (may be dynamic)
    picked = ctx.value(GatherElements, [log_prob, column], suffix="/picked", axis=1)
    picked = ctx.value(Reshape, [picked], suffix="/picked_flat", shape=[0, *dims])
    loss = ctx.value(Eltwise, [picked, _scalar(ctx, -1.0, dtype, "/minus_one")], suffix="/negated", operation="mul")
    zero = _scalar(ctx, 0.0, dtype, "/zero")
    if valid is not None:
        loss = ctx.value(Select, [valid, loss, zero], suffix="/kept")
    weights = None
    if weight is not None:
        weights = ctx.value(Gather, [weight, safe], suffix="/weights", axis=0)
        if valid is not None:
            weights = ctx.value(Select, [valid, weights, zero], suffix="/kept_weights")
        loss = ctx.value(Eltwise, [loss, weights], suffix="/weighted", operation="mul")
    elif valid is not None:
        weights = ctx.value(Convert, [valid], suffix="/counted", destination_type=to_xdsl(dtype))
    if reduction == "none":
        return loss
    total = ctx.value(Reduce, [loss], suffix="" if reduction == "sum" else "/total", operation="sum", keep_dims=False)
    if reduction == "sum":
        return total
    if weights is None:
        return ctx.value(Reduce, [loss], operation="mean", keep_dims=False)
    norm = ctx.value(Reduce, [weights], suffix="/weight_total", operation="sum", keep_dims=False)
    return ctx.value(Eltwise, [total, norm], operation="div")


@onnx_extractor("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(ctx: NodeContext) -> SSAValue:
    reduction, ignore = _checked(ctx)
    return negative_log_likelihood(ctx, ctx.input(0), ctx.input(1), ctx.optional_input(2), reduction, ignore)


@onnx_extractor("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(ctx: NodeContext) -> Sequence[SSAValue]:
    reduction, ignore = _checked(ctx)
    log_prob = ctx.value(SoftMax, [ctx.input(0)], suffix="/log_prob", axis=1, log=True)
    return [negative_log_likelihood(ctx, log_prob, ctx.input(1), ctx.optional_input(2), reduction, ignore), log_prob]
