"""32/64-bit integer matrix products: their reference kernel (numpy, exact) as a host step.

BigBird's block-sparse attention builds its band mask as `einsum("blq,blk->blqk")` of the
int64 attention mask (the exporters keep the input's type), which imports as an int64
MatMul; the native MatMul kernels are f32 only, and computing in f32 would round products
past 2**24, so such a MatMul runs exactly as the reference interpreter does. The same for
integer reductions: onnxruntime-genai's decoders sum the int64 attention mask
(`ReduceSum(attention_mask) - 1`, GroupQueryAttention's seqlens_k).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Attribute

from irforge.backends.cpu.host_steps import on_host_for
from irforge.dialects.nn import MatMul, Reduce


def is_wide_integer(element_type: Attribute) -> bool:
    """(u)int32 / (u)int64: index and mask arithmetic."""
    return isinstance(element_type, IntegerType) and element_type.width.data in (32, 64)


on_host_for(is_wide_integer, MatMul, Reduce)
