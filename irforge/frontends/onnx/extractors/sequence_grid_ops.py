"""ONNX ops written as standard ONNX nodes irforge already imports (node_expansion.Expansion),
so the reference, CPU, OpenCL and IR XML paths come from those nodes:

    ReverseSequence(x, lens)   GatherElements(x, idx, time_axis), idx[t, b] = len_b - 1 - t where
                               t < len_b, else t (lens and the dims may be known at run
                               time only; tf2onnx's bidirectional RNNs, BiDAF)
    CenterCropPad(x, shape)    Slice (crop) then Pad (zeros), the start offset floor(diff / 2)
                               as ONNX's reference puts it; `shape` must be constant
    AffineGrid(theta, size)    a constant base grid [(x, y[, z], 1)] @ theta^T, reshaped to
                               [N, H, W, 2] / [N, D, H, W, 3]; `size` must be constant
    SwiGLU(A, B)               Swish_alpha(A) * B (opset 28's definition)
    CumProd(x, axis)           an unrolled chain of Mul over a static axis of at most
                               CUMPROD_MAX_STEPS elements (exact: the same products, in order)
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.onnx.checked_constants import one_int
from irforge.frontends.onnx.node_expansion import Expansion
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

CUMPROD_MAX_STEPS = 64
"""CumProd's unrolled chain is one Mul per element of the axis: longer axes are refused."""


def _unsupported(ctx: NodeContext, what: str, fix: str) -> IrforgeError:
    return IrforgeError(f"{ctx.node.op_type}: {what}", where=ctx.where, fix=fix, code="E184")


def _static_shape(ctx: NodeContext, index: int, what: str) -> tuple[int, ...]:
    shape = ctx.input_shape(index)
    if DYN in shape:
        raise _unsupported(ctx, f"{what} has dims unknown at conversion ({list(shape)})", "give static input shapes (--input_shape)")
    return shape


def _axis(ctx: NodeContext, axis: int, rank: int, what: str) -> int:
    if not -rank <= axis < rank:
        raise _unsupported(ctx, f"{what} {axis} is out of range for an input of rank {rank}", f"use an axis in [{-rank}, {rank - 1}]")
    return axis % rank


@onnx_extractor("ReverseSequence")
def reverse_sequence(ctx: NodeContext) -> SSAValue:
    shape = ctx.input_shape(0)
    time_axis, batch_axis = int(ctx.attr("time_axis", 0)), int(ctx.attr("batch_axis", 1))
    if {time_axis, batch_axis} != {0, 1}:
        raise _unsupported(ctx, f"time_axis={time_axis}, batch_axis={batch_axis}", "use time_axis/batch_axis 0 and 1 (one each), as ONNX requires")
    if len(shape) < 2:
        raise _unsupported(ctx, f"an input of rank {len(shape)}", "give an input of rank >= 2")
    ex = Expansion(ctx)
    lens = ex.one("Unsqueeze", [ex.one("Cast", [ex.input(1)], to=7), ex.constant([1 - batch_axis], np.int64)])  # [1, B] / [B, 1]
    if shape[time_axis] != DYN:
        t = ex.constant(np.arange(shape[time_axis], dtype=np.int64))
    else:  # the steps known at run time only (tf2onnx's dynamic sequence length)
        steps = ex.one("Gather", [ex.one("Shape", [ex.input(0)]), ex.constant(time_axis, np.int64)], axis=0)
        t = ex.one("Range", [ex.constant(0, np.int64), steps, ex.constant(1, np.int64)])
    t = ex.one("Unsqueeze", [t, ex.constant([1 - time_axis], np.int64)])  # [T, 1] / [1, T]
    inside = ex.one("Less", [t, lens])
    reversed_t = ex.one("Sub", [ex.one("Sub", [lens, ex.constant(1, np.int64)]), t])
    idx = ex.one("Where", [inside, reversed_t, t])
    # [T, B] -> [T, B, 1, ...] -> x's shape, one index per element
    if len(shape) > 2:
        idx = ex.one("Unsqueeze", [idx, ex.constant(list(range(2, len(shape))), np.int64)])
    full = ex.constant(list(shape), np.int64) if DYN not in shape else ex.one("Shape", [ex.input(0)])
    idx = ex.one("Expand", [idx, full])
    return ex.result(ex.one("GatherElements", [ex.input(0), idx], axis=time_axis))


@onnx_extractor("CenterCropPad")
def center_crop_pad(ctx: NodeContext) -> SSAValue:
    shape = _static_shape(ctx, 0, "the input")
    rank = len(shape)
    target_value = ctx.required_constant(1, "shape")
    if target_value.dtype.kind not in "iu":
        raise _unsupported(ctx, f"shape of element type {target_value.dtype}", "give an int64 tensor of the target sizes")
    target = [int(v) for v in target_value.reshape(-1)]
    axes_attr = ctx.attr("axes")
    axes = list(range(rank)) if axes_attr is None else [_axis(ctx, int(a), rank, "axes value") for a in axes_attr]
    if len(set(axes)) != len(axes) or len(axes) != len(target):
        raise _unsupported(ctx, f"axes {axes} and shape {target} do not pair up (one distinct axis per shape value)", "give one shape value per distinct axis")
    if any(v < 0 for v in target):
        raise _unsupported(ctx, f"negative target shape {target}", "give sizes >= 0")
    starts, ends, pad_begin, pad_end = [0] * rank, list(shape), [0] * rank, [0] * rank
    for axis, size in zip(axes, target):
        dim = shape[axis]
        if size < dim:
            starts[axis] = (dim - size) // 2
            ends[axis] = starts[axis] + size
        elif size > dim:
            pad_begin[axis] = (size - dim) // 2
            pad_end[axis] = size - dim - pad_begin[axis]
    ex = Expansion(ctx)
    out = ex.input(0)
    if starts != [0] * rank or ends != list(shape):
        out = ex.one("Slice", [out, ex.constant(starts, np.int64), ex.constant(ends, np.int64), ex.constant(list(range(rank)), np.int64)])
    if any(pad_begin) or any(pad_end):
        out = ex.one("Pad", [out, ex.constant(pad_begin + pad_end, np.int64)], mode="constant")
    if out == ex.input(0):
        out = ex.one("Identity", [out])
    return ex.result(out)


def _base_coords(size: int, align_corners: bool) -> np.ndarray:
    """ONNX's reference: -1..1 through the corner pixels' centres (align_corners) or edges."""
    if align_corners:
        return np.array([-1.0]) if size == 1 else np.linspace(-1.0, 1.0, size)
    return (2.0 * np.arange(size) + 1.0) / size - 1.0


@onnx_extractor("AffineGrid")
def affine_grid(ctx: NodeContext) -> SSAValue:
    align = int(ctx.attr("align_corners", 0))
    if align not in (0, 1):
        raise _unsupported(ctx, f"align_corners={align}", "use 0 or 1")
    size_value = ctx.required_constant(1, "size")
    if size_value.dtype.kind not in "iu":
        raise _unsupported(ctx, f"size of element type {size_value.dtype}", "give an int64 tensor [N, C, H, W] or [N, C, D, H, W]")
    size = [int(v) for v in size_value.reshape(-1)]
    if len(size) not in (4, 5) or min(size) < 1:
        raise _unsupported(ctx, f"size {size}", "give [N, C, H, W] (2-D) or [N, C, D, H, W] (3-D) with positive sizes")
    spatial = size[2:]
    dims = len(spatial)
    theta = ctx.input_shape(0)
    if len(theta) != 3 or theta[1:] != (dims, dims + 1) or theta[0] not in (size[0], DYN):
        raise _unsupported(ctx, f"theta of shape {list(theta)} for size {size}", f"give theta as [N, {dims}, {dims + 1}]")
    # coordinates ordered (x, y[, z]): x runs along the last spatial axis
    axes = [_base_coords(n, bool(align)) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")
    base = np.stack([m.reshape(-1) for m in reversed(mesh)] + [np.ones(int(np.prod(spatial)))], axis=1)
    ex = Expansion(ctx)
    theta_t = ex.one("Transpose", [ex.input(0)], perm=[0, 2, 1])
    from irforge.weights.dtypes import from_xdsl

    # the base grid in theta's element type (float16 / float64 models)
    grid = ex.one("MatMul", [ex.constant(base, np.dtype(from_xdsl(ctx.input_type(0).element_type))), theta_t])
    return ex.result(ex.one("Reshape", [grid, ex.constant([size[0], *spatial, dims], np.int64)]))


@onnx_extractor("SwiGLU")
def swiglu(ctx: NodeContext) -> SSAValue:
    a_shape, b_shape = ctx.input_shape(0), ctx.input_shape(1)
    if len(a_shape) != len(b_shape) or any(x != y and DYN not in (x, y) for x, y in zip(a_shape, b_shape)):
        raise _unsupported(ctx, f"A {list(a_shape)} and B {list(b_shape)} differ (SwiGLU does not broadcast)", "give A and B one shape")
    ex = Expansion(ctx)
    gate = ex.one("Mul", [ex.input(0), ex.one("Sigmoid", [ex.one("Mul", [ex.input(0), ex.value(_alpha(ctx))])])])
    return ex.result(ex.one("Mul", [gate, ex.input(1)]))


def _alpha(ctx: NodeContext) -> SSAValue:
    from irforge.weights.dtypes import from_xdsl

    return ctx.constant(np.array(float(ctx.attr("alpha", 1.0)), np.dtype(from_xdsl(ctx.input_type(0).element_type))), "/alpha")


@onnx_extractor("CumProd")
def cum_prod(ctx: NodeContext) -> SSAValue:
    shape = ctx.input_shape(0)
    axis_value = ctx.required_constant(1, "axis").reshape(-1)
    if axis_value.size != 1:
        raise _unsupported(ctx, f"axis holds {axis_value.size} values", "give one axis")
    axis = _axis(ctx, one_int(ctx, axis_value, "axis"), len(shape), "axis")
    steps = shape[axis]
    if steps == DYN or steps > CUMPROD_MAX_STEPS:
        raise _unsupported(ctx, f"a product scan along an axis of {'unknown' if steps == DYN else steps} elements (unrolled up to {CUMPROD_MAX_STEPS})",
                           "give the axis a static size within the limit, or make CumProd a custom layer (--extensions)")
    reverse, exclusive = ctx.flag("reverse"), ctx.flag("exclusive")
    ex = Expansion(ctx)
    order = list(range(steps))[::-1] if reverse else list(range(steps))
    pieces = {i: ex.one("Slice", [ex.input(0), ex.constant([i], np.int64), ex.constant([i + 1], np.int64), ex.constant([axis], np.int64)]) for i in order}
    outputs: dict[int, str] = {}
    running: str | None = None
    for i in order:
        if exclusive:
            outputs[i] = running if running is not None else _ones(ex, ctx, pieces[i])
            running = pieces[i] if running is None else ex.one("Mul", [running, pieces[i]])
        else:
            running = pieces[i] if running is None else ex.one("Mul", [running, pieces[i]])
            outputs[i] = running
    if steps == 1:
        return ex.result(ex.one("Identity", [outputs[0]]))
    return ex.result(ex.one("Concat", [outputs[i] for i in range(steps)], axis=axis))


def _ones(ex: Expansion, ctx: NodeContext, like: str) -> str:
    """Ones of `like`'s shape and type (exclusive CumProd's first element): 0 * x + 1 would
    turn inf / NaN into NaN, so ones are built from the shape."""
    from irforge.weights.dtypes import from_xdsl

    one = ex.constant(np.array(1, np.dtype(from_xdsl(ctx.input_type(0).element_type))))
    return ex.one("Expand", [one, ex.one("Shape", [like])])
