"""Emitters of the sliding-window ops: Convolution, Deconvolution and Pooling.

Grouped filters become the Group* operations, whose weights carry the group as a leading
axis; a bias becomes an Add of a [1, C, 1, ...] constant, as OpenVINO's own converters
produce it (and its CPU plugin fuses back).
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.emitters.elementwise import binary
from irforge.backends.ir_xml.graph import PortType, fmt_bool, fmt_ints
from irforge.dialects.nn.base import known
from irforge.dialects.nn.constant import Constant
from irforge.dialects.nn.conv import Convolution, Deconvolution, Pooling, WindowedOp, window_output_size
from irforge.dialects.nn.elementwise import Eltwise


def window_data(op: WindowedOp, pads: tuple[tuple[int, ...], tuple[int, ...]] | None = None, auto_pad: str | None = None) -> dict[str, str]:
    """strides, dilations, pads and auto_pad, with defaults spelled out (the IR needs all)."""
    begin, end = pads if pads is not None else (op.window("pads_begin", 0), op.window("pads_end", 0))
    return {
        "strides": fmt_ints(op.window("strides", 1)),
        "dilations": fmt_ints(op.window("dilations", 1)),
        "pads_begin": fmt_ints(begin),
        "pads_end": fmt_ints(end),
        "auto_pad": auto_pad or op.str_prop("auto_pad"),
    }


def add_bias(ctx: EmitContext, y: Port, bias: Port, name: str) -> Port:
    """y + bias[c] along axis 1 of y."""
    channels = bias.dims[0]
    b = ctx.reshape(bias, (1, channels) + (1,) * (y.type.rank - 2), f"{name}/reshape")
    return ctx.single("Add", [y, b], y.type, name=name, data={"auto_broadcast": "numpy"})


def grouped_weights(ctx: EmitContext, w: Port, group: int, split_axis: int, name: str) -> Port:
    """Weights with the group as a new leading axis, taken out of axis `split_axis` (0 for
    Convolution's O, 0 for Deconvolution's I as well: both store groups outermost)."""
    dims = list(w.dims)
    dims[split_axis] //= group
    return ctx.reshape(w, (group, *dims), name)


def hits_ov_conv_input_scale_bug(op: Convolution) -> bool:
    """Whether `op`'s data input is an `nn.eltwise` mul / div by a constant that varies over
    the spatial axes: OpenVINO 2026.4.1's CPU plugin folds such a constant into the weights
    whenever its shape broadcasts to theirs (a kernel as large as the map: CSATv2's 7x7
    convolution after its adaptive pool's per-position divisor), which is only right for a
    constant per input channel (docs/STATUS.md, "timm and torchvision sweep")."""
    producer = op.operands[0].owner
    if not isinstance(producer, Eltwise) or producer.str_prop("operation") not in ("mul", "div"):
        return False
    x_type = op.operands[0].type
    assert isinstance(x_type, TensorType)
    rank = len(x_type.get_shape())
    for operand in producer.operands:
        if not isinstance(operand.owner, Constant) or not isinstance(operand.type, TensorType):
            continue
        shape = operand.type.get_shape()
        # right-aligned (numpy broadcasting) against x: a dim > 1 on a spatial axis (2...)
        if any(shape[i - (rank - len(shape))] != 1 for i in range(2, rank) if i - (rank - len(shape)) >= 0):
            return True
    return False


@ir_xml_emitter(Convolution)
def convolution(ctx: EmitContext, op: Convolution, inputs: list[Port]) -> list[Port]:
    x, w, *bias = inputs
    out = PortType.of(op.output.type)
    name = ctx.name(op, "conv") if bias else ctx.name(op)
    if hits_ov_conv_input_scale_bug(op):
        # Maximum(x, x) is exactly x (NaN included) and keeps OpenVINO's CPU plugin from
        # folding the spatially varying scale into the weights (a plain Add of 0 does not)
        x = binary(ctx, "Maximum", x, x, x.type, ctx.name(op, "ov_fold_barrier"))
    group = op.int_prop("group")
    if group == 1:
        y = ctx.single("Convolution", [x, w], out, name=name, data=window_data(op))
    else:
        gw = grouped_weights(ctx, w, group, 0, ctx.name(op, "weights"))
        y = ctx.single("GroupConvolution", [x, gw], out, name=name, data=window_data(op))
    return [add_bias(ctx, y, bias[0], ctx.name(op)) if bias else y]


@ir_xml_emitter(Deconvolution)
def deconvolution(ctx: EmitContext, op: Deconvolution, inputs: list[Port]) -> list[Port]:
    x, w, *bias = inputs
    out = PortType.of(op.output.type)
    in_dims, auto_pad = x.dims[2:], op.str_prop("auto_pad")
    data = window_data(op)
    appended = (0,) * len(in_dims)
    if auto_pad in ("same_upper", "same_lower") and known(*in_dims):
        # explicit crops, the same on every backend; a short output gets zeros appended
        begin, end = op.transposed_pads(w.dims[2:], in_dims)
        appended = tuple(max(-e, 0) for e in end)
        data = window_data(op, (begin, tuple(max(e, 0) for e in end)), "explicit")
    data["output_padding"] = fmt_ints(op.window("output_padding", 0))
    cropped = out.with_dims((*out.dims[:2], *(d - a for d, a in zip(out.dims[2:], appended))))
    name = ctx.name(op, "deconv") if bias or any(appended) else ctx.name(op)
    group = op.int_prop("group")
    if group == 1:
        y = ctx.single("ConvolutionBackpropData", [x, w], cropped, name=name, data=data)
    else:
        gw = grouped_weights(ctx, w, group, 0, ctx.name(op, "weights"))
        y = ctx.single("GroupConvolutionBackpropData", [x, gw], cropped, name=name, data=data)
    if any(appended):
        pads = [ctx.ints((0,) * out.rank, ctx.name(op, "pads_begin")), ctx.ints((0, 0, *appended), ctx.name(op, "pads_end"))]
        value = ctx.scalar(0.0, y, ctx.name(op, "pad_value"))
        pad_name = ctx.name(op, "pad") if bias else ctx.name(op)
        y = ctx.single("Pad", [y, *pads, value], out, name=pad_name, data={"pad_mode": "constant"}, version="opset12")
    return [add_bias(ctx, y, bias[0], ctx.name(op)) if bias else y]


def needs_ceil_torch(op: Pooling, in_dims: tuple[int, ...]) -> bool:
    """Whether OpenVINO's plain ceil rounding would keep a last window that starts in the end
    padding, which `nn` (like ONNX and PyTorch) drops: then opset14's ceil_torch is needed."""
    if op.str_prop("rounding_type") != "ceil" or op.str_prop("auto_pad") != "explicit":
        return False
    if not known(*in_dims):
        return True
    pads = zip(op.window("pads_begin", 0), op.window("pads_end", 0))
    for size, k, s, d, p in zip(in_dims, op.ints("kernel"), op.window("strides", 1), op.window("dilations", 1), pads):
        plain = -(-(size + p[0] + p[1] - d * (k - 1) - 1) // s) + 1
        if plain != window_output_size(size, k, s, d, p, "explicit", ceil=True):
            return True
    return False


def counts_overhang(op: Pooling, in_dims: tuple[int, ...]) -> bool:
    """Whether padding counts (exclude_pad false) and a ceil-rounded last window reaches past
    the end padding: OpenVINO then divides by the whole kernel, `nn` only by the input and
    padding elements in the window."""
    if op.str_prop("rounding_type") != "ceil" or op.bool_prop("exclude_pad") or op.str_prop("auto_pad") != "explicit":
        return False
    return known(*in_dims) and any(overhang(op, in_dims))


def overhang(op: Pooling, in_dims: tuple[int, ...]) -> tuple[int, ...]:
    """How far, per axis, the last window reaches past the end padding."""
    out = op.output_spatial(op.ints("kernel"), True, in_dims)
    pads = zip(op.window("pads_begin", 0), op.window("pads_end", 0))
    return tuple(max((o - 1) * s + k - (size + b + e), 0) for o, s, k, size, (b, e) in zip(out, op.window("strides", 1), op.ints("kernel"), in_dims, pads))


def avg_pool_padded(ctx: EmitContext, op: Pooling, x: Port, out: PortType) -> Port:
    """The padding made real zeros (so it counts), then an average that excludes its own
    padding: the overhang, which `nn` does not count."""
    begin, end = op.window("pads_begin", 0), op.window("pads_end", 0)
    padded_dims = (*x.dims[:2], *(d + b + e for d, b, e in zip(x.dims[2:], begin, end)))
    pads = [ctx.ints((0, 0, *begin), ctx.name(op, "pads_begin")), ctx.ints((0, 0, *end), ctx.name(op, "pads_end"))]
    padded = ctx.single("Pad", [x, *pads, ctx.scalar(0.0, x, ctx.name(op, "pad_value"))], x.type.with_dims(padded_dims), name=ctx.name(op, "pad"), data={"pad_mode": "constant"}, version="opset12")
    data = {
        "strides": fmt_ints(op.window("strides", 1)),
        "pads_begin": fmt_ints((0,) * len(begin)),
        "pads_end": fmt_ints(overhang(op, x.dims[2:])),
        "kernel": fmt_ints(op.ints("kernel")),
        "rounding_type": "floor",
        "auto_pad": "explicit",
        "exclude-pad": "true",
    }
    return ctx.single("AvgPool", [padded], out, name=ctx.name(op), data=data)


@ir_xml_emitter(Pooling)
def pooling(ctx: EmitContext, op: Pooling, inputs: list[Port]) -> list[Port]:
    x = inputs[0]
    out = PortType.of(op.output.type)
    is_max = op.str_prop("method") == "max"
    if op.bool_prop("global_pool"):
        axes = ctx.ints(range(2, x.type.rank), ctx.name(op, "axes"))
        return [ctx.single("ReduceMax" if is_max else "ReduceMean", [x, axes], out, name=ctx.name(op), data={"keep_dims": "true"})]
    torch = needs_ceil_torch(op, x.dims[2:])
    data = window_data(op)
    data["kernel"] = fmt_ints(op.ints("kernel"))
    data["rounding_type"] = "ceil_torch" if torch else op.str_prop("rounding_type")
    if not is_max and counts_overhang(op, x.dims[2:]):
        return [avg_pool_padded(ctx, op, x, out)]
    if not is_max:
        del data["dilations"]
        data["exclude-pad"] = fmt_bool(op.bool_prop("exclude_pad"))
        return [ctx.single("AvgPool", [x], out, name=ctx.name(op), data=data, version="opset14" if torch else "opset1")]
    data.update(index_element_type="i64", axis="0")
    outputs = [out, out.with_dtype("int64")]
    return [ctx.layer("MaxPool", [x], outputs, name=ctx.name(op), data=data, version="opset14" if torch else "opset8")[0]]
