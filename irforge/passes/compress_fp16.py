"""compress-fp16: f32 weights stored as f16, converted back to f32 where they are used.

As OpenVINO's IR does for `--data_type FP16` (compress_to_fp16): every f32 constant in
the weight store becomes a new f16 entry followed by an `nn.convert` to f32, so the model
computes in f32 with weights rounded to f16 and half the weights file. Constants whose
values do not fit f16 (finite values beyond +-65504) stay f32; inline constants (small
shape vectors and scalars) are left as they are.

    %w = nn.constant @conv.w : tensor<64x3x7x7xf32>
becomes
    %h = nn.constant @conv.w/f16 : tensor<64x3x7x7xf16>
    %w = nn.convert %h {destination_type = f32} : (tensor<64x3x7x7xf16>) -> tensor<64x3x7x7xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, f32
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irforge.builder import constant_op
from irforge.dialects.nn.base import build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Convert
from irforge.model import store_of

F16_MAX = float(np.finfo(np.float16).max)


def fits_f16(array: np.ndarray) -> bool:
    finite = array[np.isfinite(array)]
    return finite.size == 0 or float(np.abs(finite).max()) <= F16_MAX


class CompressStoredConstant(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Constant, rewriter: PatternRewriter) -> None:
        name = op.weight_name
        if name is None:
            return
        store = store_of(op)
        array = store[name]
        if array.dtype != np.float32 or not fits_f16(array):
            return
        half = constant_op(array.astype(np.float16), store, f"{name}/f16")
        convert = build(Convert, [half.output], destination_type=f32, name=f"{name}/to_f32")
        rewriter.replace(op, [half, convert], [convert.output])


@dataclass(frozen=True)
class CompressFp16Pass(ModulePass):
    name = "compress-fp16"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # the f16 constants are new ops the walker would revisit; they are f16 and stay put
        PatternRewriteWalker(GreedyRewritePatternApplier([CompressStoredConstant()])).rewrite_module(op)
