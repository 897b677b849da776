"""convert-layout: an NHWC graph (transposes around every layout-sensitive op) becomes NCHW.

`nn` ops that care about the layout (Convolution, Pooling, BatchNormalization, ...) are NCHW
only, so an NHWC frontend (TensorFlow, or an ONNX model exported from NHWC code) puts a
transpose to NCHW before each and one back to NHWC after it. This pass sinks those
transposes toward the outputs through ops that do not care about the layout (element-wise
ops, with their constants permuted at compile time; Concat, SoftMax, Pad, Reduce and
Resample, with their axes remapped), composes adjacent ones and drops the identities, and folds a
transpose before a flattening FullyConnected into the order of its weights. What remains is
at most a transpose per input and per output that really is NHWC. With `interface`, the
model's 4-D inputs and outputs change layout too (`--layout` of ir-convert).

    %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>}      // input NHWC -> NCHW
    %c = nn.convolution %a, %w ...
    %b = nn.permute %c {order = array<i64: 0, 2, 3, 1>}      // back to NHWC
    %r = nn.relu %b
    %d = nn.permute %r {order = array<i64: 0, 3, 1, 2>}
    %e = nn.convolution %d, %w2 ...
becomes
    %a = nn.permute %x {order = array<i64: 0, 3, 1, 2>}
    %c = nn.convolution %a, %w ...
    %r = nn.relu %c
    %e = nn.convolution %r, %w2 ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

from irforge.dialects.nn.base import build
from irforge.dialects.nn.shape import Permute
from irforge.errors import IrforgeError
from irforge.model import main_function
from irforge.passes.canonicalize import CanonicalizePass
from irforge.passes.patterns.compose import ComposePermutes
from irforge.passes.patterns.forwarding import ForwardNoOpInput
from irforge.passes.patterns.sink_permutes import (
    FlattenPermuteIntoWeights,
    SinkPermuteThroughAxisOps,
    SinkPermuteThroughElementwise,
    SinkPermuteThroughResample,
)


LAYOUTS = {"nchw->nhwc": ([0, 2, 3, 1], [0, 3, 1, 2]), "nhwc->nchw": ([0, 3, 1, 2], [0, 2, 3, 1])}
"""interface change -> (order that turns an old input into a new one, and back)."""


@dataclass(frozen=True)
class ConvertLayoutPass(ModulePass):
    name = "convert-layout"

    interface: str = ""
    """Also change the layout of the model's 4-D inputs and outputs: "nchw->nhwc" for a user
    who wants NHWC tensors in and out of an NCHW model, "nhwc->nchw" for NCHW ones in and out
    of a TensorFlow model (whose transposes at the boundary then cancel)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.interface:
            if self.interface not in LAYOUTS:
                raise IrforgeError(
                    f"convert-layout: unknown interface '{self.interface}'", fix=f"use one of {', '.join(LAYOUTS)}", code="E742"
                )
            change_interface(main_function(op), *LAYOUTS[self.interface])
        patterns = [
            ComposePermutes(),
            ForwardNoOpInput(),
            SinkPermuteThroughElementwise(),
            SinkPermuteThroughAxisOps(),
            SinkPermuteThroughResample(),
            FlattenPermuteIntoWeights(),
        ]
        PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(op)
        # the sunk transposes leave their originals unused
        CanonicalizePass(fold_constants=False).apply(ctx, op)


def change_interface(func: FuncOp, to_new: list[int], to_old: list[int]) -> None:
    """Give the function's 4-D inputs and outputs the new layout, with transposes inside the
    function that restore the old one (the sinking patterns then cancel what they can)."""
    block = func.body.block
    for arg in list(block.args):
        t = arg.type
        if not isinstance(t, TensorType) or len(t.get_shape()) != 4:
            continue
        shape = t.get_shape()
        new = block.insert_arg(TensorType(t.element_type, [shape[k] for k in to_new]), arg.index)
        back = build(Permute, [new], order=to_old)
        block.insert_op_before(back, block.first_op)  # type: ignore[arg-type]
        arg.replace_all_uses_with(back.output)
        block.erase_arg(arg)
    ret = block.last_op
    assert isinstance(ret, ReturnOp)
    for index, value in enumerate(ret.arguments):
        t = value.type
        if isinstance(t, TensorType) and len(t.get_shape()) == 4:
            out = build(Permute, [value], order=to_new)
            block.insert_op_before(out, ret)
            ret.operands[index] = out.output
    func.function_type = FunctionType.from_lists([a.type for a in block.args], [v.type for v in ret.arguments])
