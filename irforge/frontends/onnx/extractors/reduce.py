"""ONNX reductions and ArgMax/ArgMin -> nn.reduce / nn.argmax."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn import ArgMax, Identity, Reduce
from irforge.frontends.onnx.extractors.shape import ints_input_or_attr
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

REDUCTIONS = {
    "ReduceMean": "mean",
    "ReduceSum": "sum",
    "ReduceMax": "max",
    "ReduceMin": "min",
    "ReduceProd": "prod",
    "ReduceL1": "l1",
    "ReduceL2": "l2",
    "ReduceSumSquare": "sum_square",
    "ReduceLogSum": "log_sum",
    "ReduceLogSumExp": "log_sum_exp",
}


@onnx_extractor(*REDUCTIONS)
def reduce(ctx: NodeContext) -> SSAValue:
    # axes moved from attribute to input in opset 13 for ReduceSum and 18 for the others
    since = 13 if ctx.node.op_type == "ReduceSum" else 18
    axes = ints_input_or_attr(ctx, 1, "axes", "axes", since=since)
    if not axes and ctx.flag("noop_with_empty_axes"):
        return ctx.value(Identity, [ctx.input(0)])
    return ctx.value(
        Reduce,
        [ctx.input(0)],
        operation=REDUCTIONS[ctx.node.op_type],
        axes=axes or None,
        keep_dims=ctx.flag("keepdims", 1),  # 0 / 1 only: onnxruntime reads keepdims=2 as 0 for ArgMax
    )


@onnx_extractor("ArgMax", "ArgMin")
def arg(ctx: NodeContext) -> SSAValue:
    return ctx.value(
        ArgMax,
        [ctx.input(0)],
        axis=int(ctx.attr("axis", 0)),
        keep_dims=ctx.flag("keepdims", 1),
        select_last_index=ctx.flag("select_last_index"),
        mode="max" if ctx.node.op_type == "ArgMax" else "min",
    )
