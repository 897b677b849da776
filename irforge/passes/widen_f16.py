"""widen-f16: compute a float16 model in float32, keeping its float16 inputs and outputs.

The native backends' kernels compute in f32. A model exported in half precision (torch
`.half()`, onnxconverter-common's float16 conversion, `--data_type FP16` IRs read back) has
f16 weights, activations and Converts to f16; OpenVINO's CPU plugin runs such a model in f32
too (its inference precision), and so does this pass for the CPU and OpenCL backends:

- every f16 constant becomes the f32 constant of the same values (exact);
- every `nn.convert` to f16 converts to f32 instead (the value is no longer rounded to f16:
  the results are those of f32 arithmetic, at least as close to the exact ones as f16's),
  but for one whose result is only returned: it still rounds its source once, as written;
- an f16 function argument is converted to f32 where the body starts, and an f16 result is
  converted back to f16 before the return, so callers feed and get f16 arrays as before;
- then infer-shapes retypes every op in between.

A model whose control-flow bodies carry f16 values (region arguments) is left as it is: the
backend then names the op it has no f16 kernel for.

    func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
      %w = nn.constant dense<...> : tensor<4xf16>
      %y = nn.eltwise %x, %w {operation = "sum"} : ... -> tensor<4xf16>
      func.return %y
    becomes
    func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
      %x32 = nn.convert %x {destination_type = f32} : (tensor<4xf16>) -> tensor<4xf32>
      %w = nn.constant dense<...> : tensor<4xf32>
      %y = nn.eltwise %x32, %w {operation = "sum"} : ... -> tensor<4xf32>
      %y16 = nn.convert %y {destination_type = f16} : (tensor<4xf32>) -> tensor<4xf16>
      func.return %y16
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f16, f32
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from irforge.builder import constant_op
from irforge.dialects.nn.base import build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Convert
from irforge.model import store_of
from irforge.passes.infer_shapes import infer_function


def _is_f16(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and value.type.element_type == f16


def has_f16(func: FuncOp) -> bool:
    return any(_is_f16(v) for op in func.body.walk() for v in (*op.operands, *op.results)) or any(
        _is_f16(arg) for arg in func.body.block.args
    )


def _region_args_f16(func: FuncOp) -> bool:
    return any(_is_f16(arg) for op in func.body.walk() for region in op.regions for block in region.blocks for arg in block.args)


def _widen_constant(op: Constant) -> None:
    name = op.weight_name
    array = (store_of(op)[name] if name is not None else op.inline_array()).astype(np.float32)
    wide = constant_op(array, store_of(op), f"{name}/f32" if name else "f16_as_f32")
    if "name" in op.properties:  # keep the layer name for cut points and messages
        wide.properties["name"] = op.properties["name"]
    Rewriter.replace_op(op, wide)


def _only_returned(op: Convert) -> bool:
    return all(isinstance(use.operation, ReturnOp) for use in op.output.uses)


def _widen_arguments(block: Block) -> None:
    first = block.first_op
    for arg in block.args:
        if not _is_f16(arg):
            continue
        uses = list(arg.uses)
        convert = build(Convert, [arg], destination_type=f32, name=f"{arg.name_hint or 'input'}/to_f32")
        Rewriter.insert_op(convert, InsertPoint.before(first) if first is not None else InsertPoint.at_end(block))
        for use in uses:
            use.operation.operands[use.index] = convert.output


def widen_function(func: FuncOp) -> bool:
    """Rewrite `func` to compute in f32 (see the module docstring); whether it changed."""
    if not has_f16(func) or _region_args_f16(func):
        return False
    block = func.body.block
    ret = block.last_op
    assert isinstance(ret, ReturnOp)
    f16_outputs = [i for i, value in enumerate(ret.arguments) if _is_f16(value)]
    for op in list(func.body.walk()):
        if isinstance(op, Constant) and _is_f16(op.output):
            _widen_constant(op)
        elif isinstance(op, Convert) and op.destination_type == f16 and not _only_returned(op):
            op.properties["destination_type"] = f32
    _widen_arguments(block)
    infer_function(func)
    for index in f16_outputs:
        value = ret.operands[index]
        if _is_f16(value):  # a Convert to f16 that only feeds the return: rounded once, as written
            continue
        narrow = build(Convert, [value], destination_type=f16, name=f"output{index}/to_f16")
        Rewriter.insert_op(narrow, InsertPoint.before(ret))
        ret.operands[index] = narrow.output
    infer_function(func)  # the signature follows the narrowed results
    return True


@dataclass(frozen=True)
class WidenF16Pass(ModulePass):
    name = "widen-f16"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in op.walk():
            if isinstance(func, FuncOp):
                widen_function(func)
