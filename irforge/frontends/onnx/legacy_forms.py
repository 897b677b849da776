"""Old-opset forms of ONNX nodes, rewritten to their modern form before extraction.

Files in the wild (the ONNX Model Zoo's caffe2 / CNTK / early-PyTorch exports at opsets 1-9)
carry attributes later opsets removed. Each one is either honoured here, by rewriting the
node into the form today's extractor reads (`node_expansion.rewritten`), or refused with an
error that names it; none is dropped unless it cannot change the numbers:

    consumed_inputs (opset 1-5)     an in-place memory hint: dropped
    broadcast / axis (Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal, Greater, Less < 7):
                                    broadcast=1 aligns B's dims at `axis` of A (default: A's
                                    trailing dims); B is reshaped with 1s around it, then
                                    numpy broadcasting is exact; broadcast=0 needs equal shapes
    Gemm broadcast (< 7)            C broadcasts (=1) or has the full shape (=0): numpy's
                                    broadcasting gives both, dropped
    BatchNormalization is_test (< 7), Dropout is_test (< 7)
                                    1: inference, dropped; 0 (also the default): training
                                    (batch statistics, random masks): refused (E139)
    BatchNormalization spatial (< 9)
                                    1: dropped; 0: per-element statistics of shape
                                    [C, D1, ...], written as (x - mean) / sqrt(var + eps) *
                                    scale + bias with numpy broadcasting
    Upsample-1 height_scale / width_scale / mode BILINEAR|NEAREST
                                    Upsample-7's scales [1, 1, h, w], mode linear|nearest
    Pad-1 paddings                  Pad-2's pads
    Cast-1 `to` as a type name      the type's number (Cast-6)
    Cast to STRING                  refused (E138): irforge has no string tensors
    MeanVarianceNormalization-1 across_channels / normalize_variance (the experimental op
                                    onnxruntime still runs): axes [1, 2, 3] or [2, 3], and
                                    x - mean alone when normalize_variance=0

Read by the extractors themselves: Slice-1 / TopK-1 / Reshape-1 / Squeeze-1 / Split-2 /
Reduce*-1 attributes that later became inputs, Clip-6 min/max, Dropout-7..11 ratio (inference
ignores it). Harmless: LSTM/GRU/RNN output_sequence (whether Y is produced, not its values).
Known difference: Dropout-7..11's optional mask is all true here (the ONNX reference);
onnxruntime writes all false for those versions.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx

from irforge.errors import IrforgeError, quoted
from irforge.frontends.onnx.node_expansion import Expansion, rewritten
from irforge.frontends.onnx.registry import DEFAULT_DOMAINS, NodeContext
from irforge.weights.dtypes import from_xdsl

LEGACY_BROADCAST = {"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor", "Equal", "Greater", "Less"}
"""Ops whose opset-1/6 versions broadcast by `broadcast` / `axis` attributes."""

Upgrade = Callable[[NodeContext], NodeContext]


def upgrade_legacy(ctx: NodeContext) -> NodeContext:
    """`ctx` itself, or a context for the node's modern form (see the module docstring)."""
    if ctx.node.domain not in DEFAULT_DOMAINS:
        return ctx
    names = {a.name for a in ctx.node.attribute}
    if "consumed_inputs" in names and ctx.opset < 7:
        ctx = rewritten(ctx, drop=["consumed_inputs"])
    if ctx.node.op_type in LEGACY_BROADCAST and ctx.opset < 7:
        return _legacy_broadcast(ctx)
    upgrade = UPGRADES.get(ctx.node.op_type)
    return upgrade(ctx) if upgrade is not None else ctx


def legacy_error(ctx: NodeContext, attribute: str, value: object, why: str, fix: str) -> IrforgeError:
    return IrforgeError(f"attribute {attribute}={value!r} ({why}) is not supported", where=ctx.where, fix=fix, code="E139")


def _legacy_broadcast(ctx: NodeContext) -> NodeContext:
    broadcast = int(ctx.attr("broadcast", 0))
    if not broadcast or ctx.num_inputs < 2:
        return rewritten(ctx, drop=["broadcast", "axis"], opset=7)
    a_rank, b_shape = len(ctx.input_shape(0)), list(ctx.input_shape(1))
    axis = int(ctx.attr("axis", a_rank - len(b_shape)))
    if axis < 0:
        axis += a_rank
    if not 0 <= axis <= a_rank - len(b_shape):
        raise legacy_error(ctx, "axis", ctx.attr("axis"), f"B of shape {b_shape} does not fit A's rank {a_rank} from there",
                           fix=f"give an axis in [0, {a_rank - len(b_shape)}]")
    shape = [1] * axis + b_shape + [1] * (a_rank - axis - len(b_shape))
    expansion = Expansion(ctx)
    b = expansion.one("Reshape", [ctx.node.input[1], expansion.constant(shape, "int64")])
    return rewritten(ctx, drop=["broadcast", "axis"], opset=7, inputs=[ctx.node.input[0], b])


def _gemm(ctx: NodeContext) -> NodeContext:
    return rewritten(ctx, drop=["broadcast"], opset=7) if ctx.opset < 7 else ctx


def _is_test(ctx: NodeContext, what: str) -> NodeContext:
    """Before opset 7 the node says whether it runs for inference (is_test=1) or training."""
    if ctx.opset >= 7:
        return ctx
    is_test = int(ctx.attr("is_test", 0))
    if not is_test:
        raise legacy_error(ctx, "is_test", is_test, f"training mode: {what}",
                           fix="export the model for inference (is_test=1), or upgrade it with onnx.version_converter to opset 7+")
    return rewritten(ctx, drop=["is_test"])


def _batch_norm(ctx: NodeContext) -> NodeContext:
    ctx = _is_test(ctx, "batch statistics")
    if ctx.opset >= 9:
        return ctx
    if int(ctx.attr("spatial", 1)):
        return rewritten(ctx, drop=["spatial"])
    if any(ctx.output_used(i) for i in range(1, len(ctx.node.output))):
        raise legacy_error(ctx, "spatial", 0, "with the training outputs mean/var read", fix="export the model for inference")
    return _per_element_batch_norm(ctx)


def _per_element_batch_norm(ctx: NodeContext) -> NodeContext:
    """spatial=0: statistics per element of [C, D1, ...], written with broadcasting ops."""
    e = Expansion(ctx)
    x, scale, bias, mean, var = (ctx.node.input[i] for i in range(5))
    eps = e.constant(float(ctx.attr("epsilon", 1e-5)), np.dtype(from_xdsl(ctx.input_type(4).element_type)))
    normalized = e.one("Div", [e.one("Sub", [x, mean]), e.one("Sqrt", [e.one("Add", [var, eps])])])
    y = e.one("Add", [e.one("Mul", [normalized, scale]), bias])
    return rewritten(ctx, op_type="Identity", opset=13, inputs=[y], drop=[a.name for a in ctx.node.attribute])


def _dropout(ctx: NodeContext) -> NodeContext:
    return _is_test(ctx, "random masks")


def _upsample(ctx: NodeContext) -> NodeContext:
    if ctx.opset >= 7:
        return ctx
    mode = str(ctx.attr("mode", "NEAREST")).upper()
    if mode not in ("NEAREST", "BILINEAR"):
        raise legacy_error(ctx, "mode", mode, "Upsample-1 knows NEAREST and BILINEAR", fix="use NEAREST or BILINEAR")
    scales = [1.0, 1.0, float(ctx.attr("height_scale")), float(ctx.attr("width_scale"))]
    return rewritten(ctx, opset=7, drop=["height_scale", "width_scale"], set_attrs={"scales": scales, "mode": "linear" if mode == "BILINEAR" else "nearest"})


def _pad(ctx: NodeContext) -> NodeContext:
    if ctx.opset >= 2:
        return ctx
    return rewritten(ctx, opset=2, drop=["paddings"], set_attrs={"pads": [int(p) for p in ctx.attr("paddings")]})


def _cast(ctx: NodeContext) -> NodeContext:
    to = next((a for a in ctx.node.attribute if a.name == "to"), None)
    if to is not None and to.type == onnx.AttributeProto.STRING:  # Cast-1: a type name
        name = to.s.decode(errors="replace").upper()
        if name not in onnx.TensorProto.DataType.keys():
            raise legacy_error(ctx, "to", name, "not an ONNX element type name", fix="name an ONNX type (FLOAT, INT64, ...)")
        ctx = rewritten(ctx, opset=6, set_attrs={"to": onnx.TensorProto.DataType.Value(name)})
    if to is not None and int(ctx.attr("to")) == onnx.TensorProto.STRING:
        raise IrforgeError(f"Cast to {quoted('STRING')} is not supported: irforge has no string tensors", where=ctx.where,
                           fix="tokenise text outside the model (e.g. bidaf's inputs) and feed numeric tensors", code="E138")
    return ctx


def _mvn(ctx: NodeContext) -> NodeContext:
    names = {a.name for a in ctx.node.attribute}
    if not names & {"across_channels", "normalize_variance"}:
        return ctx
    across = int(ctx.attr("across_channels", 0))
    axes = [1, 2, 3] if across else [2, 3]
    if int(ctx.attr("normalize_variance", 1)):
        return rewritten(ctx, drop=["across_channels", "normalize_variance"], set_attrs={"axes": axes}, opset=9)
    e = Expansion(ctx)
    mean = e.one("ReduceMean", [ctx.node.input[0]], axes=axes, keepdims=1)
    return rewritten(ctx, op_type="Sub", opset=13, inputs=[ctx.node.input[0], mean], drop=sorted(names))


UPGRADES: dict[str, Upgrade] = {
    "Gemm": _gemm,
    "BatchNormalization": _batch_norm,
    "Dropout": _dropout,
    "Upsample": _upsample,
    "Pad": _pad,
    "Cast": _cast,
    "MeanVarianceNormalization": _mvn,
}
