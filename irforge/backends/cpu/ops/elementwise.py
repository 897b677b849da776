"""Lowerings of the element-wise ops onto `codegen.pointwise` (f32 only), and the views.

Identity, Reshape, Flatten, Squeeze and Unsqueeze (and f32 -> f32 Convert) move no data:
their result aliases the input buffer.
"""

from __future__ import annotations

from xdsl.dialects.builtin import f32
from xdsl.ir import Operation

from irforge.backends.cpu.codegen.mathfn import BINARY
from irforge.backends.cpu.codegen.pointwise import PointwiseSpec, broadcast_strides, pointwise_kernel
from irforge.backends.cpu.lower import Buffer, Lowering, lowering, shape_of
from irforge.backends.cpu.ops.fusion import require_f32
from irforge.dialects.nn import (
    Activation, Clamp, Convert, Eltwise, Flatten, Identity, Permute, Power, PReLU, ReLU, Reshape, ScaleShift, Squeeze, Unsqueeze,
)
from irforge.errors import IrforgeError


def emit_pointwise(ctx: Lowering, op: Operation, inputs: list[Buffer], shapes: list[tuple[int, ...]], expr: str, params: tuple[float, ...] = ()) -> None:
    out_shape = shape_of(op.results[0])
    spec = PointwiseSpec(out_shape, tuple(broadcast_strides(s, out_shape) for s in shapes), expr, params)
    name = ctx.kernel(("pointwise", spec), lambda m, n: pointwise_kernel(m, spec, n))
    ctx.phase(name, [*inputs, ctx.output(op)])


def unary(ctx: Lowering, op: Operation, expr: str, params: tuple[float, ...] = ()) -> None:
    require_f32(op)
    emit_pointwise(ctx, op, [ctx.input(op, 0)], [shape_of(op.operands[0])], expr, params)


@lowering(ReLU)
def relu(ctx: Lowering, op: ReLU) -> None:
    unary(ctx, op, "relu", (op.float_prop("negative_slope"),))


@lowering(Clamp)
def clamp(ctx: Lowering, op: Clamp) -> None:
    unary(ctx, op, "clamp", (op.float_prop("min"), op.float_prop("max")))


@lowering(Activation)
def activation(ctx: Lowering, op: Activation) -> None:
    unary(ctx, op, f"act.{op.str_prop('kind')}", (op.float_prop("alpha"), op.float_prop("beta")))


@lowering(Power)
def power(ctx: Lowering, op: Power) -> None:
    unary(ctx, op, "power", tuple(op.float_prop(p) for p in ("power", "scale", "shift")))


@lowering(Eltwise)
def eltwise(ctx: Lowering, op: Eltwise) -> None:
    operation = op.str_prop("operation")
    if operation not in BINARY:
        raise IrforgeError(f"'{op.name}' operation '{operation}' has no CPU kernel", where=op.label,
                           fix="run the model with --device ref")
    require_f32(op)
    emit_pointwise(ctx, op, [ctx.input(op, 0), ctx.input(op, 1)], [shape_of(op.lhs), shape_of(op.rhs)], f"bin.{operation}")


def _along(shape: tuple[int, ...], size: int, axis: int, rank: int) -> tuple[int, ...]:
    if len(shape) == 1 and rank >= 2:
        return (1,) * axis + (size,) + (1,) * (rank - axis - 1)
    return shape


@lowering(PReLU)
def prelu(ctx: Lowering, op: PReLU) -> None:
    require_f32(op)
    x, slope = shape_of(op.input), shape_of(op.slope)
    emit_pointwise(ctx, op, [ctx.input(op, 0), ctx.input(op, 1)], [x, _along(slope, slope[0], 1, len(x)) if len(slope) == 1 and len(x) >= 2 else slope], "prelu")


@lowering(ScaleShift)
def scale_shift(ctx: Lowering, op: ScaleShift) -> None:
    require_f32(op)
    x = shape_of(op.input)
    axis = op.channel_axis()
    along = _along((x[axis],), x[axis], axis, len(x))
    emit_pointwise(ctx, op, [ctx.input(op, i) for i in range(3)], [x, along, along], "scale_shift")


@lowering(Identity, Reshape, Flatten, Squeeze, Unsqueeze)
def view(ctx: Lowering, op: Operation) -> None:
    ctx.alias(op.results[0], ctx.input(op, 0))


@lowering(Convert)
def convert(ctx: Lowering, op: Convert) -> None:
    if op.operands[0].type.element_type != f32 or op.destination_type != f32:  # type: ignore[attr-defined]
        raise IrforgeError(f"'{op.name}' to or from non-f32 types has no CPU kernel", where=op.label,
                           fix="run the model with --device ref")
    ctx.alias(op.results[0], ctx.input(op, 0))


@lowering(Permute)
def permute(ctx: Lowering, op: Permute) -> None:
    """A copy whose input strides are the input's, permuted: gathers along the new inner axis."""
    require_f32(op)
    x = shape_of(op.input)
    strides = [1] * len(x)
    for axis in range(len(x) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * x[axis + 1]
    order = op.ints("order") or tuple(reversed(range(len(x))))
    out_shape = shape_of(op.output)
    permuted = tuple(strides[a] if x[a] > 1 else 0 for a in order)
    spec = PointwiseSpec(out_shape, (permuted,), "copy")
    name = ctx.kernel(("pointwise", spec), lambda m, n: pointwise_kernel(m, spec, n))
    ctx.phase(name, [ctx.input(op, 0), ctx.output(op)])
