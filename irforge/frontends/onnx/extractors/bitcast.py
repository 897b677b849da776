"""ONNX BitCast (opset 26): the input's bits read as another element type of the same width.

OpenVINO has no bit-reinterpreting layer, so BitCast is built only where it is exact:

    constant input                  folded (numpy's view)
    the same type                   the input itself
    bool -> int8 / uint8            Convert (a bool is the byte 0 or 1)
    signed <-> unsigned, one width  two's complement by arithmetic on in-range values, with no
                                    wrapping conversion (OpenVINO defines Convert's wrap only
                                    for signed -> unsigned); up to 32 bits in i64:
        uN -> iN:  v = i64(x);  iN(Select(v >= 2^(N-1), v - 2^N, v))
        iN -> uN:  v = i64(x);  uN(Select(v < 0, v + 2^N, v))
                                    and 64-bit types in their own width:
        uN -> iN:  h = x >= 2^(N-1);  v = iN(Select(h, x - 2^(N-1), x));  Select(h, v - 2^(N-1), v)
        iN -> uN:  n = x < 0;         v = uN(Select(n, x + 2^(N-1), x));  Select(n, v + 2^(N-1), v)

A run-time float <-> integer or byte -> bool cast has no exact nn form (float arithmetic
cannot rebuild NaN payloads or flushed denormals): it is refused, naming the input to give
as a constant (E118).
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from irforge.dialects.nn import Convert, Eltwise, Select
from irforge.errors import IrforgeError, NotConstantError
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor
from irforge.weights.dtypes import dtype_name, from_xdsl, to_xdsl


def _target(ctx: NodeContext, source: np.dtype) -> np.dtype:
    """The `to` element type, checked to have the input's width and an irforge type."""
    to = ctx.attr("to")
    if to is None:  # an opset whose schema irforge does not hold does not report it missing
        raise ctx.fail("BitCast needs the attribute to", fix="give `to`, the element type to read the bits as")
    to = int(to)
    try:
        target = np.dtype(onnx.helper.tensor_dtype_to_np_dtype(to))
        dtype_name(target)
    except (IrforgeError, KeyError, TypeError, ValueError):
        target = None
    if target is None or target.kind not in "biuf":
        # E119: a BitCast target that is not a numeric element type irforge holds
        raise IrforgeError(f"to={to} is not a numeric element type irforge holds", where=ctx.where,
                           fix="cast to a float, integer or bool type of the input's width", code="E119")  # fmt: skip
    if target.itemsize != source.itemsize:
        raise IrforgeError(
            f"{source} ({source.itemsize * 8} bits) and {target} ({target.itemsize * 8} bits) differ in width",
            where=ctx.where, fix="BitCast keeps the bits: give a target type of the input's width", code="E119",
        )  # fmt: skip
    return target


def _flip_sign_in_i64(ctx: NodeContext, x: SSAValue, source: np.dtype, target: np.dtype) -> SSAValue:
    """iN <-> uN for N <= 32: in i64, where both ranges fit, v - 2^N where v >= 2^(N-1)
    (to signed) or v + 2^N where v < 0 (to unsigned); only the Converts see unsigned types."""
    wide = np.dtype(np.int64)
    span = 1 << (source.itemsize * 8)
    v = ctx.value(Convert, [x], suffix="/wide", destination_type=to_xdsl(wide))
    if source.kind == "u":
        wraps = ctx.value(Eltwise, [v, ctx.constant(np.array(span // 2, wide), "/half")], suffix="/high", operation="greater_equal")
        step = -span
    else:
        wraps = ctx.value(Eltwise, [v, ctx.constant(np.array(0, wide), "/zero")], suffix="/negative", operation="less")
        step = span
    moved = ctx.value(Eltwise, [v, ctx.constant(np.array(step, wide), "/span")], suffix="/moved", operation="sum")
    picked = ctx.value(Select, [wraps, moved, v], suffix="/picked")
    return ctx.value(Convert, [picked], destination_type=to_xdsl(target))


def _flip_sign(ctx: NodeContext, x: SSAValue, source: np.dtype, target: np.dtype) -> SSAValue:
    """Two's complement reinterpretation between i64 and u64 (module docstring)."""
    half = 1 << (source.itemsize * 8 - 1)

    def const(value: int, dtype: np.dtype, suffix: str) -> SSAValue:
        return ctx.constant(np.array(value, dtype), suffix)

    if source.kind == "u":
        wraps = ctx.value(Eltwise, [x, const(half, source, "/half")], suffix="/high", operation="greater_equal")
        # only the wrapping values are shifted: the others become the pivot first, so that no
        # step leaves the type's range
        clamped = ctx.value(Select, [wraps, x, const(half, source, "/pivot")], suffix="/clamped")
        shifted = ctx.value(Eltwise, [clamped, const(half, source, "/half_again")], suffix="/low_bits", operation="sub")
        back = const(-half, target, "/shift_back")
    else:
        wraps = ctx.value(Eltwise, [x, const(0, source, "/zero")], suffix="/negative", operation="less")
        clamped = ctx.value(Select, [wraps, x, const(-half, source, "/pivot")], suffix="/clamped")
        shifted = ctx.value(Eltwise, [clamped, const(half - 1, source, "/half_minus_one")], suffix="/shifted", operation="sum")
        shifted = ctx.value(Eltwise, [shifted, const(1, source, "/one")], suffix="/low_bits", operation="sum")
        back = const(half, target, "/shift_back")
    in_range = ctx.value(Select, [wraps, shifted, x], suffix="/in_range")
    value = ctx.value(Convert, [in_range], suffix="/converted", destination_type=to_xdsl(target))
    moved = ctx.value(Eltwise, [value, back], suffix="/moved", operation="sum")
    return ctx.value(Select, [wraps, moved, value])


@onnx_extractor("BitCast")
def bitcast(ctx: NodeContext) -> SSAValue:
    source = from_xdsl(ctx.input_type(0).element_type)
    target = _target(ctx, source)
    constant = ctx.constant_input(0)
    if constant is not None:
        return ctx.constant(np.array(constant, order="C").view(target), "")
    if target == source:
        return ctx.input(0)
    if source.kind == "b" and target.kind in "iu":
        return ctx.value(Convert, [ctx.input(0)], destination_type=to_xdsl(target))
    if source.kind in "iu" and target.kind in "iu":
        if source.itemsize < 8:
            return _flip_sign_in_i64(ctx, ctx.input(0), source, target)
        return _flip_sign(ctx, ctx.input(0), source, target)
    raise NotConstantError(
        f"BitCast of a run-time {source} tensor to {target} has no exact form in OpenVINO's opset",
        ctx.node.input[0], where=ctx.where, code="E118",
        fix=f"give '{ctx.node.input[0]}' as a constant (it then folds), or cast between bool/int types of one width",
    )  # fmt: skip
