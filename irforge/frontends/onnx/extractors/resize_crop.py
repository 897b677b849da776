"""ONNX Resize with coordinate_transformation_mode tf_crop_and_resize, as matrix products.

OpenVINO's Interpolate has no crop-and-resize mode, so the op is written exactly with
standard ops when its region of interest, output sizes and input shape are known at
conversion: each resized axis (the last two may be) maps output index i to the source
coordinate

    x = start * (L - 1) + i * (end - start) * (L - 1) / (O - 1)     (O > 1)
    x = (start + end) / 2 * (L - 1)                                  (O = 1)

and the resampling along it is a constant [O, L] matrix whose row i holds the linear
weights of floor(x) and min(floor(x) + 1, L - 1), or a single 1 at the nearest index
(rounded per nearest_mode, as onnxruntime); y = W_h @ x @ W_w^T, then every output pixel
whose coordinate lies outside [0, L - 1] on either axis is extrapolation_value (a Where).
Cubic mode and crops of other axes are refused (E137).
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.ir import SSAValue

from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.onnx.node_expansion import Expansion
from irforge.frontends.onnx.registry import NodeContext
from irforge.weights.dtypes import from_xdsl


def _refuse(ctx: NodeContext, what: str, fix: str) -> IrforgeError:
    return IrforgeError(f"Resize tf_crop_and_resize: {what}", where=ctx.where, fix=fix, code="E137")


def _nearest(x: float, mode: str) -> int:
    if mode == "floor":
        return math.floor(x)
    if mode == "ceil":
        return math.ceil(x)
    frac = x - math.floor(x)
    if frac == 0.5:
        return math.floor(x) if mode == "round_prefer_floor" else math.ceil(x)
    return round(x)


def axis_matrix(length: int, out: int, start: float, end: float, mode: str, nearest_mode: str) -> tuple[np.ndarray, np.ndarray]:
    """The [out, length] resampling matrix of one axis, and which outputs lie inside."""
    weights = np.zeros((out, length), np.float64)
    inside = np.ones(out, bool)
    for i in range(out):
        x = start * (length - 1) + i * (end - start) * (length - 1) / (out - 1) if out > 1 else 0.5 * (start + end) * (length - 1)
        if x < 0 or x > length - 1:
            inside[i] = False
            continue
        if mode == "nearest":
            weights[i, min(max(_nearest(x, nearest_mode), 0), length - 1)] = 1.0
        else:
            x0 = int(x)
            x1 = min(x0 + 1, length - 1)
            weights[i, x0] += 1.0 - (x - x0)
            weights[i, x1] += x - x0
    return weights, inside


def crop_and_resize(ctx: NodeContext, mode: str) -> SSAValue:
    shape = ctx.input_shape(0)
    rank = len(shape)
    if mode not in ("linear", "nearest"):
        raise _refuse(ctx, f"mode '{mode}' is not supported", fix="use linear or nearest")
    if DYN in shape:
        raise _refuse(ctx, f"needs a static input shape, got {list(shape)}", fix="give static input shapes (--input_shape)")
    axes = [int(a) % rank for a in ctx.attr("axes")] if ctx.attr("axes") is not None else list(range(rank))
    roi = [float(v) for v in ctx.required_constant(1, "roi").reshape(-1)]
    if len(roi) != 2 * len(axes):
        raise _refuse(ctx, f"roi has {len(roi)} values for {len(axes)} axes", fix="give a start and an end per axis")
    out = _output_sizes(ctx, shape, axes)
    starts = dict(zip(axes, roi[: len(axes)]))
    ends = dict(zip(axes, roi[len(axes) :]))
    resized = [a for a in axes if not (out[a] == shape[a] and starts[a] == 0.0 and ends[a] == 1.0)]
    if any(a < rank - 2 for a in resized):
        raise _refuse(ctx, f"crops axes {resized}; only the last two axes can be cropped and resized", fix="crop the spatial axes (H, W) only")
    dtype = np.dtype(from_xdsl(ctx.input_type(0).element_type))
    nearest_mode = ctx.attr("nearest_mode", "round_prefer_floor")
    e = Expansion(ctx)
    y = e.input(0)
    masks = {}
    for a in resized:
        weights, inside = axis_matrix(shape[a], out[a], starts[a], ends[a], mode, nearest_mode)
        masks[a] = inside
        if a == rank - 2:
            y = e.one("MatMul", [e.constant(weights, dtype), y])
        else:
            y = e.one("MatMul", [y, e.constant(weights.T, dtype)])
    if any(not m.all() for m in masks.values()):
        h = masks.get(rank - 2, np.ones(out[rank - 2] if rank >= 2 else 1, bool))
        w = masks.get(rank - 1, np.ones(out[rank - 1], bool))
        inside = np.logical_and.outer(h, w) if rank >= 2 else w
        extrapolated = e.constant(float(ctx.attr("extrapolation_value", 0.0)), dtype)
        y = e.one("Where", [e.constant(inside), y, extrapolated])
    return e.result(y)


def _output_sizes(ctx: NodeContext, shape: tuple[int, ...], axes: list[int]) -> list[int]:
    out = list(shape)
    if ctx.has_input(3):
        sizes = [int(v) for v in ctx.required_constant(3, "sizes").reshape(-1)]
        if len(sizes) != len(axes):
            raise _refuse(ctx, f"sizes has {len(sizes)} values for {len(axes)} axes", fix="give one size per axis")
        for a, s in zip(axes, sizes):
            out[a] = s
    elif ctx.has_input(2):
        scales = [float(v) for v in ctx.required_constant(2, "scales").reshape(-1)]
        if len(scales) != len(axes):
            raise _refuse(ctx, f"scales has {len(scales)} values for {len(axes)} axes", fix="give one scale per axis")
        for a, s in zip(axes, scales):
            out[a] = int(math.floor(shape[a] * s))
    if min(out) < 1:
        raise _refuse(ctx, f"output sizes {out} must be positive", fix="give sizes or scales giving at least one element per axis")
    if ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise _refuse(ctx, "keep_aspect_ratio_policy other than stretch is not supported", fix="give sizes for every axis")
    return out
