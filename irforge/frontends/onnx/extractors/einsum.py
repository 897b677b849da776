"""ONNX Einsum through the shared lowering (irforge/frontends/einsum.py)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.frontends.einsum import lower_einsum
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor


@onnx_extractor("Einsum")
def einsum(ctx: NodeContext) -> SSAValue:
    return lower_einsum(ctx, str(ctx.attr("equation")), ctx.inputs())
