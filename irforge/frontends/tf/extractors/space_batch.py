"""SpaceToBatchND and BatchToSpaceND as Pad/Reshape/Permute/Reshape(/Slice).

Around a convolution they are TensorFlow's atrous convolution, which `atrous.py` folds into
one dilated convolution before importing; these extractors are for the ops alone.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Pad, Permute, Reshape, Slice
from irforge.dialects.nn.base import DYN
from irforge.frontends.tf.registry import NodeContext, tf_extractor


def _static_shape(ctx: NodeContext) -> tuple[int, ...]:
    shape = ctx.input_shape(0)
    if DYN in shape:
        raise ctx.fail(f"{ctx.node.op} needs a static input shape, got {list(shape)}", fix="give static input shapes with --input_shape")
    return shape


@tf_extractor("SpaceToBatchND")
def space_to_batch(ctx: NodeContext) -> SSAValue:
    shape = _static_shape(ctx)
    block = ctx.ints_input(1, "block_shape")
    pads = ctx.required_constant(2, "paddings").reshape(-1, 2).astype(np.int64)
    m = len(block)
    rest = list(shape[1 + m :])
    x = ctx.input(0)
    if pads.any():
        begin = [0, *pads[:, 0].tolist(), *[0] * len(rest)]
        end = [0, *pads[:, 1].tolist(), *[0] * len(rest)]
        x = ctx.value(Pad, [x], suffix="/pad", pads_begin=begin, pads_end=end, mode="constant", value=0.0)
    padded = [s + int(p.sum()) for s, p in zip(shape[1 : 1 + m], pads)]
    if any(p % b for p, b in zip(padded, block)):
        raise ctx.fail(f"padded spatial sizes {padded} are not multiples of block_shape {block}", fix="the graph is malformed")
    split = [shape[0]] + [v for p, b in zip(padded, block) for v in (p // b, b)] + rest
    x = ctx.value(Reshape, [x], suffix="/split", shape=split, special_zero=False)
    order = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(range(1 + 2 * m, 1 + 2 * m + len(rest)))
    x = ctx.value(Permute, [x], suffix="/shuffle", order=order)
    merged = [shape[0] * int(np.prod(block))] + [p // b for p, b in zip(padded, block)] + rest
    return ctx.value(Reshape, [x], shape=merged, special_zero=False)


@tf_extractor("BatchToSpaceND")
def batch_to_space(ctx: NodeContext) -> SSAValue:
    shape = _static_shape(ctx)
    block = ctx.ints_input(1, "block_shape")
    crops = ctx.required_constant(2, "crops").reshape(-1, 2).astype(np.int64)
    m, count = len(block), int(np.prod(block))
    if shape[0] % count:
        raise ctx.fail(f"batch {shape[0]} is not a multiple of the block's {count} elements", fix="the graph is malformed")
    n, spatial, rest = shape[0] // count, list(shape[1 : 1 + m]), list(shape[1 + m :])
    x = ctx.value(Reshape, [ctx.input(0)], suffix="/split", shape=[*block, n, *spatial, *rest], special_zero=False)
    order = [m] + [v for i in range(m) for v in (m + 1 + i, i)] + list(range(2 * m + 1, 2 * m + 1 + len(rest)))
    x = ctx.value(Permute, [x], suffix="/shuffle", order=order)
    full = [s * b for s, b in zip(spatial, block)]
    x = ctx.value(Reshape, [x], suffix="/merge" if crops.any() else "", shape=[n, *full, *rest], special_zero=False)
    if not crops.any():
        return x
    begins = [0, *crops[:, 0].tolist(), *[0] * len(rest)]
    ends = [n, *(f - int(c) for f, c in zip(full, crops[:, 1])), *rest]
    return ctx.value(Slice, [x], begins=begins, ends=ends)
