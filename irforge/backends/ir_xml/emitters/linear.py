"""Emitters of the linear ops and the normalisations.

FullyConnected becomes MatMul(transpose_b) + Add and ScaleShift Multiply + Add, the
decompositions OpenVINO's converters produce; per-channel vectors are reshaped to broadcast
along their axis.
"""

from __future__ import annotations

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.emitters.elementwise import binary
from irforge.backends.ir_xml.graph import PortType, fmt_bool, fmt_float
from irforge.dialects.nn.linear import BatchNormalization, FullyConnected, MatMul, Power, ScaleShift
from irforge.dialects.nn.normalization import GRN, MVN, Norm, Normalize, SoftMax


def matmul_data(transpose_a: bool, transpose_b: bool) -> dict[str, str]:
    return {"transpose_a": fmt_bool(transpose_a), "transpose_b": fmt_bool(transpose_b)}


@ir_xml_emitter(FullyConnected)
def fully_connected(ctx: EmitContext, op: FullyConnected, inputs: list[Port]) -> list[Port]:
    x, w, *bias = inputs
    out = PortType.of(op.output.type)
    name = ctx.name(op, "matmul") if bias else ctx.name(op)
    y = ctx.single("MatMul", [x, w], out, name=name, data=matmul_data(False, True))
    if bias:
        y = binary(ctx, "Add", y, bias[0], out, ctx.name(op))
    return [y]


@ir_xml_emitter(MatMul)
def matmul(ctx: EmitContext, op: MatMul, inputs: list[Port]) -> list[Port]:
    data = matmul_data(op.bool_prop("transpose_a"), op.bool_prop("transpose_b"))
    return [ctx.single("MatMul", inputs, PortType.of(op.output.type), name=ctx.name(op), data=data)]


def along_axis(ctx: EmitContext, vector: Port, axis: int, rank: int, name: str) -> Port:
    """A 1-D vector reshaped to broadcast along `axis` of a rank-`rank` tensor."""
    if axis == rank - 1:
        return vector
    return ctx.reshape(vector, (vector.dims[0],) + (1,) * (rank - axis - 1), name)


@ir_xml_emitter(ScaleShift)
def scale_shift(ctx: EmitContext, op: ScaleShift, inputs: list[Port]) -> list[Port]:
    x, scale, shift = inputs
    axis, rank = op.channel_axis(), x.type.rank
    scale = along_axis(ctx, scale, axis, rank, ctx.name(op, "scale"))
    shift = along_axis(ctx, shift, axis, rank, ctx.name(op, "shift"))
    y = binary(ctx, "Multiply", x, scale, x.type, ctx.name(op, "mul"))
    return [binary(ctx, "Add", y, shift, x.type, ctx.name(op))]


@ir_xml_emitter(BatchNormalization)
def batch_norm(ctx: EmitContext, op: BatchNormalization, inputs: list[Port]) -> list[Port]:
    data = {"epsilon": fmt_float(op.float_prop("epsilon"))}
    return [ctx.single("BatchNormInference", inputs, inputs[0].type, name=ctx.name(op), data=data, version="opset5")]


@ir_xml_emitter(Power)
def power(ctx: EmitContext, op: Power, inputs: list[Port]) -> list[Port]:
    """scale * x^power + shift, leaving out the steps that change nothing."""
    x = inputs[0]
    steps = [
        ("Power", op.float_prop("power"), 1.0, "pow"),
        ("Multiply", op.float_prop("scale"), 1.0, "scale"),
        ("Add", op.float_prop("shift"), 0.0, "shift"),
    ]
    needed = [s for s in steps if s[1] != s[2]]
    for i, (ov_type, value, _, suffix) in enumerate(needed):
        name = ctx.name(op) if i == len(needed) - 1 else ctx.name(op, suffix)
        x = binary(ctx, ov_type, x, ctx.scalar(value, x, ctx.name(op, suffix + "_value")), x.type, name)
    return [x]


@ir_xml_emitter(SoftMax)
def softmax(ctx: EmitContext, op: SoftMax, inputs: list[Port]) -> list[Port]:
    data = {"axis": str(op.int_prop("axis"))}
    if op.bool_prop("log"):
        return [ctx.single("LogSoftmax", inputs, inputs[0].type, name=ctx.name(op), data=data, version="opset5")]
    return [ctx.single("SoftMax", inputs, inputs[0].type, name=ctx.name(op), data=data, version="opset8")]


@ir_xml_emitter(Norm)
def lrn(ctx: EmitContext, op: Norm, inputs: list[Port]) -> list[Port]:
    x = inputs[0]
    axes = ctx.ints(op.window_axes(), ctx.name(op, "axes"))
    data = {
        "alpha": fmt_float(op.float_prop("alpha")),
        "beta": fmt_float(op.float_prop("beta")),
        "bias": fmt_float(op.float_prop("bias")),
        "size": str(op.int_prop("size")),
    }
    return [ctx.single("LRN", [x, axes], x.type, name=ctx.name(op), data=data)]


@ir_xml_emitter(MVN)
def mvn(ctx: EmitContext, op: MVN, inputs: list[Port]) -> list[Port]:
    x = inputs[0]
    data = {
        "eps": fmt_float(op.float_prop("eps")),
        "normalize_variance": fmt_bool(op.bool_prop("normalize_variance")),
        "eps_mode": op.str_prop("eps_mode").upper(),
    }
    axes = ctx.ints(op.reduced_axes(), ctx.name(op, "axes"))
    return [ctx.single("MVN", [x, axes], x.type, name=ctx.name(op), data=data, version="opset6")]


@ir_xml_emitter(Normalize)
def normalize(ctx: EmitContext, op: Normalize, inputs: list[Port]) -> list[Port]:
    x, *scale = inputs
    axes = ctx.ints(op.norm_axes(), ctx.name(op, "axes"))
    data = {"eps": fmt_float(op.float_prop("eps")), "eps_mode": "add"}
    name = ctx.name(op, "l2") if scale else ctx.name(op)
    y = ctx.single("NormalizeL2", [x, axes], x.type, name=name, data=data)
    if not scale:
        return [y]
    factor = scale[0] if scale[0].dims[0] == 1 else along_axis(ctx, scale[0], 1, x.type.rank, ctx.name(op, "scale"))
    return [binary(ctx, "Multiply", y, factor, x.type, ctx.name(op))]


@ir_xml_emitter(GRN)
def grn(ctx: EmitContext, op: GRN, inputs: list[Port]) -> list[Port]:
    data = {"bias": fmt_float(op.float_prop("bias"))}
    return [ctx.single("GRN", inputs, inputs[0].type, name=ctx.name(op), data=data)]
