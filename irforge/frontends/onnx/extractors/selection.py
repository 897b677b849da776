"""ONNX Compress and Det as compositions of existing nn ops (OpenVINO's opset has neither),
and Unique as nn.unique (OpenVINO's Unique-10: the same four outputs, sorted or in order of
first occurrence, flattened or along an axis; its output sizes are known only at run time):

    Compress(x, condition, axis)   Gather(x, NonZero(condition) as a 1-D list, axis); with no
                                   axis, x is flattened first. The indices are those of the
                                   true entries, so a condition shorter than the axis selects
                                   among its first len(condition) entries only (the spec).
                                   A constant condition gives constant indices (static shape);
                                   otherwise the selected axis is dynamic (`?`), as NonZero's
                                   count is.
    Det(x)                         Leibniz's formula over the last two axes, for n <= 4:
                                   sum over the n! permutations p of sign(p) * prod_i x[i, p(i)],
                                   written as one Gather of the permuted entries of the
                                   flattened matrices, signed on each first factor, a
                                   ReduceProd and a ReduceSum.
                                   Larger matrices are refused (E129): the formula grows as n!
                                   and an LU needs data-dependent pivoting.
"""

from __future__ import annotations

import itertools

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn import Eltwise, Gather, Reduce, Reshape
from irforge.dialects.nn.base import DYN
from irforge.dialects.nn.indexing import NonZero
from irforge.dialects.nn.unique import Unique
from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import from_xdsl

DET_MAX_SIZE = 4  # 4! = 24 products of 4 factors; 5! = 120 would be slow and less accurate than an LU


@onnx_extractor("Compress")
def compress(ctx: NodeContext) -> SSAValue:
    data, shape = ctx.input(0), ctx.input_shape(0)
    condition_shape = ctx.input_shape(1)
    if len(condition_shape) != 1:
        raise IrforgeError(
            f"Compress condition has shape {list(condition_shape)}, a 1-D tensor is needed",
            where=ctx.where, fix="give a 1-D boolean condition", code="E128",
        )
    axis = ctx.attr("axis", None)
    if axis is None:  # flattened selection
        data = ctx.value(Reshape, [data], suffix="/flat", shape=[-1])
        length = DYN if DYN in shape else int(np.prod(shape))
        axis = 0
    else:
        rank = len(shape)
        if not -rank <= int(axis) < rank:
            raise IrforgeError(
                f"Compress axis {axis} is out of range for an input of rank {rank}",
                where=ctx.where, fix=f"use an axis in [{-rank}, {rank - 1}]", code="E128",
            )
        axis = int(axis) % rank
        length = shape[axis]
    if DYN not in (length, condition_shape[0]) and condition_shape[0] > length:
        # onnxruntime refuses it too: the condition would select past the axis's end
        raise IrforgeError(
            f"Compress condition has {condition_shape[0]} entries, more than the {length} along axis {axis}",
            where=ctx.where, fix="give a condition at most as long as the selected axis", code="E128",
        )
    condition = ctx.constant_input(1)
    if condition is not None:
        indices = ctx.constant(np.nonzero(condition.reshape(-1))[0].astype(np.int64), "/indices")
    else:
        found = ctx.value(NonZero, [ctx.input(1)], suffix="/nonzero")  # [1, ?]
        indices = ctx.value(Reshape, [found], suffix="/indices", shape=[-1])
    return ctx.value(Gather, [data, indices], axis=axis)


def _permutations(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The flattened positions i*n + p(i) of each permutation p of range(n) ([n!, n]) and
    its sign ([n!])."""
    perms = list(itertools.permutations(range(n)))
    positions = np.array([[i * n + p[i] for i in range(n)] for p in perms], np.int64)
    signs = []
    for p in perms:
        inversions = sum(1 for i in range(n) for j in range(i + 1, n) if p[i] > p[j])
        signs.append(-1.0 if inversions % 2 else 1.0)
    return positions, np.array(signs)


@onnx_extractor("Det")
def det(ctx: NodeContext) -> SSAValue:
    shape = ctx.input_shape(0)
    if len(shape) < 2 or shape[-1] != shape[-2] or shape[-1] == DYN:
        raise IrforgeError(
            f"Det of an input of shape {list(shape)}: square matrices of a size known at conversion are needed",
            where=ctx.where, fix="give static input shapes (--input_shape) with equal last two dims", code="E129",
        )
    n = shape[-1]
    if n > DET_MAX_SIZE:
        raise IrforgeError(
            f"Det of {n}x{n} matrices is not supported (at most {DET_MAX_SIZE}x{DET_MAX_SIZE}: "
            "OpenVINO has no Det and irforge writes it as Leibniz's formula)",
            where=ctx.where, fix="compute the determinant outside the model, or fold it (constant input)", code="E129",
        )
    dtype = np.dtype(from_xdsl(ctx.input_type(0).element_type))
    batch = len(shape) - 2
    flat = ctx.value(Reshape, [ctx.input(0)], suffix="/flat", shape=[0] * batch + [n * n])
    positions, signs = _permutations(n)
    picked = ctx.value(Gather, [flat, ctx.constant(positions, "/positions")], suffix="/picked", axis=batch)  # [..., n!, n]
    # the sign goes on each product's first factor, before the ReduceProd: OpenVINO's CPU
    # plugin (2026.4) drops a Multiply that follows a ReduceProd with keep_dims=false
    factors = np.ones(positions.shape, dtype)
    factors[:, 0] = signs
    signed = ctx.value(Eltwise, [picked, ctx.constant(factors, "/signs")], suffix="/signed", operation="mul")
    products = ctx.value(Reduce, [signed], suffix="/products", operation="prod", axes=[batch + 1], keep_dims=False)
    return ctx.value(Reduce, [products], operation="sum", axes=[batch], keep_dims=False)


@onnx_extractor("Unique")
def unique(ctx: NodeContext) -> list[SSAValue]:
    axis = ctx.attr("axis", None)
    if axis is not None:
        rank = len(ctx.input_shape(0))
        if not -rank <= int(axis) < rank:
            raise IrforgeError(
                f"Unique axis {axis} is out of range for an input of rank {rank}",
                where=ctx.where, fix=f"use an axis in [{-rank}, {rank - 1}]", code="E130",
            )
        axis = int(axis) % rank
    return ctx.add(Unique, [ctx.input(0)], num_results=4, axis=axis, sorted=ctx.flag("sorted", 1))
