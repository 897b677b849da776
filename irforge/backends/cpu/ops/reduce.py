"""Lowerings of Pooling, SoftMax, Reduce, MVN, Normalize, GRN (f32) and ArgMax (f32; other
types as a host step of the reference kernel)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from irforge.backends.cpu.codegen.conv import ConvGeometry
from irforge.backends.cpu.codegen.epilogue import Epilogue
from irforge.backends.cpu.codegen.pool import PoolSpec, pool_kernel, row_path
from irforge.backends.cpu.codegen.rows import RowSpec, row_kernel
from irforge.backends.cpu.codegen.argmax import ArgSpec, argmax_kernel
from irforge.backends.cpu.lower import Buffer, Lowering, lowering, shape_of
from irforge.backends.cpu.ops.elementwise import pointwise_phase
from irforge.backends.cpu.ops.fusion import absorb_epilogue, require_f32
from irforge.backends.cpu.ops.movement import relayout
from irforge.backends.cpu.ops.volumetric import volumetric_pooling
from irforge.dialects.nn import GRN, MVN, ArgMax, Normalize, Pooling, Reduce, SoftMax
from irforge.dialects.nn.base import NNOp
from xdsl.dialects.builtin import f32


def emit_rows(ctx: Lowering, op: NNOp, shape: tuple[int, ...], axes: tuple[int, ...], kind: str, params: tuple[float, ...] = ()) -> None:
    """Reduce/normalise `shape` over `axes`. Axes that are not one contiguous block (size-1
    axes aside) are first permuted to the end, into scratch (and back, for normalisations)."""
    real = [a for a in axes if shape[a] > 1]
    if not real or real == list(range(real[0], real[-1] + 1)):
        lo, hi = (real[0], real[-1] + 1) if real else (len(shape), len(shape))
        rows_phase(ctx, RowSpec(math.prod(shape[:lo]), math.prod(shape[lo:hi]), math.prod(shape[hi:]), kind, params),
                   ctx.input(op, 0), ctx.output(op))
        return
    order = tuple(a for a in range(len(shape)) if a not in real) + tuple(real)
    permuted = ctx.scratch(4 * math.prod(shape))
    relayout(ctx, op, ctx.input(op, 0), shape, order, permuted)
    kept, reduced = math.prod(shape[a] for a in order[: -len(real)]), math.prod(shape[a] for a in real)
    spec = RowSpec(kept, reduced, 1, kind, params)
    if kind.startswith("reduce."):
        rows_phase(ctx, spec, permuted, ctx.output(op))
        return
    normalised = ctx.scratch(4 * math.prod(shape))
    rows_phase(ctx, spec, permuted, normalised)
    inverse = tuple(order.index(a) for a in range(len(shape)))
    relayout(ctx, op, normalised, tuple(shape[a] for a in order), inverse, ctx.output(op))


def rows_phase(ctx: Lowering, spec: RowSpec, src: Buffer, dst: Buffer) -> None:
    name = ctx.kernel(("rows", spec), lambda m, n: row_kernel(m, spec, n))
    ctx.phase(name, [src, dst])


def as_2d(values: tuple[int, ...], outer: int) -> tuple[int, int]:
    """A 1-D window's values as those of a 2-D window of height 1 (`outer` for the new axis)."""
    return (outer, values[0]) if len(values) == 1 else (values[0], values[1])


POOL_EPILOGUE = True
"""A windowed pool on the padded-row kernel absorbs a following residual Add (the other
operand computed already) and activation (`fusion.absorb_epilogue`), applied as it stores
each vector: keras Xception's four `MaxPool -> Add(residual 1x1)` were a pool and a
pointwise pass over its output each (0.197 / 0.085 / 0.069 / 0.028 ms). onnxruntime adds the
pool into the residual convolution, which it runs after the pool."""


@lowering(Pooling)
def pooling(ctx: Lowering, op: Pooling) -> None:
    require_f32(op)
    x, y = shape_of(op.input), shape_of(op.output)
    method = op.str_prop("method")
    if op.bool_prop("global_pool"):
        emit_rows(ctx, op, x, tuple(range(2, len(x))), f"reduce.{'max' if method == 'max' else 'mean'}")
        return
    if len(x) > 4:  # 3+ spatial axes: separable passes of the 2-D kernel (ops/volumetric.py)
        volumetric_pooling(ctx, op)
        return
    kernel = op.ints("kernel")
    begin, end = op.explicit_pads(kernel)
    (h, w), (oh, ow), (kh, kw) = as_2d(x[2:], 1), as_2d(y[2:], 1), as_2d(kernel, 1)
    g = ConvGeometry(x[0], x[1], h, w, kh, kw, oh, ow, as_2d(op.window("strides", 1), 1),
                     as_2d(op.window("dilations", 1), 1), as_2d(begin, 0))
    spec = PoolSpec(g, method, op.bool_prop("exclude_pad"), as_2d(end, 0))
    args = [ctx.input(op, 0)]
    if POOL_EPILOGUE and row_path(spec):
        epilogue, residual, final = absorb_epilogue(ctx, op)
        spec = replace(spec, epilogue=epilogue)
        args += [ctx.result(final)] + ([residual] if residual is not None else [])
    else:
        args.append(ctx.output(op))
    name = ctx.kernel(("pool", spec), lambda m, n: pool_kernel(m, spec, n))
    ctx.phase(name, args)


@lowering(SoftMax)
def softmax(ctx: Lowering, op: SoftMax) -> None:
    require_f32(op)
    kind = "logsoftmax" if op.bool_prop("log") else "softmax"
    emit_rows(ctx, op, shape_of(op.input), (op.softmax_axis(),), kind)


@lowering(Reduce)
def reduce(ctx: Lowering, op: Reduce) -> None:
    require_f32(op)
    x = shape_of(op.input)
    if math.prod(x[a] for a in op.reduced_axes()) == 0:
        # over no elements the result is the operation's identity (-inf for max, 1 for prod,
        # nan for mean, ...), whatever the data: a constant, as the reference kernel gives it
        # (the row kernels start from the first element, which does not exist here)
        from irforge.backends.reference.kernels.reduce import reduce as reference_reduce

        with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf is the identity of log_sum
            identity = np.asarray(reference_reduce(op, np.zeros(x, np.float32)), np.float32)
        ctx.alias(op.output, ctx.const(identity))
        return
    emit_rows(ctx, op, shape_of(op.input), op.reduced_axes(), f"reduce.{op.str_prop('operation')}")


@lowering(MVN)
def mvn(ctx: Lowering, op: MVN) -> None:
    require_f32(op)
    params = (float(op.bool_prop("normalize_variance")), op.float_prop("eps"), float(op.str_prop("eps_mode") == "outside_sqrt"))
    emit_rows(ctx, op, shape_of(op.input), op.reduced_axes(), "mvn", params)


@lowering(GRN)
def grn(ctx: Lowering, op: GRN) -> None:
    require_f32(op)
    emit_rows(ctx, op, shape_of(op.input), (1,), "l2norm", (op.float_prop("bias"),))


@lowering(Normalize)
def normalize(ctx: Lowering, op: Normalize) -> None:
    """L2 normalisation over the channels or all of C, H, W; then the scale per channel."""
    require_f32(op)
    x = shape_of(op.input)
    axes = op.norm_axes()
    lo, hi = axes[0], axes[-1] + 1
    spec = RowSpec(math.prod(x[:lo]), math.prod(x[lo:hi]), math.prod(x[hi:]), "l2norm", (op.float_prop("eps"),))
    if op.scale is None:
        rows_phase(ctx, spec, ctx.input(op, 0), ctx.output(op))
        return
    normalised = ctx.scratch(4 * math.prod(x))
    rows_phase(ctx, spec, ctx.input(op, 0), normalised)
    scale = shape_of(op.scale)
    along = (1, scale[0]) + (1,) * (len(x) - 2) if scale[0] > 1 else (1,)
    pointwise_phase(ctx, x, [normalised, ctx.input(op, 1)], [x, along], "bin.mul", (), ctx.output(op))


@lowering(ArgMax)
def argmax(ctx: Lowering, op: ArgMax) -> None:
    if op.input.type.element_type != f32:  # type: ignore[attr-defined]
        # integer ArgMax: open_clip's text tower finds the end-of-text token as the argmax of
        # the token ids (int64); small index tensors, so numpy's kernel as a host step
        from irforge.backends.cpu.host_steps import lower_reference

        lower_reference(ctx, op)
        return
    x, axis = shape_of(op.input), op.reduced_axis()
    spec = ArgSpec(math.prod(x[:axis]), x[axis], math.prod(x[axis + 1:]), op.str_prop("mode"), op.bool_prop("select_last_index"))
    name = ctx.kernel(("argmax", spec), lambda m, n: argmax_kernel(m, spec, n))
    ctx.phase(name, [ctx.input(op, 0), ctx.output(op)])
