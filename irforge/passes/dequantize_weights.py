"""dequantize-weights: compressed weights become float constants when a backend compiles.

Quantized weights stay integers in the model (i8 / u8, or 4-bit values marked `bits = 4`)
behind a decompression chain that constant folding leaves alone, so that an OpenVINO IR keeps
them compressed (`is_weight_decompression`). The native backends multiply by float weights
they pack once: this pass folds the chain's start, the nn.convert of the integer constant,
into the float constant of the same values (exact), and canonicalize, run after it, folds the
rest of the chain (subtract zero point, multiply scale, reshape) as it folds any constants.
A result over the folding budget (`irforge/fold_budget.py`) is left to compute at run time.

    %q = nn.constant @w_q {bits = 4 : i64} : tensor<96x2x32xui8>
    %w = nn.convert %q {destination_type = f32} : (tensor<96x2x32xui8>) -> tensor<96x2x32xf32>
becomes
    %w = nn.constant @w_q/f32 : tensor<96x2x32xf32>
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.elementwise import Convert
from irforge.dialects.nn.quantize import is_weight_decompression
from irforge.passes.patterns.fold_constants import folded_constants


def dequantize_convert(op: Convert) -> bool:
    """Replace `op` (a weight decompression Convert) by its float constant; whether it did."""
    source = op.operands[0].owner
    assert isinstance(source, Constant)
    hint = op.layer_name.data if op.layer_name is not None else f"{source.weight_name or 'weights'}/dequantized"
    folded = folded_constants(op, [source], hint)
    if folded is None:
        return False
    Rewriter.replace_op(op, folded[0])
    return True


@dataclass(frozen=True)
class DequantizeWeightsPass(ModulePass):
    name = "dequantize-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for convert in [o for o in op.walk() if is_weight_decompression(o)]:
            dequantize_convert(convert)  # type: ignore[arg-type]
