"""Emitters of the data movement ops, the reductions and Resample.

`nn` keeps shape-like parameters as properties; the opset takes them as i64 Const inputs,
so each emitter turns its properties into those constants.
"""

from __future__ import annotations

import math

import numpy as np

from irforge.backends.ir_xml.context import EmitContext, Port, ir_xml_emitter
from irforge.backends.ir_xml.emitters.elementwise import binary
from irforge.backends.ir_xml.graph import PortType, fmt_bool, fmt_float, fmt_ints
from irforge.dialects.nn.elementwise import ARITHMETIC, Eltwise
from irforge.dialects.nn.indexing import GatherElements
from irforge.dialects.nn.reduce import ArgMax, Reduce
from irforge.dialects.nn.resample import Resample, ResampleBy, ResampleTo
from irforge.dialects.nn.shape import Concat, Flatten, Gather, Pad, Permute, Reshape, Slice, Split, Squeeze, Tile, Unsqueeze
from irforge.errors import IrforgeError


def out_type(op, index: int = 0) -> PortType:  # type: ignore[no-untyped-def]
    return PortType.of(op.results[index].type)


@ir_xml_emitter(Concat)
def concat(ctx: EmitContext, op: Concat, inputs: list[Port]) -> list[Port]:
    return [ctx.single("Concat", inputs, out_type(op), name=ctx.name(op), data={"axis": str(op.int_prop("axis"))})]


@ir_xml_emitter(Split)
def split(ctx: EmitContext, op: Split, inputs: list[Port]) -> list[Port]:
    axis = ctx.const(np.array(op.int_prop("axis"), np.int64), ctx.name(op, "axis"))
    lengths = ctx.ints(op.ints("split_lengths"), ctx.name(op, "split_lengths"))
    outputs = [out_type(op, i) for i in range(len(op.results))]
    return ctx.layer("VariadicSplit", [inputs[0], axis, lengths], outputs, name=ctx.name(op))


def reshape_layer(ctx: EmitContext, x: Port, spec: tuple[int, ...], out: PortType, special_zero: bool, name: str) -> Port:
    shape = ctx.ints(spec, f"{name}/shape")
    return ctx.single("Reshape", [x, shape], out, name=name, data={"special_zero": fmt_bool(special_zero)})


@ir_xml_emitter(Reshape)
def reshape(ctx: EmitContext, op: Reshape, inputs: list[Port]) -> list[Port]:
    return [reshape_layer(ctx, inputs[0], op.ints("shape"), out_type(op), op.bool_prop("special_zero"), ctx.name(op))]


@ir_xml_emitter(Flatten)
def flatten(ctx: EmitContext, op: Flatten, inputs: list[Port]) -> list[Port]:
    dims, axis = inputs[0].dims, op.flatten_axis()
    before, after = dims[:axis], dims[axis:]
    if all(d >= 0 for d in dims):  # both products: a -1 is ambiguous for an empty tensor (OpenVINO made [0, 4] of [0, -1] [0, 1])
        spec, zero = (math.prod(before), math.prod(after)), False
    elif all(d >= 0 for d in before):
        spec, zero = (math.prod(before), -1), False
    elif axis == 1:
        spec, zero = (0, -1), True  # special_zero copies the dynamic batch size
    elif all(d >= 0 for d in after):
        spec, zero = (-1, math.prod(after)), False
    else:  # both sides dynamic (Mask R-CNN's per-box masks): the two products at run time
        return [flatten_run_time(ctx, op, inputs[0], axis)]
    return [reshape_layer(ctx, inputs[0], spec, out_type(op), zero, ctx.name(op))]


def flatten_run_time(ctx: EmitContext, op: Flatten, x: Port, axis: int) -> Port:
    """Reshape to [prod(dims[:axis]), prod(dims[axis:])], both read from ShapeOf(x)."""
    name, rank = ctx.name(op), x.type.rank
    dims = ctx.single("ShapeOf", [x], PortType(np.dtype(np.int64), (rank,)), name=f"{name}/dims", data={"output_type": "i64"}, version="opset3")
    parts = []
    for side, (begin, end) in (("outer", (0, axis)), ("inner", (axis, rank))):
        index = ctx.ints(range(begin, end), f"{name}/{side}_index")
        gather_axis = ctx.const(np.array(0, np.int64), f"{name}/{side}_gather_axis")
        picked = ctx.single("Gather", [dims, index, gather_axis], PortType(np.dtype(np.int64), (end - begin,)),
                            name=f"{name}/{side}_dims", data={"batch_dims": "0"}, version="opset8")
        reduce_axis = ctx.ints([0], f"{name}/{side}_reduce_axis")
        parts.append(ctx.single("ReduceProd", [picked, reduce_axis], PortType(np.dtype(np.int64), (1,)), name=f"{name}/{side}", data={"keep_dims": "true"}))
    target = ctx.single("Concat", parts, PortType(np.dtype(np.int64), (2,)), name=f"{name}/shape", data={"axis": "0"})
    return ctx.single("Reshape", [x, target], out_type(op), name=name, data={"special_zero": "false"})


@ir_xml_emitter(Permute)
def permute(ctx: EmitContext, op: Permute, inputs: list[Port]) -> list[Port]:
    order = ctx.ints(op.ints("order"), ctx.name(op, "order"))
    return [ctx.single("Transpose", [inputs[0], order], out_type(op), name=ctx.name(op))]


@ir_xml_emitter(Squeeze)
def squeeze(ctx: EmitContext, op: Squeeze, inputs: list[Port]) -> list[Port]:
    axes = op.squeezed_axes()
    if not axes:
        return [inputs[0]]
    return [ctx.single("Squeeze", [inputs[0], ctx.ints(axes, ctx.name(op, "axes"))], out_type(op), name=ctx.name(op))]


@ir_xml_emitter(Unsqueeze)
def unsqueeze(ctx: EmitContext, op: Unsqueeze, inputs: list[Port]) -> list[Port]:
    axes = ctx.ints(op.ints("axes"), ctx.name(op, "axes"))
    return [ctx.single("Unsqueeze", [inputs[0], axes], out_type(op), name=ctx.name(op))]


@ir_xml_emitter(Slice)
def slice_(ctx: EmitContext, op: Slice, inputs: list[Port]) -> list[Port]:
    specs = op.slice_specs()
    if not specs:
        return [inputs[0]]
    shape = op.operand_shape(0)
    if feeds_gather_elements_data(op) and all(d >= 0 for d in shape) and all(step > 0 for _, _, step in specs.values()):
        # OpenVINO 2026.4 drops a Slice-8 from 0 on a non-gather axis that feeds GatherElements'
        # data, then refuses the GatherElements (data and indices dims differ; its own ONNX
        # frontend fails the same on YOLO26's pose/seg/obb heads); a StridedSlice survives
        bounds = op.bounds(shape)
        parts = [ctx.ints([b[i] for b in bounds], ctx.name(op, part)) for i, part in enumerate(("begin", "end", "stride"))]
        masks = fmt_ints([0] * len(shape))
        return [ctx.single("StridedSlice", [inputs[0], *parts], out_type(op), name=ctx.name(op), data={"begin_mask": masks, "end_mask": masks})]
    axes = sorted(specs)
    parts = [ctx.ints([specs[a][i] for a in axes], ctx.name(op, part)) for i, part in enumerate(("start", "stop", "step"))]
    return [ctx.single("Slice", [inputs[0], *parts, ctx.ints(axes, ctx.name(op, "axes"))], out_type(op), name=ctx.name(op), version="opset8")]


def feeds_gather_elements_data(op: Slice) -> bool:
    return any(isinstance(use.operation, GatherElements) and use.index == 0 for use in op.results[0].uses)


@ir_xml_emitter(Tile)
def tile(ctx: EmitContext, op: Tile, inputs: list[Port]) -> list[Port]:
    repeats = ctx.ints(op.ints("repeats"), ctx.name(op, "repeats"))
    return [ctx.single("Tile", [inputs[0], repeats], out_type(op), name=ctx.name(op))]


@ir_xml_emitter(Pad)
def pad(ctx: EmitContext, op: Pad, inputs: list[Port]) -> list[Port]:
    x, mode = inputs[0], op.str_prop("mode")
    operands = [x, ctx.ints(op.ints("pads_begin"), ctx.name(op, "pads_begin")), ctx.ints(op.ints("pads_end"), ctx.name(op, "pads_end"))]
    # the value is used by constant mode only, but OpenVINO adds a Const of its own if absent
    with np.errstate(all="ignore"):
        value = np.array(op.float_prop("value")).astype(x.dtype)
    operands.append(ctx.const(value, ctx.name(op, "pad_value")))
    return [ctx.single("Pad", operands, out_type(op), name=ctx.name(op), data={"pad_mode": mode}, version="opset12")]


@ir_xml_emitter(Gather)
def gather(ctx: EmitContext, op: Gather, inputs: list[Port]) -> list[Port]:
    axis = ctx.const(np.array(op.int_prop("axis"), np.int64), ctx.name(op, "axis"))
    data = {"batch_dims": str(op.int_prop("batch_dims"))}
    return [ctx.single("Gather", [*inputs, axis], out_type(op), name=ctx.name(op), data=data, version="opset8")]


REDUCTIONS: dict[str, tuple[str, str]] = {
    "mean": ("ReduceMean", "opset1"), "sum": ("ReduceSum", "opset1"), "max": ("ReduceMax", "opset1"),
    "min": ("ReduceMin", "opset1"), "prod": ("ReduceProd", "opset1"), "l1": ("ReduceL1", "opset4"),
    "l2": ("ReduceL2", "opset4"), "sum_square": ("ReduceSum", "opset1"), "log_sum": ("ReduceSum", "opset1"),
    "log_sum_exp": ("ReduceSum", "opset1"),
}  # fmt: skip
BEFORE = {"sum_square": "Square", "log_sum_exp": "Exp"}
AFTER = {"log_sum": "Log", "log_sum_exp": "Log"}


def hits_ov_reduce_eltwise_bug(op: Reduce, dims: tuple[int, ...]) -> bool:
    """Whether `op` is the form OpenVINO 2026.4.1's CPU plugin computes wrong when followed by
    an arithmetic Eltwise: a Reduce (keep_dims either) of a rank-3 input over its last axis
    only, with a batch that is not known to be 1, feeding an arithmetic `nn.eltwise`."""
    if len(dims) != 3 or dims[0] == 1:
        return False
    if [a % 3 for a in op.reduced_axes()] != [2]:
        return False
    return any(isinstance(use.operation, Eltwise) and use.operation.str_prop("operation") in ARITHMETIC for use in op.results[0].uses)


@ir_xml_emitter(Reduce)
def reduce(ctx: EmitContext, op: Reduce, inputs: list[Port]) -> list[Port]:
    operation, x, out = op.str_prop("operation"), inputs[0], out_type(op)
    dims = x.dims
    if all(d >= 0 for d in dims) and any(dims[a] == 0 for a in op.reduced_axes()):
        # over no elements the result is the identity whatever the data; OpenVINO's ReduceMax
        # gives the lowest finite float there, not -inf: write the identity as a constant
        from irforge.backends.reference.kernels.reduce import reduce as reference_reduce

        with np.errstate(divide="ignore", invalid="ignore"):
            identity = np.asarray(reference_reduce(op, np.zeros(dims, x.dtype)), x.dtype)
        return [ctx.const(identity, ctx.name(op))]
    if operation in BEFORE:
        if BEFORE[operation] == "Square":
            x = binary(ctx, "Multiply", x, x, x.type, ctx.name(op, "square"))
        else:
            x = ctx.single("Exp", [x], x.type, name=ctx.name(op, "exp"))
    ov_type, version = REDUCTIONS[operation]
    axes = ctx.ints(op.reduced_axes(), ctx.name(op, "axes"))
    name = ctx.name(op, "reduce") if operation in AFTER else ctx.name(op)
    if hits_ov_reduce_eltwise_bug(op, dims):
        # OpenVINO 2026.4.1's CPU plugin applies a per-channel constant of a following
        # element-wise op along the batch axis for this form (docs/STATUS.md, "OpenVINO
        # Reduce + eltwise bug"); keep_dims=true + Squeeze computes the same and is right there;
        # with keep_dims=true a Maximum(y, y) (exactly y, NaN included) keeps OpenVINO from it
        kept = out.with_dims([1 if i == len(dims) - 1 else d for i, d in enumerate(dims)])
        y = ctx.single(ov_type, [x, axes], kept, name=ctx.name(op, "keep"), data={"keep_dims": "true"}, version=version)
        if op.bool_prop("keep_dims"):
            y = binary(ctx, "Maximum", y, y, out, name)
        else:
            squeeze_axes = ctx.ints([len(dims) - 1], ctx.name(op, "squeeze_axes"))
            y = ctx.single("Squeeze", [y, squeeze_axes], out, name=name)
    else:
        y = ctx.single(ov_type, [x, axes], out, name=name, data={"keep_dims": fmt_bool(op.bool_prop("keep_dims"))}, version=version)
    if operation in AFTER:
        y = ctx.single("Log", [y], out, name=ctx.name(op))
    return [y]


@ir_xml_emitter(ArgMax)
def argmax(ctx: EmitContext, op: ArgMax, inputs: list[Port]) -> list[Port]:
    """TopK with k = 1 (stable, so ties give the first index); the last index of ties is the
    first of the input reversed along the axis, counted from the end."""
    x, axis = inputs[0], op.reduced_axis()
    last, size = op.bool_prop("select_last_index"), x.dims[axis]
    if last and size < 0:
        raise IrforgeError(f"{op.name} '{ctx.name(op)}': select_last_index needs a static size of axis {axis}", fix="give static input shapes", code="E850")
    if last:
        parts = [ctx.ints([v], ctx.name(op, p)) for v, p in ((-1, "start"), (np.iinfo(np.int64).min, "stop"), (-1, "step"), (axis, "axes"))]
        x = ctx.single("Slice", [x, *parts], x.type, name=ctx.name(op, "reverse"), version="opset8")
    kept = x.type.with_dims(1 if i == axis else d for i, d in enumerate(x.dims))
    data = {"axis": str(axis), "mode": op.str_prop("mode"), "sort": "value", "index_element_type": "i64", "stable": "true"}
    k = ctx.const(np.array(1, np.int64), ctx.name(op, "k"))
    final = op.bool_prop("keep_dims") and not last
    outputs = [kept, kept.with_dtype(np.int64)]
    index = ctx.layer("TopK", [x, k], outputs, name=ctx.name(op, "" if final else "topk"), data=data, version="opset11")[1]
    if last:
        last_index = ctx.const(np.array(size - 1, np.int64), ctx.name(op, "last"))
        name = ctx.name(op, "" if op.bool_prop("keep_dims") else "from_end")
        index = binary(ctx, "Subtract", last_index, index, index.type, name)
    if op.bool_prop("keep_dims"):
        return [index]
    return [ctx.single("Squeeze", [index, ctx.ints([axis], ctx.name(op, "axes"))], out_type(op), name=ctx.name(op))]


RESAMPLE_MODES = {"nearest": "nearest", "linear": "linear_onnx", "cubic": "cubic"}


def _interpolate_data(op: Resample | ResampleTo | ResampleBy, rank: int, shape_calculation_mode: str) -> dict[str, str]:
    """Interpolate-11's attributes for a resample of `rank` dims (no padding, no antialias)."""
    return {
        "mode": RESAMPLE_MODES[op.str_prop("mode")],
        "shape_calculation_mode": shape_calculation_mode,
        "coordinate_transformation_mode": op.str_prop("coordinate_transformation_mode"),
        "nearest_mode": op.str_prop("nearest_mode"),
        "antialias": "false",
        "pads_begin": fmt_ints((0,) * rank),
        "pads_end": fmt_ints((0,) * rank),
        "cube_coeff": fmt_float(op.float_prop("cubic_coeff_a")),
    }


@ir_xml_emitter(Resample)
def resample(ctx: EmitContext, op: Resample, inputs: list[Port]) -> list[Port]:
    x = inputs[0]
    if op.scales is not None:
        target, mode = ctx.const(np.asarray(op.floats("scales"), np.float32), ctx.name(op, "scales")), "scales"
    else:
        target, mode = ctx.ints(op.ints("sizes"), ctx.name(op, "sizes")), "sizes"
    data = _interpolate_data(op, x.type.rank, mode)
    axes = ctx.ints(range(x.type.rank), ctx.name(op, "axes"))
    return [ctx.single("Interpolate", [x, target, axes], out_type(op), name=ctx.name(op), data=data, version="opset11")]


@ir_xml_emitter(ResampleTo, ResampleBy)
def resample_run_time(ctx: EmitContext, op: ResampleTo | ResampleBy, inputs: list[Port]) -> list[Port]:
    """Interpolate-11 by sizes (nn.resample_to) or by scales (nn.resample_by), that input
    computed at run time."""
    x = inputs[0]
    data = _interpolate_data(op, x.type.rank, "sizes" if isinstance(op, ResampleTo) else "scales")
    axes = ctx.ints(op.resized_axes(), ctx.name(op, "axes"))
    return [ctx.single("Interpolate", [x, inputs[1], axes], out_type(op), name=ctx.name(op), data=data, version="opset11")]
