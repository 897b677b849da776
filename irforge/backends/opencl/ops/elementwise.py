"""OpenCL lowerings of the element-wise ops: activations, Power, PReLU, Eltwise, Select,
Convert, ScaleShift, BatchNormalization (Identity is a view of its input)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation, SSAValue

from irforge.backends.cpu.lower import Buffer, dtype_of, shape_of
from irforge.backends.opencl.codegen.common import Shape, flit, numel, storage_type, value_type
from irforge.backends.opencl.codegen.pointwise import BINARY_FLOAT, COMPARE, LOGICAL, UNARY, pointwise_body, pointwise_params
from irforge.backends.opencl.lower import OclLowering, f32_only, opencl_lowering
from irforge.backends.opencl.ops.launch import launch_1d
from irforge.dialects.nn import Activation, BatchNormalization, Clamp, Convert, Eltwise, Identity, Power, PReLU, ReLU, ScaleShift, Select

BOOL = np.dtype(np.bool_)
F32 = np.dtype(np.float32)
F16 = np.dtype(np.float16)

Operand = tuple[Buffer, Shape, str]


def pointwise(ctx: OclLowering, prefix: str, operands: Sequence[Operand], result: SSAValue, out_type: str, store: str) -> None:
    """A kernel loading operand i (broadcast to the result) as `a{i}`, then running `store`
    (which writes `y[gid]`)."""
    out_shape = shape_of(result)
    loads = [f"const {t} a{i} = p{i}[{{off}}];" for i, (_, _, t) in enumerate(operands)]
    body = pointwise_body(out_shape, [s for _, s, _ in operands], loads, store)
    name = ctx.add_kernel(prefix, pointwise_params([t for _, _, t in operands], out_type), body)
    out = ctx.result(result)
    launch_1d(ctx, name, numel(out_shape), [b for b, _, _ in operands] + [out])


def operand(ctx: OclLowering, op: Operation, index: int, ctype: str = "float", shape: Shape | None = None) -> Operand:
    value = op.operands[index]
    return ctx.values[value], shape if shape is not None else shape_of(value), ctype


def unary_f32(ctx: OclLowering, op: Operation, prefix: str, expr: str, consts: str = "") -> None:
    pointwise(ctx, prefix, [operand(ctx, op, 0)], op.results[0], "float", f"{consts}const float x = a0; y[gid] = {expr};")


@opencl_lowering(ReLU)
def relu(ctx: OclLowering, op: ReLU) -> None:
    unary_f32(ctx, op, "relu", f"x >= 0.0f ? x : x * {flit(op.float_prop('negative_slope'))}")


@opencl_lowering(Clamp)
def clamp(ctx: OclLowering, op: Clamp) -> None:
    low, high = flit(op.float_prop("min")), flit(op.float_prop("max"))
    unary_f32(ctx, op, "clamp", f"x < {low} ? {low} : (x > {high} ? {high} : x)")


def _activation_check(op: Activation) -> str | None:
    kind = op.str_prop("kind")
    if kind == "not":
        ok = dtype_of(op.input) == BOOL and dtype_of(op.output) == BOOL
        return None if ok else "OpenCL 'not' is on bool tensors only"
    return f32_only(op) or (None if kind in UNARY else f"no OpenCL kernel for activation '{kind}'")


@opencl_lowering(Activation, check=_activation_check)  # type: ignore[arg-type]
def activation(ctx: OclLowering, op: Activation) -> None:
    kind = op.str_prop("kind")
    if kind == "not":
        pointwise(ctx, "not", [operand(ctx, op, 0, "uchar")], op.output, "uchar", "y[gid] = !a0;")
        return
    consts = f"const float A = {flit(op.float_prop('alpha'))}; const float B = {flit(op.float_prop('beta'))}; "
    unary_f32(ctx, op, kind, UNARY[kind], consts)


@opencl_lowering(Power)
def power(ctx: OclLowering, op: Power) -> None:
    p, scale, shift = (flit(op.float_prop(n)) for n in ("power", "scale", "shift"))
    unary_f32(ctx, op, "power", f"{scale} * pow(x, {p}) + {shift}")


@opencl_lowering(PReLU)
def prelu(ctx: OclLowering, op: PReLU) -> None:
    x, slope = shape_of(op.input), shape_of(op.slope)
    if len(slope) == 1 and len(x) >= 2:
        slope = (1, slope[0]) + (1,) * (len(x) - 2)
    operands = [operand(ctx, op, 0), operand(ctx, op, 1, shape=slope)]
    pointwise(ctx, "prelu", operands, op.output, "float", "y[gid] = a0 >= 0.0f ? a0 : a0 * a1;")


def _eltwise_check(op: Eltwise) -> str | None:
    operation = op.str_prop("operation")
    types = {dtype_of(op.lhs), dtype_of(op.rhs)}
    if operation in LOGICAL:
        return None if types == {BOOL} else "OpenCL logical eltwise is on bool tensors only"
    if operation in COMPARE:
        return None if types == {F32} else "OpenCL comparison is on f32 tensors only"
    return f32_only(op)


@opencl_lowering(Eltwise, check=_eltwise_check)  # type: ignore[arg-type]
def eltwise(ctx: OclLowering, op: Eltwise) -> None:
    operation = op.str_prop("operation")
    if operation in LOGICAL:
        expr, ctype, out = LOGICAL[operation], "uchar", "uchar"
    elif operation in COMPARE:
        expr, ctype, out = COMPARE[operation], "float", "uchar"
    else:
        expr, ctype, out = BINARY_FLOAT[operation], "float", "float"
    operands = [operand(ctx, op, 0, ctype), operand(ctx, op, 1, ctype)]
    pointwise(ctx, operation, operands, op.output, out, f"const {ctype} a = a0, b = a1; y[gid] = ({out})({expr});")


def _select_check(op: Select) -> str | None:
    if dtype_of(op.condition) != BOOL:
        return "OpenCL select needs a bool condition"
    return None if storage_type(dtype_of(op.output)) else f"no OpenCL select of {dtype_of(op.output)}"


@opencl_lowering(Select, check=_select_check)  # type: ignore[arg-type]
def select(ctx: OclLowering, op: Select) -> None:
    t = storage_type(dtype_of(op.output))
    assert t is not None
    operands = [operand(ctx, op, 0, "uchar"), operand(ctx, op, 1, t), operand(ctx, op, 2, t)]
    pointwise(ctx, "select", operands, op.output, t, "y[gid] = a0 ? a1 : a2;")


def _convertible(dtype: np.dtype) -> bool:
    return dtype == F16 or value_type(dtype) is not None


def _convert_check(op: Convert) -> str | None:
    source, target = dtype_of(op.input), dtype_of(op.output)
    ok = _convertible(source) and _convertible(target)
    return None if ok else f"no OpenCL conversion from {source} to {target}"


@opencl_lowering(Convert, check=_convert_check)  # type: ignore[arg-type]
def convert(ctx: OclLowering, op: Convert) -> None:
    """f16 is loaded and stored with vload_half/vstore_half (core OpenCL, no cl_khr_fp16)."""
    source, target = dtype_of(op.input), dtype_of(op.output)
    x, shape = ctx.values[op.input], shape_of(op.input)
    if source == F16:
        load = "const float a0 = vload_half({off}, p0);"
        src_type = "half"
    else:
        src_type = value_type(source) or ""
        load = f"const {src_type} a0 = p0[{{off}}];"
    if target == F16:
        store, out_type = "vstore_half_rte((float)a0, gid, y);", "half"
    elif target == BOOL:
        store, out_type = "y[gid] = a0 != 0;", "uchar"
    else:
        out_type = value_type(target) or ""
        store = f"y[gid] = ({out_type})a0;"
    body = pointwise_body(shape, [shape], [load], store)
    name = ctx.add_kernel("convert", pointwise_params([src_type], out_type), body)
    launch_1d(ctx, name, numel(shape), [x, ctx.result(op.output)])


def along(axis: int, size: int, rank: int) -> Shape:
    return (1,) * axis + (size,) + (1,) * (rank - axis - 1)


@opencl_lowering(ScaleShift)
def scale_shift(ctx: OclLowering, op: ScaleShift) -> None:
    rank, axis = len(shape_of(op.input)), op.channel_axis()
    vectors = [operand(ctx, op, i, shape=along(axis, numel(shape_of(op.operands[i])), rank)) for i in (1, 2)]
    pointwise(ctx, "scale_shift", [operand(ctx, op, 0), *vectors], op.output, "float", "y[gid] = a0 * a1 + a2;")


@opencl_lowering(BatchNormalization)
def batch_norm(ctx: OclLowering, op: BatchNormalization) -> None:
    rank = len(shape_of(op.input))
    vectors = [operand(ctx, op, i, shape=along(1, numel(shape_of(op.operands[i])), rank)) for i in (1, 2, 3, 4)]
    eps = flit(op.float_prop("epsilon"))
    store = f"y[gid] = (a0 - a3) * (a1 / sqrt(a4 + {eps})) + a2;"
    pointwise(ctx, "batch_norm", [operand(ctx, op, 0), *vectors], op.output, "float", store)


@opencl_lowering(Identity, check=lambda op: None)
def identity(ctx: OclLowering, op: Identity) -> None:
    ctx.alias(op.output, ctx.values[op.input])
