"""Lowerings of the element-wise ops onto `codegen.pointwise`, and the views.

Identity, Reshape, Flatten, Squeeze and Unsqueeze (and Convert to the same type) move no
data: their result aliases the input buffer. Comparisons (i1 results), logic on i1, integer
arithmetic, f64 arithmetic (sum, sub, mul, div, max, min, squared_diff, in f64), Select and
Convert between f32/f16/f64/i8/i32/i64/bool use the typed expressions; the other f64
operations (pow, ...) run numpy's as a host step, as do f64 activations (`f64_host.py`).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from irforge.backends.cpu.codegen.mathfn import BINARY
from irforge.backends.cpu.codegen.pointwise import PointwiseSpec, broadcast_strides, pointwise_kernel, runtime_leading
from irforge.backends.cpu.codegen.typedfn import CONVERTIBLE, FLOAT_BINARY, INT_BINARY
from irforge.backends.cpu.lower import Buffer, Lowering, dtype_of, lowering, shape_of
from irforge.backends.cpu.ops.excite import defer_channel_scale
from irforge.backends.cpu.ops.input_activation import defer_input_activation
from irforge.backends.cpu.codegen.transpose import TransposeSpec, as_transpose, transpose_kernel
from irforge.backends.cpu.ops.fusion import activation_of, require_f32
from irforge.backends.cpu.ops.movement import permute_any
from irforge.dialects.nn import (
    Activation, BatchNormalization, Clamp, Convert, Eltwise, Flatten, Identity, Permute, Power, PReLU, ReLU, Reshape, ScaleShift, Select, Squeeze,
    Unsqueeze,
)
from irforge.dialects.nn.elementwise import COMPARISON, LOGICAL
from irforge.weights.dtypes import dtype_name
from irforge.errors import IrforgeError


def type_name(value: SSAValue) -> str:
    """The element type's name as in the weights format (f32, i64, bool, ...)."""
    return dtype_name(dtype_of(value))


def pointwise_phase(ctx: Lowering, out_shape: tuple[int, ...], inputs: list[Buffer], shapes: list[tuple[int, ...]], expr: str,
                    params: tuple[float, ...], out: Buffer, types: tuple[str, ...] = ()) -> None:
    """A phase computing `expr` of `inputs` (broadcast from `shapes`) into `out`."""
    spec = PointwiseSpec(out_shape, tuple(broadcast_strides(s, out_shape) for s in shapes), expr, params, types)
    spec, sizes = runtime_leading(spec)  # one kernel for the shapes that differ in their first axis only
    name = ctx.kernel(("pointwise", spec), lambda m, n: pointwise_kernel(m, spec, n))
    ctx.phase(name, [*inputs, out, ctx.const(np.array(sizes, np.int64))])


def emit_pointwise(ctx: Lowering, op: Operation, inputs: list[Buffer], shapes: list[tuple[int, ...]], expr: str,
                   params: tuple[float, ...] = (), types: tuple[str, ...] = ()) -> None:
    pointwise_phase(ctx, shape_of(op.results[0]), inputs, shapes, expr, params, ctx.output(op), types)


def unary(ctx: Lowering, op: Operation, expr: str, params: tuple[float, ...] = ()) -> None:
    require_f32(op)
    emit_pointwise(ctx, op, [ctx.input(op, 0)], [shape_of(op.operands[0])], expr, params)


@lowering(ReLU)
def relu(ctx: Lowering, op: ReLU) -> None:
    if defer_input_activation(ctx, op):  # onto the depthwise layer reading it (its input copy)
        return
    unary(ctx, op, "relu", (op.float_prop("negative_slope"),))


@lowering(Clamp)
def clamp(ctx: Lowering, op: Clamp) -> None:
    if defer_input_activation(ctx, op):
        return
    unary(ctx, op, "clamp", (op.float_prop("min"), op.float_prop("max")))


@lowering(Activation)
def activation(ctx: Lowering, op: Activation) -> None:
    if op.str_prop("kind") == "not" and type_name(op.input) == "bool":
        emit_pointwise(ctx, op, [ctx.input(op, 0)], [shape_of(op.input)], "not", types=("bool", "bool"))
        return
    unary(ctx, op, f"act.{op.str_prop('kind')}", (op.float_prop("alpha"), op.float_prop("beta")))


@lowering(Power)
def power(ctx: Lowering, op: Power) -> None:
    unary(ctx, op, "power", tuple(op.float_prop(p) for p in ("power", "scale", "shift")))


ELTWISE_ACTIVATION = True
"""An f32 binary Eltwise whose single user is an activation a GEMM's epilogue applies
(`fusion.activation_of`: ReLU, Clamp, Swish, ...) of its shape computes both in one phase
(`mathfn.evaluate`'s `bin.mul>relu`): DenseNet's BatchNorm before each layer's 1x1 (a
per-channel Mul over the concatenation, the shift folded away) and its ReLU read and wrote
the growing concatenation twice. False: a phase each."""


def _absorbed_activation(ctx: Lowering, op: Eltwise) -> tuple[str, tuple[float, ...], SSAValue] | None:
    """(activation, its params, its result) of `op`'s single user where `ELTWISE_ACTIVATION`
    fuses it into `op`'s phase, else None."""
    user = ctx.single_use(op.output)
    act = activation_of(user) if ELTWISE_ACTIVATION else None
    if act is None or user is None or shape_of(user.results[0]) != shape_of(op.output):
        return None
    ctx.absorbed.add(user)
    return act[0], act[1], user.results[0]


SQUARE_AS_PRODUCT = True
"""Eltwise pow by a constant 2 as x * x (the A/B knob; False: powf per lane)."""


@lowering(Eltwise)
def eltwise(ctx: Lowering, op: Eltwise) -> None:
    operation = op.str_prop("operation")
    element = type_name(op.lhs)
    exponent = ctx.constant_of(op.rhs) if operation == "pow" else None
    if (SQUARE_AS_PRODUCT and element == "f32" and exponent is not None and exponent.size and np.all(exponent == 2.0)
            and shape_of(op.output) == shape_of(op.lhs)):
        # x ** 2 as x * x (T5's LayerNorm `pow(x, 2)`): the same value, as powf rounds the
        # exact square too, where the binary form called powf lane by lane (0.9 ms per layer)
        unary(ctx, op, "power", (2.0, 1.0, 0.0))
        return
    if element == "f32" and operation in BINARY:
        if defer_channel_scale(ctx, op):  # squeeze-excite's x * s: onto the next 1x1's weights
            return
        inputs, shapes = [ctx.input(op, 0), ctx.input(op, 1)], [shape_of(op.lhs), shape_of(op.rhs)]
        fused = _absorbed_activation(ctx, op)
        if fused is not None:
            act, params, final = fused
            pointwise_phase(ctx, shape_of(op.output), inputs, shapes, f"bin.{operation}>{act}", params, ctx.result(final))
            return
        emit_pointwise(ctx, op, inputs, shapes, f"bin.{operation}")
        return
    if operation in COMPARISON and element in ("f32", "f16", "f64", "i8", "i32", "i64", "bool"):
        expr = f"cmp.{operation}"
    elif operation in FLOAT_BINARY and element == "f64":
        expr = f"fbin.{operation}"
    elif operation in LOGICAL:
        expr = f"logic.{operation}"
    elif operation in INT_BINARY and element in ("i8", "i32", "i64"):
        expr = f"ibin.{operation}"
    elif element == "f64":  # pow, floor_mod, ...: numpy's, in f64, as a host step
        from irforge.backends.cpu.host_steps import lower_reference

        lower_reference(ctx, op)
        return
    else:
        raise IrforgeError(f"'{op.name}' operation '{operation}' on {element} has no CPU kernel", where=op.label,
                           fix="run the model with --device ref", code="E844")
    types = (element, element, type_name(op.output))
    emit_pointwise(ctx, op, [ctx.input(op, 0), ctx.input(op, 1)], [shape_of(op.lhs), shape_of(op.rhs)], expr, types=types)


@lowering(Select)
def select(ctx: Lowering, op: Select) -> None:
    element = type_name(op.then)
    if element not in CONVERTIBLE:
        raise IrforgeError(f"'{op.name}' on {element} has no CPU kernel", where=op.label, fix="run the model with --device ref", code="E844")
    emit_pointwise(ctx, op, [ctx.input(op, i) for i in range(3)], [shape_of(v) for v in op.operands], "select",
                   types=("bool", element, element, element))


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


@lowering(BatchNormalization)
def batch_norm(ctx: Lowering, op: BatchNormalization) -> None:
    """Only reached without fuse-linear-ops (which folds it into the producer or a ScaleShift)."""
    require_f32(op)
    x = shape_of(op.input)
    along = _along((x[1],), x[1], 1, len(x))
    emit_pointwise(ctx, op, [ctx.input(op, i) for i in range(5)], [x] + [along] * 4, "batch_norm", (op.float_prop("epsilon"),))


@lowering(Identity, Reshape, Flatten, Squeeze, Unsqueeze)
def view(ctx: Lowering, op: Operation) -> None:
    ctx.alias(op.results[0], ctx.input(op, 0))


@lowering(Convert)
def convert(ctx: Lowering, op: Convert) -> None:
    """Same type: a view; else a typed pointwise conversion (see `typedfn.convert`), or a
    host step for the element types the generated code does not handle."""
    src, dst = type_name(op.input), type_name(op.output)
    if src == dst:
        ctx.alias(op.results[0], ctx.input(op, 0))
        return
    if src not in CONVERTIBLE or dst not in CONVERTIBLE:
        # u8/u16/u32/i16... (an INT8 model's dequantised u8 weights, e.g. a quantised
        # embedding table read by a Gather): numpy's conversion as a host step
        from irforge.backends.cpu.host_steps import lower_reference

        lower_reference(ctx, op)
        return
    emit_pointwise(ctx, op, [ctx.input(op, 0)], [shape_of(op.input)], f"convert.{dst}", types=(src, dst))


TILED_TRANSPOSE = True
"""f32 Permutes that are batched 2-D transposes of at least `TILED_MIN` rows and columns run
`codegen.transpose`'s tiles (SegFormer's [16384, 256] token / channel transposes: 31.6 ms as
a permuted copy); False: every f32 Permute as the permuted copy (the A/B)."""
TILED_MIN = 16


@lowering(Permute)
def permute(ctx: Lowering, op: Permute) -> None:
    """A copy whose input strides are the input's, permuted: gathers along the new inner axis
    (other element types: `movement.permute_any`)."""
    if type_name(op.input) != "f32":
        permute_any(ctx, op)
        return
    x = shape_of(op.input)
    strides = [1] * len(x)
    for axis in range(len(x) - 2, -1, -1):
        strides[axis] = strides[axis + 1] * x[axis + 1]
    order = op.ints("order") or tuple(reversed(range(len(x))))
    planes = as_transpose(x, tuple(order)) if TILED_TRANSPOSE else None
    if planes is not None and min(planes[1:]) >= TILED_MIN:
        spec = TransposeSpec(*planes)
        ctx.phase(ctx.kernel(("transpose", spec), lambda m, n: transpose_kernel(m, spec, n)), [ctx.input(op, 0), ctx.output(op)])
        return
    out_shape = shape_of(op.output)
    permuted = tuple(strides[a] if x[a] > 1 else 0 for a in order)
    spec = PointwiseSpec(out_shape, (permuted,), "copy")
    name = ctx.kernel(("pointwise", spec), lambda m, n: pointwise_kernel(m, spec, n))
    ctx.phase(name, [ctx.input(op, 0), ctx.output(op)])
