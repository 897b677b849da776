"""A transpose of the last two axes written with run-time reshapes, back to one Permute.

torch's dynamo exporter writes `k.transpose(-2, -1)` of a tensor with dynamic axes (torch's
SDPA decomposition: BERT, GPT-2 exported with `dynamic_shapes`) as a flatten to 3-D, a
transpose and a reshape back, both reshapes to shapes read from the tensor at run time:

    %s  = nn.shape_of %k                                   ([B, H, S, E] of a rank-4 k)
    %t1 = nn.concat [-1], %s[-2:-1], %s[-1:]                [-1, S, E]
    %t2 = nn.concat %s[:-2], %s[-1:], %s[-2:-1]             [B, H, E, S]
    %f  = nn.reshape_to %k, %t1
    %p  = nn.permute %f {order = [0, 2, 1]}
    %kt = nn.reshape_to %p, %t2
becomes
    %kt = nn.permute %k {order = [0, 1, 3, 2]}

The targets are read symbolically (constants, and slices of `shape_of` of that same k, joined
by concats); an entry may also be a constant equal to k's static size there. Then the
attention patterns see the k^T they know.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from irforge.backends.reference import constant_value
from irforge.dialects.nn.base import DYN, build
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.indexing import ReshapeTo, ShapeOf
from irforge.dialects.nn.shape import Concat, Permute, Slice
from irforge.model import store_of
from irforge.passes.patterns.affine import layer_name

Entry = int | tuple[SSAValue, int]
"""A size: a constant, or (x, i): the i-th size of x at run time."""


def entries(value: SSAValue) -> list[Entry] | None:
    """The sizes a 1-D shape tensor holds, None where they are not read as the module says."""
    owner = value.owner
    if isinstance(owner, Constant):
        array = constant_value(owner, store_of(owner))
        return [int(v) for v in array.reshape(-1)] if array.dtype.kind in "iu" and array.ndim <= 1 else None
    if isinstance(owner, ShapeOf):
        return [(owner.operands[0], i) for i in range(len(owner.operands[0].type.get_shape()))]  # type: ignore[attr-defined]
    if isinstance(owner, Concat) and owner.int_prop("axis") == 0:
        parts = [entries(v) for v in owner.operands]
        return None if any(p is None for p in parts) else [e for p in parts for e in p]  # type: ignore[union-attr]
    if isinstance(owner, Slice):
        whole = entries(owner.operands[0])
        specs = owner.slice_specs()
        if whole is None or set(specs) != {0} or specs[0][2] != 1:
            return None
        begin, end, _ = owner.bounds((len(whole),))[0]
        return whole[begin:end]
    return None


def size_of(x: SSAValue, axis: int, entry: Entry) -> bool:
    """entry is x's size at `axis`: read from x at run time, or a constant equal to x's
    static size there."""
    if isinstance(entry, tuple):
        return entry[0] is x and entry[1] == axis
    size = x.type.get_shape()[axis]  # type: ignore[attr-defined]
    return size != DYN and entry == size and entry > 0


class RunTimeTranspose(RewritePattern):
    """See the module docstring."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, ReshapeTo):
            return
        permute = op.operands[0].owner
        if not isinstance(permute, Permute) or tuple(permute.ints("order")) != (0, 2, 1) or not permute.results[0].has_one_use():
            return
        flat = permute.operands[0].owner
        if not isinstance(flat, ReshapeTo) or not flat.results[0].has_one_use():
            return
        x = flat.operands[0]
        rank = len(x.type.get_shape())  # type: ignore[attr-defined]
        first, back = entries(flat.operands[1]), entries(op.operands[1])
        if rank < 3 or first is None or back is None or len(first) != 3 or len(back) != rank:
            return
        if first[0] != -1 or not (size_of(x, rank - 2, first[1]) and size_of(x, rank - 1, first[2])):
            return
        swapped = [*range(rank - 2), rank - 1, rank - 2]
        if not all(size_of(x, axis, entry) for axis, entry in zip(swapped, back)):
            return
        transpose = build(Permute, [x], order=swapped, name=layer_name(op, "transpose"))
        if len(transpose.results[0].type.get_shape()) != len(op.results[0].type.get_shape()):  # type: ignore[attr-defined]
            return
        rewriter.replace(op, [transpose], [transpose.results[0]])
        rewriter.erase(permute)
        rewriter.erase(flat)

