"""A fused attention with `fill` written as the layers that compute it exactly.

The op's `fill` makes a masked key's logit the fill itself, whatever its score (the source's
Where(keep, s, fill), fused). OpenVINO's ScaledDotProductAttention has no such input: it adds
its mask, so s + fill is NaN where a masked key's score is +inf / NaN (the source's row is
finite), and a fill not far below every score lets masked keys through (fill -1e4 with scores
of a few thousand). So the writer spells the op out as the reference computes it
(`backends/reference/kernels/attention.py`), the layers ovc itself writes for the source's
Where:

    s = MatMul(q, k, transpose_b) * scale
    i1 mask:    logits = Select(mask, s, fill)
    float mask: logits = Select(mask <= fill, mask, s + mask)
    causal:     logits = Select(column > row, fill, s)      (the mask, if any, ignored)
    y = MatMul(SoftMax(logits, -1), v)

The fill constant keeps float32 in an FP16 IR (a rounded fill would move the masked-key
test of a float mask).
"""

from __future__ import annotations

import numpy as np

from irforge.backends.ir_xml.context import EmitContext, Port
from irforge.backends.ir_xml.emitters.elementwise import binary
from irforge.backends.ir_xml.graph import PortType, element_name, fmt_bool
from irforge.dialects.nn.attention import ScaledDotProductAttention

I64 = np.dtype(np.int64)


def broadcast_dims(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """Numpy broadcasting of two ports' dims (-1: known only at run time; the op's verifier
    has checked that they fit)."""
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + a, (1,) * (rank - len(b)) + b
    return tuple(y if x == 1 else x if y == 1 or x == y else max(x, y) for x, y in zip(a, b))


def selects_keys(op: ScaledDotProductAttention) -> bool:
    """Whether the op's `fill` replaces some key's score (a mask or the causal triangle to
    apply it to); without either the fill changes nothing and the opset layer is exact."""
    return op.masked_fill() is not None and (op.bool_prop("causal") or op.mask is not None)


def dim_scalar(ctx: EmitContext, port: Port, axis: int, name: str) -> Port:
    """Dim `axis` of `port` as an i64 scalar: a constant when known, else ShapeOf -> Gather."""
    size = port.dims[axis]
    if size >= 0:
        return ctx.const(np.array(size, I64), name)
    shape = ctx.single("ShapeOf", [port], PortType(I64, (len(port.dims),)), name=f"{name}/shape", data={"output_type": "i64"}, version="opset3")
    index, gather_axis = ctx.const(np.array(axis % len(port.dims), I64), f"{name}/index"), ctx.const(np.array(0, I64), f"{name}/axis")
    return ctx.single("Gather", [shape, index, gather_axis], PortType(I64, ()), name=name, data={"batch_dims": "0"}, version="opset8")


def scale_port(ctx: EmitContext, op: ScaledDotProductAttention, q: Port, extras: list[Port], name: str) -> Port:
    """The scores' factor: the property, the operand, else 1 / sqrt(E) (computed from q's
    shape when E is known only at run time, as the opset layer does)."""
    if op.scale is not None:
        return ctx.scalar(op.float_prop("scale"), q, f"{name}/scale")
    if len(extras) > 1:
        return extras[1]
    static = op.static_scale()
    if static is not None:
        return ctx.scalar(static, q, f"{name}/scale")
    head = dim_scalar(ctx, q, -1, f"{name}/head_size")
    size = ctx.single("Convert", [head], PortType(q.dtype, ()), name=f"{name}/head_size_float", data={"destination_type": element_name(q.dtype)})
    root = ctx.single("Sqrt", [size], size.type, name=f"{name}/head_size_sqrt")
    return binary(ctx, "Divide", ctx.scalar(1.0, q, f"{name}/one"), root, size.type, f"{name}/scale")


def fill_port(ctx: EmitContext, value: float, like: Port, name: str) -> Port:
    """The fill in the scores' type, kept unrounded in an FP16 IR."""
    with np.errstate(over="ignore"):  # float32's min in an f16 model: -inf, as the reference rounds it
        port = ctx.scalar(value, like, name)
    port.keep_precision = True
    return port


def causal_masked(ctx: EmitContext, scores: Port, name: str) -> Port:
    """[L, S] booleans, true above the diagonal (the keys the causal triangle masks)."""
    rows, cols = dim_scalar(ctx, scores, -2, f"{name}/rows"), dim_scalar(ctx, scores, -1, f"{name}/cols")
    zero, one = ctx.const(np.array(0, I64), f"{name}/start"), ctx.const(np.array(1, I64), f"{name}/step")
    length, width = scores.dims[-2], scores.dims[-1]
    row = ctx.single("Range", [zero, rows, one], PortType(I64, (length,)), name=f"{name}/row_index", data={"output_type": "i64"}, version="opset4")
    col = ctx.single("Range", [zero, cols, one], PortType(I64, (width,)), name=f"{name}/col_index", data={"output_type": "i64"}, version="opset4")
    column = ctx.single("Unsqueeze", [row, ctx.ints([1], f"{name}/row_axes")], PortType(I64, (length, 1)), name=f"{name}/row_column")
    return binary(ctx, "Greater", col, column, PortType(np.dtype(np.bool_), (length, width)), f"{name}/above_diagonal")


def decomposed(ctx: EmitContext, op: ScaledDotProductAttention, inputs: list[Port]) -> list[Port]:
    """The op as MatMul / Select / SoftMax / MatMul (see the module docstring)."""
    q, k, v, *extras = inputs
    name, fill = ctx.name(op), op.masked_fill()
    assert fill is not None
    batch = broadcast_dims(q.dims[:-2], k.dims[:-2])
    scores_type = PortType(q.dtype, (*batch, q.dims[-2], k.dims[-2]))
    data = {"transpose_a": fmt_bool(False), "transpose_b": fmt_bool(True)}
    scores = ctx.single("MatMul", [q, k], scores_type, name=f"{name}/scores", data=data)
    scaled = binary(ctx, "Multiply", scores, scale_port(ctx, op, q, extras, name), scores_type, f"{name}/scaled")
    fill_value = fill_port(ctx, fill, q, f"{name}/fill")
    select = {"auto_broadcast": "numpy"}
    if op.bool_prop("causal"):
        masked = causal_masked(ctx, scaled, name)
        logits = ctx.single("Select", [masked, fill_value, scaled], scores_type, name=f"{name}/logits", data=select)
    elif extras[0].dtype == np.bool_:
        mask = extras[0]
        logits_type = scores_type.with_dims(broadcast_dims(scores_type.dims, mask.dims))
        logits = ctx.single("Select", [mask, scaled, fill_value], logits_type, name=f"{name}/logits", data=select)
    else:
        mask = extras[0]
        logits_type = scores_type.with_dims(broadcast_dims(scores_type.dims, mask.dims))
        biased = binary(ctx, "Add", scaled, mask, logits_type, f"{name}/biased")
        masked = binary(ctx, "LessEqual", mask, fill_value, PortType(np.dtype(np.bool_), mask.dims), f"{name}/masked")
        logits = ctx.single("Select", [masked, mask, biased], logits_type, name=f"{name}/logits", data=select)
    probs = ctx.single("SoftMax", [logits], logits.type, name=f"{name}/probs", data={"axis": "-1"}, version="opset8")
    data = {"transpose_a": fmt_bool(False), "transpose_b": fmt_bool(False)}
    return [ctx.single("MatMul", [probs, v], PortType.of(op.output.type), name=name, data=data)]
