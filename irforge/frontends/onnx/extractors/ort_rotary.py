"""Rotary position embeddings as explicit nn ops: onnxruntime's com.microsoft
RotaryEmbedding, ONNX's RotaryEmbedding-23, and the rotation GroupQueryAttention applies
with `do_rotary` (`ort_gqa.py` calls `rotate`).

With c = cos_cache[position], s = sin_cache[position] (R/2 values each, R the rotary
dimension) the first R features of every head turn pairwise:

    halves (interleaved=0): x1 = x[:R/2], x2 = x[R/2:R]
    pairs  (interleaved=1): x1 = x[0:R:2], x2 = x[1:R:2]
    y1 = x1 c - x2 s,  y2 = x2 c + x1 s,  features past R unchanged

-> Gather of the cache rows, Slice / Reshape, four multiplications and a Concat.

com.microsoft RotaryEmbedding(input, position_ids, cos_cache, sin_cache; interleaved,
num_heads, rotary_embedding_dim, is_packed_batching, scale): input [B, S, hidden] or
[B, N, S, H]; position_ids [B, S], or one value (the position of the first token, the
others following it); R = rotary_embedding_dim, else the whole head of cos_cache's
2 x width. ONNX RotaryEmbedding-23(X, cos_cache, sin_cache, position_ids?; interleaved,
num_heads, rotary_embedding_dim): X [B, S, hidden] or [B, N, S, H]; without position_ids
the caches are already [B, S, R/2].

Forms irforge does not read (is_packed_batching, a scale other than 1) are refused with E186.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Eltwise, Gather, Reshape, Slice, Unsqueeze
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.linear import show
from irforge.errors import IrforgeError
from irforge.frontends.onnx.extractors.quantize_contrib import MS, check_attributes
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl


def shape_of(value: SSAValue) -> tuple[int, ...]:
    assert isinstance(value.type, TensorType)
    return tuple(value.type.get_shape())


def unsupported(ctx: NodeContext, what: str, fix: str) -> IrforgeError:
    """E186: a form of onnxruntime's attention / rotary contrib ops (an attribute value or an
    input) that irforge does not lower; `what` names it."""
    return IrforgeError(f"{what} of {ctx.node.op_type} is not supported", where=ctx.where, fix=fix, code="E186")


def _mul(ctx: NodeContext, a: SSAValue, b: SSAValue, suffix: str) -> SSAValue:
    return ctx.value(Eltwise, [a, b], suffix=suffix, operation="mul")


def rotate(ctx: NodeContext, x: SSAValue, cos: SSAValue, sin: SSAValue, rotary: int, interleaved: bool, suffix: str) -> SSAValue:
    """x [..., H] with its first `rotary` features turned by cos / sin, which broadcast
    against x[..., :rotary // 2]."""
    head = shape_of(x)[-1]
    axis = len(shape_of(x)) - 1
    half = rotary // 2
    if interleaved:
        part = x if rotary == head else ctx.value(Slice, [x], suffix=f"{suffix}/rotary_part", begins=[0], ends=[rotary], axes=[axis])
        pairs = ctx.value(Reshape, [part], suffix=f"{suffix}/pairs", shape=[*shape_of(part)[:-1], half, 2])
        x1 = ctx.value(Slice, [pairs], suffix=f"{suffix}/even", begins=[0], ends=[1], axes=[axis + 1])
        x2 = ctx.value(Slice, [pairs], suffix=f"{suffix}/odd", begins=[1], ends=[2], axes=[axis + 1])
        cos = ctx.value(Unsqueeze, [cos], suffix=f"{suffix}/cos_pairs", axes=[len(shape_of(cos))])
        sin = ctx.value(Unsqueeze, [sin], suffix=f"{suffix}/sin_pairs", axes=[len(shape_of(sin))])
    else:
        x1 = ctx.value(Slice, [x], suffix=f"{suffix}/first_half", begins=[0], ends=[half], axes=[axis])
        x2 = ctx.value(Slice, [x], suffix=f"{suffix}/second_half", begins=[half], ends=[rotary], axes=[axis])
    y1 = ctx.value(Eltwise, [_mul(ctx, x1, cos, f"{suffix}/x1_cos"), _mul(ctx, x2, sin, f"{suffix}/x2_sin")], suffix=f"{suffix}/y1",
                   operation="sub")
    y2 = ctx.value(Eltwise, [_mul(ctx, x2, cos, f"{suffix}/x2_cos"), _mul(ctx, x1, sin, f"{suffix}/x1_sin")], suffix=f"{suffix}/y2",
                   operation="sum")
    if interleaved:
        turned = ctx.value(Concat, [y1, y2], suffix=f"{suffix}/pairs_turned", axis=axis + 1)
        turned = ctx.value(Reshape, [turned], suffix=f"{suffix}/turned", shape=[*shape_of(x)[:-1], rotary])
        parts = [turned]
    else:
        parts = [y1, y2]
    if rotary < head:
        parts.append(ctx.value(Slice, [x], suffix=f"{suffix}/passed", begins=[rotary], ends=[head], axes=[axis]))
    return ctx.value(Concat, parts, suffix=suffix, axis=axis)


def cache_rows(ctx: NodeContext, cache_index: int, positions: SSAValue, suffix: str) -> SSAValue:
    """cos_cache / sin_cache (input `cache_index`) rows at `positions`: positions' shape + [R/2]."""
    return ctx.value(Gather, [ctx.input(cache_index), positions], suffix=suffix, axis=0)


def _positions(ctx: NodeContext, index: int, batch: int, length: int) -> SSAValue:
    """com.microsoft RotaryEmbedding's position_ids: [B, S] as given, or one value (the first
    token's position) as [1, S] positions counting on from it."""
    positions = ctx.input(index)
    shape = shape_of(positions)
    if DYN in shape:
        raise ctx.fail(f"position_ids of shape {show(shape)} needs its shape at conversion", fix="give static input shapes (--input_shape)")
    if element_dtype(positions).kind not in "iu":  # the positions index the caches
        raise ctx.fail(f"position_ids has element type {element_dtype(positions)}, an integer tensor (int64) is needed")
    if int(np.prod(shape)) == 1 and len(shape) <= 1:
        dtype = element_dtype(positions)
        first = ctx.value(Reshape, [positions], suffix="/first_position", shape=[1, 1])
        return ctx.value(Eltwise, [first, ctx.constant(np.arange(length, dtype=dtype)[None, :], "/offsets")], suffix="/positions",
                         operation="sum")
    if len(shape) != 2 or shape[0] != batch or shape[1] != length:
        raise ctx.fail(f"position_ids of shape {show(shape)} is neither one value nor [batch {batch}, sequence {length}]")
    return positions


def element_dtype(value: SSAValue) -> np.dtype:
    assert isinstance(value.type, TensorType)
    return np.dtype(from_xdsl(value.type.element_type))


def _rotated_input(ctx: NodeContext, x: SSAValue, heads: int, rotary: int, cos: SSAValue, sin: SSAValue, interleaved: bool) -> SSAValue:
    """x [B, N, S, H] or [B, S, hidden] (as [B, S, heads, H]) rotated; cos / sin [B or 1, S, R/2]."""
    shape = shape_of(x)
    width = shape_of(cos)[-1]
    if len(shape) == 4:
        head = shape[3]
        cos = ctx.value(Unsqueeze, [cos], suffix="/cos_heads", axes=[1])
        sin = ctx.value(Unsqueeze, [sin], suffix="/sin_heads", axes=[1])
    else:
        if heads <= 0 or DYN in shape[1:] or shape[2] % heads:
            raise ctx.fail(f"input of shape {show(shape)} does not split into {heads} heads", fix="give num_heads and static input shapes (--input_shape)")
        head = shape[2] // heads
        x = ctx.value(Reshape, [x], suffix="/heads", shape=[0, 0, heads, head])
        cos = ctx.value(Unsqueeze, [cos], suffix="/cos_heads", axes=[2])
        sin = ctx.value(Unsqueeze, [sin], suffix="/sin_heads", axes=[2])
    rotary = rotary or head
    if rotary > head or rotary % 2 or width != rotary // 2:
        raise ctx.fail(f"a rotary dimension of {rotary} with cos/sin rows of {width} values does not fit heads of {head} features",
                       fix="give caches of rotary_embedding_dim / 2 columns")
    y = rotate(ctx, x, cos, sin, rotary, interleaved, "/rotated" if len(shape) == 3 else "")
    return ctx.value(Reshape, [y], shape=list(shape)) if len(shape) == 3 else y


@onnx_extractor("RotaryEmbedding", domain=MS)
def ms_rotary_embedding(ctx: NodeContext) -> SSAValue:
    check_attributes(ctx, {"interleaved", "num_heads", "rotary_embedding_dim", "is_packed_batching", "scale"})
    if ctx.flag("is_packed_batching"):
        raise unsupported(ctx, "is_packed_batching=1 (sequences packed without padding)", "export with padded batches")
    if float(ctx.attr("scale", 1.0)) != 1.0:
        raise unsupported(ctx, f"scale={ctx.attr('scale')}", "fold the scale into the cos / sin caches")
    x = ctx.input(0)
    shape = shape_of(x)
    if len(shape) not in (3, 4) or DYN in shape:
        raise ctx.fail(f"input of shape {show(shape)} must be [B, S, hidden] or [B, N, S, H], known at conversion",
                       fix="give static input shapes (--input_shape)")
    cache = shape_of(ctx.input(2))
    if len(cache) != 2 or shape_of(ctx.input(3)) != cache:
        raise ctx.fail(f"cos_cache {show(cache)} and sin_cache {show(shape_of(ctx.input(3)))} must be one [max positions, R/2] shape")
    rotary, heads = int(ctx.attr("rotary_embedding_dim", 0)), int(ctx.attr("num_heads", 0))
    if rotary > 0 and heads <= 0:
        raise ctx.fail("rotary_embedding_dim needs num_heads", fix="give num_heads")
    if len(shape) == 3 and heads <= 0:
        heads = shape[2] // (2 * cache[1]) if cache[1] and shape[2] % (2 * cache[1]) == 0 else 0
    length = shape[2] if len(shape) == 4 else shape[1]
    positions = _positions(ctx, 1, shape[0], length)
    cos, sin = cache_rows(ctx, 2, positions, "/cos"), cache_rows(ctx, 3, positions, "/sin")
    return _rotated_input(ctx, x, heads, rotary, cos, sin, ctx.flag("interleaved"))


@onnx_extractor("RotaryEmbedding")
def rotary_embedding(ctx: NodeContext) -> SSAValue:
    x = ctx.input(0)
    shape = shape_of(x)
    if len(shape) not in (3, 4) or DYN in shape:
        raise ctx.fail(f"X of shape {show(shape)} must be [B, S, hidden] or [B, N, S, H], known at conversion",
                       fix="give static input shapes (--input_shape)")
    if ctx.has_input(3):
        length = shape[2] if len(shape) == 4 else shape[1]
        positions = ctx.input(3)
        if shape_of(positions) != (shape[0], length):
            raise ctx.fail(f"position_ids of shape {show(shape_of(positions))} must be [batch {shape[0]}, sequence {length}]")
        cos, sin = cache_rows(ctx, 1, positions, "/cos"), cache_rows(ctx, 2, positions, "/sin")
    else:
        cos, sin = ctx.input(1), ctx.input(2)
        if len(shape_of(cos)) != 3:
            raise ctx.fail(f"without position_ids the caches must be [B, S, R/2], got {show(shape_of(cos))}")
    return _rotated_input(ctx, x, int(ctx.attr("num_heads", 0)), int(ctx.attr("rotary_embedding_dim", 0)), cos, sin,
                          ctx.flag("interleaved"))
