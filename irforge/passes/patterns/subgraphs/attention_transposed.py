"""Attention written with the values' and the output's last two axes swapped, v^T @ p^T
(NCHW attention: timm's EfficientViT-M cascaded group attention, `v @ attn.transpose(-2, -1)`
on [B, E, S] values), back to one `nn.scaled_dot_product_attention` between transposes.

    y = w @ p^T         p = softmax(chain(q @ k^T)) as attention_chains.py reads it, p^T a
                        Permute swapping p's last two axes (or the MatMul's transpose_b),
                        w [.., Ev, S] (v^T)

is (p @ w^T)^T = permute(attention(q, k, permute(w)), swap), the same products summed in the
same order: the op with a Permute on the values and one on its result. The chain's forms,
scale and masks are attention_chains.py's (ChainedAttention.fuse); nothing changes when the
chain is not one of them.

    %kt = nn.permute %k {order = array<i64: 0, 2, 1>}
    %s = nn.matmul %q, %kt
    %a = nn.eltwise %s, %bias {operation = "sum"}
    %p = nn.softmax %a {axis = -1}
    %pt = nn.permute %p {order = array<i64: 0, 2, 1>}
    %y = nn.matmul %w, %pt {name = "attn"}
becomes
    %v = nn.permute %w {order = array<i64: 0, 2, 1>, name = "attn/value"}
    %o = nn.scaled_dot_product_attention %q, %k, %v, %bias {scale = 1.0, name = "attn/attention"}
    %y = nn.permute %o {order = array<i64: 0, 2, 1>, name = "attn"}
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter

from irforge.dialects.nn.base import build
from irforge.dialects.nn.linear import MatMul
from irforge.dialects.nn.shape import Permute
from irforge.passes.patterns.affine import layer_name
from irforge.passes.patterns.subgraphs.attention_chains import ChainedAttention, dims


def swap(rank: int) -> list[int]:
    """The order swapping the last two of `rank` axes."""
    return [*range(rank - 2), rank - 1, rank - 2]


class TransposedAttention(ChainedAttention):
    """w @ softmax(chain)^T: see the module docstring."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, MatMul) or op.bool_prop("transpose_a"):
            return
        w, right = op.operands
        rank = len(dims(w))
        if rank < 3 or len(dims(right)) != rank:
            return
        taken: tuple[Operation, ...] = ()
        if op.bool_prop("transpose_b"):
            probs = right
        else:
            permute = right.owner
            if not isinstance(permute, Permute) or not right.has_one_use() or list(permute.ints("order")) != swap(rank):
                return
            probs, taken = permute.operands[0], (permute,)
        if not isinstance(probs.owner, Operation) or probs.owner.name not in ("nn.softmax", "nn.select"):
            return  # not a softmax's probabilities (cheap test before building anything)
        values = build(Permute, [w], order=swap(rank), name=f"{layer_name(op, 'matmul')}/value")
        if not self.fuse(op, probs, values.output, rewriter, transposed=True, prelude=(values,), taken=taken):
            values.erase()
