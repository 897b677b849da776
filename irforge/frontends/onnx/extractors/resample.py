"""ONNX Resize and Upsample -> nn.resample."""

from __future__ import annotations

import numpy as np

from xdsl.ir import SSAValue

from irforge.dialects.nn import Gather, Resample, ResampleTo
from irforge.dialects.nn.resample import ResampleBy, known_scales
from irforge.dialects.nn.indexing import known_elements
from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.onnx.checked_constants import int_list
from irforge.frontends.onnx.extractors.resize_antialias import antialias_resize
from irforge.frontends.onnx.extractors.resize_crop import crop_and_resize
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

COORDINATE_MODES = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"}


@onnx_extractor("Resize")
def resize(ctx: NodeContext) -> SSAValue:
    mode = ctx.attr("mode", "nearest")
    coordinate_mode = ctx.attr("coordinate_transformation_mode", "half_pixel" if ctx.opset >= 11 else "asymmetric")
    if coordinate_mode == "tf_crop_and_resize" and not (ctx.attr("exclude_outside", 0) or ctx.attr("antialias", 0)):
        return crop_and_resize(ctx, mode)  # matrix products (resize_crop.py)
    if coordinate_mode not in COORDINATE_MODES:
        raise ctx.fail(f"coordinate_transformation_mode '{coordinate_mode}' is not supported")
    if ctx.attr("exclude_outside", 0) or ctx.attr("antialias", 0):
        return antialias_resize(ctx)  # matrix products (resize_antialias.py)
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise ctx.fail(f"keep_aspect_ratio_policy '{policy}' is not supported", fix="use stretch, not_larger or not_smaller")
    props: dict[str, object] = {
        "mode": mode,
        "coordinate_transformation_mode": coordinate_mode,
        "nearest_mode": ctx.attr("nearest_mode", "round_prefer_floor"),
        "cubic_coeff_a": float(ctx.attr("cubic_coeff_a", -0.75)),
    }
    scales_index, sizes_index = (1, None) if ctx.opset < 11 else (2, 3)
    if sizes_index is not None and ctx.has_input(sizes_index) and ctx.constant_input(sizes_index) is None and policy == "stretch":
        return resize_to(ctx, props)  # (other policies need the sizes constant: required below)
    if sizes_index is not None and ctx.has_input(sizes_index):
        props["sizes"] = _full(ctx, int_list(ctx, ctx.required_constant(sizes_index, "sizes"), "sizes"), None)
        if policy != "stretch":
            props["scales"] = _keep_aspect_ratio(ctx, props.pop("sizes"), policy)  # type: ignore[arg-type]
    elif ctx.has_input(scales_index) and ctx.constant_input(scales_index) is None:
        if ctx.opset < 11 and mode == "nearest":
            raise IrforgeError("Resize-10 nearest with scales computed at run time is not supported (its rounding depends on each scale)",
                               where=ctx.where, fix="give static input shapes so the scales fold, or export at opset 11+", code="E137")
        return resize_by(ctx, scales_index, props)
    elif ctx.has_input(scales_index):
        props["scales"] = _full(ctx, [float(s) for s in ctx.required_constant(scales_index, "scales").reshape(-1)], 1.0)
    if not props.get("sizes") and not props.get("scales"):
        raise ctx.fail("Resize needs non-empty scales or sizes")
    if ctx.opset < 11 and mode == "nearest":
        return _resize10_nearest(ctx, props)
    return ctx.value(Resample, [ctx.input(0)], **props)


def _resize10_nearest(ctx: NodeContext, props: dict[str, object]) -> SSAValue:
    """Resize-10 has no nearest_mode: onnxruntime (and OpenVINO's "simple") takes the floor of
    the source coordinate when upsampling and its ceiling when downsampling, per axis. Nearest
    sampling is separable, so the upsampled axes (floor) and the downsampled ones (ceil) are
    two nn.resample ops when a node does both."""
    scales: list[float] = props["scales"]  # type: ignore[assignment]
    y = ctx.input(0)
    for rounding, wanted in (("floor", lambda s: s > 1.0), ("ceil", lambda s: s < 1.0)):
        part = [s if wanted(s) else 1.0 for s in scales]
        if part != [1.0] * len(scales):
            y = ctx.value(Resample, [y], suffix=f"/{rounding}", **{**props, "scales": part, "nearest_mode": rounding})
    return y if y is not ctx.input(0) else ctx.value(Resample, [y], **props)


def resize_to(ctx: NodeContext, props: dict[str, object]) -> SSAValue:
    """nn.resample_to: sizes computed at run time (torchvision's mask paste and keypoint
    decoding resize each box's map to the box's size, inside a Loop)."""
    rank, count = len(ctx.input_shape(0)), ctx.input_shape(3)
    axes = [int(a) for a in ctx.attr("axes")] if ctx.attr("axes") is not None else list(range(rank))
    if len(count) != 1 or count[0] != len(axes):
        raise ctx.fail(f"sizes must be a 1-D tensor of {len(axes)} values (one per axis), got shape {list(count)}")
    # axes whose size is known to be the input's (torch's Concat(Shape(x)[:2], h, w)) are
    # not resized: leave them out, so their dims stay static here and in OpenVINO
    shape, known = ctx.input_shape(0), known_elements(ctx.input(3))
    kept = [i for i, a in enumerate(axes) if not (known and known[i] != DYN and known[i] == shape[a] != DYN)]
    sizes = ctx.input(3)
    if len(kept) < len(axes) and kept:
        index = ctx.constant(np.array(kept, np.int64), "/sizes_index")
        sizes = ctx.value(Gather, [sizes, index], suffix="/sizes", axis=0)
        axes = [axes[i] for i in kept]
    return ctx.value(ResampleTo, [ctx.input(0), sizes], axes=axes, **props)


def resize_by(ctx: NodeContext, index: int, props: dict[str, object]) -> SSAValue:
    """nn.resample_by: scales computed at run time (F.interpolate(scale_factor=...) exported
    with dynamic shapes, or a scale derived from a Shape), one per axis or per `axes`."""
    rank, count = len(ctx.input_shape(0)), ctx.input_shape(index)
    axes = [int(a) for a in ctx.attr("axes")] if ctx.attr("axes") is not None else list(range(rank))
    if len(count) != 1 or count[0] != len(axes):
        raise ctx.fail(f"scales must be a 1-D tensor of {len(axes)} values (one per axis), got shape {list(count)}")
    # axes whose scale is known to be 1 (torch's Concat([1, 1], computed scales)) are not
    # resized: leave them out, so their dims stay static here and in OpenVINO (which does
    # not propagate float values into the output shape)
    known = known_scales(ctx.input(index), len(axes))
    kept = [i for i, s in enumerate(known) if s != 1.0]
    scales = ctx.input(index)
    if len(kept) < len(axes) and kept:
        picks = ctx.constant(np.array(kept, np.int64), "/scales_index")
        scales = ctx.value(Gather, [scales, picks], suffix="/scales", axis=0)
        axes = [axes[i] for i in kept]
    return ctx.value(ResampleBy, [ctx.input(0), scales], axes=axes, **props)


def _keep_aspect_ratio(ctx: NodeContext, sizes: list[int], policy: str) -> list[float]:
    """ONNX's keep_aspect_ratio_policy: one scale for the resized axes, the smallest
    (not_larger) or largest (not_smaller) of sizes / input size; output sizes round(scale * in)
    (half up), coordinates mapped with that scale (as onnxruntime). nn.resample's scales give
    floor(in * scale): the policy converts only when floor and round agree."""
    shape = ctx.input_shape(0)
    if DYN in shape:
        raise ctx.fail("keep_aspect_ratio_policy needs static input dims", fix="give static input shapes")
    axes = [a % len(shape) for a in ctx.attr("axes")] if ctx.attr("axes") is not None else list(range(len(shape)))
    if ctx.attr("axes") is not None:
        _full(ctx, sizes[: len(ctx.attr("axes"))], 0.0)  # axes out of range: the error, not another axis
    ratios = [sizes[a] / shape[a] for a in axes]
    scale = min(ratios) if policy == "not_larger" else max(ratios)
    rounded = [int(scale * shape[a] + 0.5) for a in axes]
    floored = [int(np.float32(scale) * np.float32(shape[a])) for a in axes]
    if rounded != floored:
        raise ctx.fail(
            f"keep_aspect_ratio_policy '{policy}' gives sizes {rounded} rounded from scale {scale:g}, which nn.resample's floor(in * scale) cannot give ({floored})",
            fix="give sizes that keep the aspect ratio exactly, or use keep_aspect_ratio_policy='stretch'",
        )
    return [float(np.float32(scale)) if i in axes else 1.0 for i in range(len(shape))]


def _full(ctx: NodeContext, values: list, fill: float | None) -> list:  # type: ignore[type-arg]
    """Per-axis values for every axis, from values given for the `axes` attribute's axes.

    Axes not listed keep their size: scale 1.0, or their input size for `sizes`."""
    axes = ctx.attr("axes")
    if axes is None or not values:
        return values
    shape = ctx.input_shape(0)
    if len(axes) != len(values):
        raise ctx.fail(f"axes has {len(axes)} entries but {len(values)} scales or sizes are given")
    full = list(shape) if fill is None else [fill] * len(shape)
    if fill is None and DYN in shape:
        raise ctx.fail("sizes for some axes of a tensor with dynamic dims", fix="give static input shapes")
    for axis, value in zip(axes, values):
        if not -len(shape) <= axis < len(shape):  # `% rank` resized another axis
            raise ctx.fail(f"axes value {axis} is out of range for an input of rank {len(shape)}", fix=f"use axes in [{-len(shape)}, {len(shape) - 1}]")
        full[axis % len(shape)] = value
    return full


@onnx_extractor("Upsample")
def upsample(ctx: NodeContext) -> SSAValue:
    mode = ctx.attr("mode", "nearest")
    props: dict[str, object] = {
        "mode": "linear" if mode in ("linear", "bilinear") else "nearest",
        "coordinate_transformation_mode": "asymmetric",
        "nearest_mode": "floor",
    }
    if ctx.opset >= 9 and ctx.constant_input(1) is None:  # scales computed at run time
        return resize_by(ctx, 1, props)
    scales = np.asarray(ctx.attr("scales") if ctx.opset < 9 else ctx.required_constant(1, "scales"))
    rank = len(ctx.input_shape(0))
    if scales.ndim != 1 or len(scales) != rank:
        raise ctx.fail(f"scales has shape {list(scales.shape)}, but the input has rank {rank}",
                       fix=f"give scales as one value per input axis ({rank} values)")
    return ctx.value(Resample, [ctx.input(0)], scales=[float(s) for s in scales], **props)
