"""OpenCL lowerings of the reductions and normalisations: Reduce, ArgMax, SoftMax, MVN,
Normalize, GRN and LRN (Norm)."""

from __future__ import annotations

import numpy as np

from irforge.backends.cpu.lower import dtype_of, shape_of
from irforge.backends.opencl.codegen.common import Param, flit, numel, value_type
from irforge.backends.opencl.codegen.reduce import (
    REDUCE_STEP,
    argmax_body,
    kept_count,
    l2_normalize_body,
    lrn_body,
    mvn_body,
    reduce_body,
    softmax_body,
)
from irforge.backends.opencl.lower import OclLowering, f32_only, opencl_lowering
from irforge.backends.opencl.ops.launch import launch_1d
from irforge.dialects.nn import GRN, MVN, ArgMax, Norm, Normalize, Reduce, SoftMax

XY = [Param("x", "float"), Param("y", "float", written=True)]


def _emit(ctx: OclLowering, op, prefix: str, body: str, items: int, params: list[Param] = XY, extra: list | None = None) -> None:  # type: ignore[no-untyped-def,type-arg]
    name = ctx.add_kernel(prefix, params, body)
    launch_1d(ctx, name, items, [ctx.values[op.operands[0]], *(extra or []), ctx.result(op.results[0])])


def _reduce_check(op: Reduce) -> str | None:
    return f32_only(op) or (None if op.str_prop("operation") in REDUCE_STEP else f"no OpenCL reduction '{op.str_prop('operation')}'")


@opencl_lowering(Reduce, check=_reduce_check)  # type: ignore[arg-type]
def reduce(ctx: OclLowering, op: Reduce) -> None:
    shape, axes = shape_of(op.input), op.reduced_axes()
    _emit(ctx, op, f"reduce_{op.str_prop('operation')}", reduce_body(shape, axes, op.str_prop("operation")), kept_count(shape, axes))


def _argmax_check(op: ArgMax) -> str | None:
    if dtype_of(op.input) != np.float32 or dtype_of(op.output) not in (np.int64, np.int32):
        return "OpenCL argmax is f32 to i64/i32 only"
    return None


@opencl_lowering(ArgMax, check=_argmax_check)  # type: ignore[arg-type]
def argmax(ctx: OclLowering, op: ArgMax) -> None:
    shape, axis = shape_of(op.input), op.reduced_axis()
    body = argmax_body(shape, axis, op.str_prop("mode") == "max", op.bool_prop("select_last_index"))
    params = [Param("x", "float"), Param("y", value_type(dtype_of(op.output)) or "long", written=True)]
    _emit(ctx, op, "argmax", body, kept_count(shape, (axis,)), params)


@opencl_lowering(SoftMax)
def softmax(ctx: OclLowering, op: SoftMax) -> None:
    shape, axis = shape_of(op.input), op.softmax_axis()
    _emit(ctx, op, "softmax", softmax_body(shape, axis, op.bool_prop("log")), kept_count(shape, (axis,)))


@opencl_lowering(MVN)
def mvn(ctx: OclLowering, op: MVN) -> None:
    shape, axes = shape_of(op.input), op.reduced_axes()
    body = mvn_body(shape, axes, op.bool_prop("normalize_variance"), flit(op.float_prop("eps")), op.str_prop("eps_mode") == "inside_sqrt")
    _emit(ctx, op, "mvn", body, kept_count(shape, axes))


@opencl_lowering(Normalize)
def normalize(ctx: OclLowering, op: Normalize) -> None:
    shape, axes = shape_of(op.input), op.norm_axes()
    scale = None
    params, extra = XY, []
    if op.scale is not None:
        scale = "scale[0]" if numel(shape_of(op.scale)) == 1 else "scale[c1]"
        params, extra = [XY[0], Param("scale", "float"), XY[1]], [ctx.values[op.scale]]
    body = l2_normalize_body(shape, axes, flit(op.float_prop("eps")), scale)
    _emit(ctx, op, "normalize", body, kept_count(shape, axes), params, extra)


@opencl_lowering(GRN)
def grn(ctx: OclLowering, op: GRN) -> None:
    shape = shape_of(op.input)
    _emit(ctx, op, "grn", l2_normalize_body(shape, (1,), flit(op.float_prop("bias")), None), kept_count(shape, (1,)))


@opencl_lowering(Norm)
def lrn(ctx: OclLowering, op: Norm) -> None:
    shape, axes = shape_of(op.input), op.window_axes()
    before, after = op.window_extent()
    alpha = flit(op.float_prop("alpha") / op.int_prop("size") ** len(axes))
    body = lrn_body(shape, axes, before, after, alpha, flit(op.float_prop("bias")), flit(op.float_prop("beta")))
    _emit(ctx, op, "lrn", body, numel(shape))
