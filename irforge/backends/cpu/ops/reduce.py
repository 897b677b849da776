"""Lowerings of Pooling, SoftMax, Reduce and MVN (f32)."""

from __future__ import annotations

import numpy as np

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.pool import PoolSpec, pool_kernel
from irforge.backends.cpu.codegen.rows import RowSpec, row_kernel
from irforge.backends.cpu.lower import Lowering, lowering, shape_of
from irforge.backends.cpu.ops.fusion import require_f32
from irforge.dialects.nn import MVN, Pooling, Reduce, SoftMax
from irforge.dialects.nn.base import NNOp
from irforge.errors import IrforgeError


def emit_rows(ctx: Lowering, op: NNOp, shape: tuple[int, ...], axes: tuple[int, ...], kind: str, params: tuple[float, ...] = ()) -> None:
    """Reduce/normalise `shape` over `axes`, which must be one contiguous block (size-1
    axes aside)."""
    real = [a for a in axes if shape[a] > 1]
    if real and real != list(range(real[0], real[-1] + 1)):
        raise IrforgeError(f"'{op.name}' over non-adjacent axes {list(axes)} has no CPU kernel", where=op.label,
                           fix="permute the reduced axes next to each other first")
    lo, hi = (real[0], real[-1] + 1) if real else (len(shape), len(shape))
    spec = RowSpec(int(np.prod(shape[:lo])), int(np.prod(shape[lo:hi])), int(np.prod(shape[hi:])), kind, params)
    name = ctx.kernel(("rows", spec), lambda m, n: row_kernel(m, spec, n))
    ctx.phase(name, [ctx.input(op, 0), ctx.output(op)])


@lowering(Pooling)
def pooling(ctx: Lowering, op: Pooling) -> None:
    require_f32(op)
    x, y = shape_of(op.input), shape_of(op.output)
    method = op.str_prop("method")
    if op.bool_prop("global_pool"):
        emit_rows(ctx, op, x, tuple(range(2, len(x))), f"reduce.{'max' if method == 'max' else 'mean'}")
        return
    if len(x) != 4:
        raise IrforgeError(f"'{op.name}' with {len(x) - 2} spatial axes has no CPU kernel", where=op.label)
    kernel = op.ints("kernel")
    begin, end = op.explicit_pads(kernel)
    g = ConvGeometry(x[0], x[1], x[2], x[3], kernel[0], kernel[1], y[2], y[3], tuple(op.window("strides", 1)),
                     tuple(op.window("dilations", 1)), tuple(begin))  # type: ignore[arg-type]
    spec = PoolSpec(g, method, op.bool_prop("exclude_pad"), tuple(end))  # type: ignore[arg-type]
    name = ctx.kernel(("pool", spec), lambda m, n: pool_kernel(m, spec, n))
    ctx.phase(name, [ctx.input(op, 0), ctx.output(op)])


@lowering(SoftMax)
def softmax(ctx: Lowering, op: SoftMax) -> None:
    require_f32(op)
    kind = "logsoftmax" if op.bool_prop("log") else "softmax"
    emit_rows(ctx, op, shape_of(op.input), (op.softmax_axis(),), kind)


@lowering(Reduce)
def reduce(ctx: Lowering, op: Reduce) -> None:
    require_f32(op)
    emit_rows(ctx, op, shape_of(op.input), op.reduced_axes(), f"reduce.{op.str_prop('operation')}")


@lowering(MVN)
def mvn(ctx: Lowering, op: MVN) -> None:
    require_f32(op)
    params = (float(op.bool_prop("normalize_variance")), op.float_prop("eps"), float(op.str_prop("eps_mode") == "outside_sqrt"))
    emit_rows(ctx, op, shape_of(op.input), op.reduced_axes(), "mvn", params)
