"""ONNX Resize and Upsample -> nn.resample."""

from __future__ import annotations

from xdsl.ir import SSAValue

from irforge.dialects.nn import Resample
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor

COORDINATE_MODES = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "tf_half_pixel_for_nn"}


@onnx_extractor("Resize")
def resize(ctx: NodeContext) -> SSAValue:
    mode = ctx.attr("mode", "nearest")
    coordinate_mode = ctx.attr("coordinate_transformation_mode", "half_pixel" if ctx.opset >= 11 else "asymmetric")
    if coordinate_mode not in COORDINATE_MODES:
        raise ctx.fail(f"coordinate_transformation_mode '{coordinate_mode}' is not supported")
    if ctx.attr("exclude_outside", 0) or ctx.attr("antialias", 0) or ctx.attr("axes") is not None:
        raise ctx.fail("exclude_outside, antialias and axes are not supported")
    if ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise ctx.fail("keep_aspect_ratio_policy other than 'stretch' is not supported")
    props: dict[str, object] = {
        "mode": mode,
        "coordinate_transformation_mode": coordinate_mode,
        "nearest_mode": ctx.attr("nearest_mode", "round_prefer_floor"),
        "cubic_coeff_a": float(ctx.attr("cubic_coeff_a", -0.75)),
    }
    scales_index, sizes_index = (1, None) if ctx.opset < 11 else (2, 3)
    sizes = ctx.constant_input(sizes_index) if sizes_index is not None else None
    scales = ctx.constant_input(scales_index)
    if sizes is not None and sizes.size:
        props["sizes"] = [int(s) for s in sizes]
    elif scales is not None and scales.size:
        props["scales"] = [float(s) for s in scales]
    else:
        raise ctx.fail("scales or sizes must be constants", fix="give static shapes so they fold")
    return ctx.value(Resample, [ctx.input(0)], **props)


@onnx_extractor("Upsample")
def upsample(ctx: NodeContext) -> SSAValue:
    scales = ctx.attr("scales") if ctx.opset < 9 else ctx.required_constant(1, "scales")
    mode = ctx.attr("mode", "nearest")
    return ctx.value(
        Resample,
        [ctx.input(0)],
        mode="linear" if mode in ("linear", "bilinear") else "nearest",
        scales=[float(s) for s in scales],
        coordinate_transformation_mode="asymmetric",
        nearest_mode="floor",
    )
