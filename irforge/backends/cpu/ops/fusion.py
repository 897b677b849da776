"""Epilogue fusion: which following ops a producer kernel absorbs.

`conv|fc|matmul -> Add(same shape, other operand already computed) -> ReLU|Clamp|Swish|
HardSwish|HardSigmoid|Sigmoid` becomes
one kernel whose epilogue adds the residual and applies the activation as each output tile
is stored. An intermediate value is absorbed only if its single use is the next fused op
(a value that is also a model output or feeds another op stays materialised). A
convolution, FullyConnected or MatMul whose residual no later op reads writes its result
into the residual's buffer (`residual_in_place`). A MatMul with
constant weights first absorbs the Linear's bias Add (`absorb_bias`): exporters write
`MatMul -> Add(bias) -> Gelu` for a transformer MLP (GELU itself stays a phase: see
`epilogue.GELU_KINDS`).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation, SSAValue

from irforge.backends.cpu.codegen.epilogue import FUSED_KINDS, Epilogue
from irforge.backends.cpu.lower import Buffer, Lowering, nbytes_of, shape_of
from irforge.dialects.nn import Activation, Clamp, Eltwise, ReLU
from irforge.dialects.nn.base import NNOp
from irforge.errors import IrforgeError
from xdsl.dialects.builtin import TensorType, f32


RESIDUAL_IN_PLACE = True
"""A GEMM whose residual tensor no later op reads stores its result over it, starting from
it (see `residual_in_place`): C's lines are then the residual's, already in cache as the
tile reads them, where a separate output cost one more stream (a read for ownership of C
beside the residual's read): ResNet-50's 56x56 64->256 layer with its residual 1.30 ms
against 1.11 without one (session 10)."""


def residual_in_place(ctx: Lowering, op: Operation, final: SSAValue, residual: Buffer) -> bool:
    """Whether `op`'s fused result `final` may be stored in its residual's buffer: an arena
    tensor of the same size whose every reader is lowered already (or absorbed: run inside
    an earlier phase, or this one). The caller's kernel then starts from C's content
    (`GemmSpec.accumulate`): partial sums of several K blocks overwrite the residual only
    after it has been added in."""
    if not RESIDUAL_IN_PLACE or residual.kind != "arena" or residual.nbytes != nbytes_of(final):
        return False
    here = ctx.order[op]
    for value, buf in ctx.values.items():
        if buf is residual and any(ctx.order.get(use.operation, here) >= here and use.operation not in ctx.absorbed
                                   for use in value.uses):
            return False
    return not ctx.scale_pending(residual, here)  # a squeeze-excite scale its 1x1 layer reads later


def require_f32(op: NNOp) -> None:
    """The CPU kernels compute in f32: other element types are refused by name."""
    for value in (*op.operands, *op.results):
        t = value.type
        if isinstance(t, TensorType) and t.element_type != f32:
            raise IrforgeError(
                f"'{op.name}' on {t.element_type} tensors has no CPU kernel (f32 only)",
                where=op.label,
                fix="run the model with --device ref",
                code="E845",
            )


def activation_of(op: Operation | None) -> tuple[str, tuple[float, ...]] | None:
    if isinstance(op, ReLU):
        return "relu", (op.float_prop("negative_slope"),)
    if isinstance(op, Clamp):
        return "clamp", (op.float_prop("min"), op.float_prop("max"))
    if isinstance(op, Activation) and op.str_prop("kind") in FUSED_KINDS:
        return f"act.{op.str_prop('kind')}", (op.float_prop("alpha"), op.float_prop("beta"))
    return None


def absorb_bias(ctx: Lowering, value: SSAValue, n: int) -> tuple[Buffer | None, SSAValue]:
    """A Linear's bias after its MatMul: the single user `Add(value, c)` with a constant c of n
    values along the last axis (shape (n,) or (1, .., 1, n)) and the Add's shape unchanged.
    Returns c's buffer (the GEMM adds it per column) and the Add's result, or (None, value)."""
    user = ctx.single_use(value)
    if not (isinstance(user, Eltwise) and user.str_prop("operation") == "sum"):
        return None, value
    other = user.rhs if user.lhs is value else user.lhs
    c = ctx.constant_of(other) if other is not value else None
    if (c is None or c.dtype != np.float32 or c.ndim == 0 or c.shape[-1] != n or c.size != n
            or c.ndim > len(shape_of(value)) or shape_of(user.output) != shape_of(value)):
        return None, value
    ctx.absorbed.add(user)
    return ctx.const(c.reshape(n)), user.output


def absorb_epilogue(ctx: Lowering, op: Operation, start: SSAValue | None = None) -> tuple[Epilogue, Buffer | None, SSAValue]:
    """The epilogue, residual buffer and final value of `op` with what follows it absorbed
    (after `start`, a value already absorbed, e.g. by `absorb_bias`; else op's result)."""
    value = op.results[0] if start is None else start
    residual: Buffer | None = None
    user = ctx.single_use(value)
    if isinstance(user, Eltwise) and user.str_prop("operation") == "sum" and _same(user, value):
        other = user.rhs if user.lhs is value else user.lhs
        if other is not value and other in ctx.values:
            residual = ctx.values[other]
            ctx.absorbed.add(user)
            value = user.output
            user = ctx.single_use(value)
    act = activation_of(user)
    if act is not None and user is not None and shape_of(user.results[0]) == shape_of(value):
        ctx.absorbed.add(user)
        value = user.results[0]
    kind, params = act if act is not None and user in ctx.absorbed else ("none", ())
    return Epilogue(residual is not None, kind, params), residual, value


def _same(add: Eltwise, value: SSAValue) -> bool:
    shapes = {shape_of(add.lhs), shape_of(add.rhs), shape_of(add.output)}
    return len(shapes) == 1 and add.output.type.element_type == value.type.element_type  # type: ignore[attr-defined]
