"""ONNX Resize with antialias or exclude_outside, as matrix products.

OpenVINO's Interpolate-11 has an antialias flag but no exclude_outside, and `nn.resample`
has neither; both are what timm's and torchvision's antialiased resizes export to
(`F.interpolate(..., antialias=True)`: naflexvit resizing its position-embedding grid, a
bicubic `aten::_upsample_bicubic2d_aa` that torch's dynamo exporter writes as Resize cubic,
antialias=1, exclude_outside=1). Resize is linear in its input and separable per axis, so
when the input shape and the scales or sizes are known at conversion each resized axis is a
constant [O, L] matrix and y = W_h @ x @ W_w^T (the last two axes; others are refused). Each
matrix is the node itself (its mode, coordinate transformation, cubic coefficient, antialias
and exclude_outside as given) run by onnx's reference implementation over the identity of
that axis, so the weights are the spec's, not a re-derivation of them.
"""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto, helper
from xdsl.ir import SSAValue

from irforge.dialects.nn.base import DYN
from irforge.frontends.onnx.checked_constants import int_list
from irforge.frontends.onnx.node_expansion import Expansion
from irforge.frontends.onnx.registry import NodeContext
from irforge.weights.dtypes import from_xdsl

PASSED_ATTRIBUTES = ("mode", "coordinate_transformation_mode", "cubic_coeff_a", "exclude_outside", "antialias", "nearest_mode")


def axis_matrix(ctx: NodeContext, length: int, out: int, scale: float | None) -> np.ndarray:
    """The [out, length] matrix of one axis: the node's Resize of eye(length) along axis 1
    (by `scale` where the node gives scales, which the coordinate transformation reads, else
    to `out`), transposed."""
    from onnx.reference import ReferenceEvaluator

    attrs = {name: ctx.attr(name) for name in PASSED_ATTRIBUTES if ctx.attr(name) is not None}
    if scale is not None:
        second = helper.make_tensor("scales", TensorProto.FLOAT, [2], [1.0, scale])
        node_inputs = ["x", "", "scales"]
    else:
        second = helper.make_tensor("sizes", TensorProto.INT64, [2], [length, out])
        node_inputs = ["x", "", "", "sizes"]
    graph = helper.make_graph(
        [helper.make_node("Resize", node_inputs, ["y"], **attrs)], "axis",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [length, length])],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, None)], [second],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    try:
        (resized,) = ReferenceEvaluator(model).run(None, {"x": np.eye(length)})
    except (ValueError, RuntimeError, TypeError, IndexError, ZeroDivisionError, OverflowError) as e:
        # an attribute combination onnx's own definition refuses: say which, on this node
        raise ctx.fail(f"Resize with antialias or exclude_outside: onnx's definition refuses these attributes ({str(e).splitlines()[0][:120]})",
                       fix="check mode, coordinate_transformation_mode and the scales or sizes") from None
    if not np.all(np.isfinite(resized)):
        raise ctx.fail("Resize with antialias or exclude_outside gives non-finite weights for these attributes",
                       fix="check cubic_coeff_a and the scales or sizes")
    return np.asarray(resized, np.float64).T  # row i of the identity resized: column i of W


MATRIX_ELEMENTS = 1 << 24
"""The largest [out, length] weight matrix built for one axis (a corrupt size asks for more)."""


def check_modes(ctx: NodeContext) -> None:
    """onnxruntime's rule: antialias with linear or cubic only; exclude_outside with cubic, or
    with linear when antialiased (the onnx reference refuses the rest, or ignores them)."""
    mode = ctx.attr("mode", "nearest")
    if mode not in ("linear", "cubic"):
        raise ctx.fail(f"Resize antialias / exclude_outside apply to the linear and cubic modes, not mode '{mode}'",
                       fix="drop antialias and exclude_outside, or use mode linear or cubic")
    if mode == "linear" and ctx.attr("exclude_outside", 0) and not ctx.attr("antialias", 0):
        raise ctx.fail("Resize exclude_outside with mode linear needs antialias=1", fix="drop exclude_outside, or set antialias=1")


def antialias_resize(ctx: NodeContext) -> SSAValue:
    shape = ctx.input_shape(0)
    rank = len(shape)
    fix = "give static input shapes and constant scales or sizes, resizing the last two axes only"
    if DYN in shape:
        raise ctx.fail(f"Resize with antialias or exclude_outside needs a static input shape, got {list(shape)}", fix=fix)
    check_modes(ctx)
    if ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        raise ctx.fail("Resize with antialias or exclude_outside: keep_aspect_ratio_policy other than stretch is not supported", fix="give sizes for every axis")
    axes = [int(a) % rank for a in ctx.attr("axes")] if ctx.attr("axes") is not None else list(range(rank))
    out, scales = list(shape), {}
    if ctx.has_input(3):
        sizes = int_list(ctx, ctx.required_constant(3, "sizes"), "sizes (input #3)")
        if len(sizes) != len(axes):
            raise ctx.fail(f"sizes has {len(sizes)} values for {len(axes)} axes", fix="give one size per axis")
        out = [dict(zip(axes, sizes)).get(a, d) for a, d in enumerate(shape)]
    else:
        scales_array = ctx.required_constant(2, "scales")
        if scales_array.dtype.kind != "f":
            raise ctx.fail(f"scales (input #2) must be a float tensor, got {scales_array.dtype}", fix="give scales as float32")
        given = [float(v) for v in scales_array.reshape(-1)]
        if len(given) != len(axes):
            raise ctx.fail(f"scales has {len(given)} values for {len(axes)} axes", fix="give one scale per axis")
        if not all(math.isfinite(v) and v > 0 for v in given):
            raise ctx.fail(f"scales {given} must be finite and positive", fix="give positive scales")
        scales = dict(zip(axes, given))
        out = [int(math.floor(d * scales.get(a, 1.0))) if d * scales.get(a, 1.0) < 2**62 else 2**62 for a, d in enumerate(shape)]
    if min(out) < 1:
        raise ctx.fail(f"output sizes {out} must be positive", fix="give sizes or scales giving at least one element per axis")
    if any(out[a] * shape[a] > MATRIX_ELEMENTS for a in axes if out[a] != shape[a]):
        raise ctx.fail(f"Resize with antialias or exclude_outside to sizes {out} from {list(shape)}: a weight matrix beyond "
                       f"{MATRIX_ELEMENTS} elements", fix="check the scales or sizes")
    resized = [a for a in axes if out[a] != shape[a] or scales.get(a, 1.0) != 1.0]
    if any(a < rank - 2 for a in resized):
        raise ctx.fail(f"Resize with antialias or exclude_outside resizes axes {resized}; only the last two can be", fix=fix)
    dtype = np.dtype(from_xdsl(ctx.input_type(0).element_type))
    e = Expansion(ctx)
    y = e.input(0)
    for a in resized:
        weights = axis_matrix(ctx, shape[a], out[a], scales.get(a))
        y = e.one("MatMul", [e.constant(weights, dtype), y]) if a == rank - 2 else e.one("MatMul", [y, e.constant(weights.T, dtype)])
    return e.result(y)
