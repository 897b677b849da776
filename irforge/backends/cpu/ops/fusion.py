"""Epilogue fusion: which following ops a producer kernel absorbs.

`conv|fc|matmul -> Add(same shape, other operand already computed) -> ReLU|Clamp|Swish|
HardSwish|HardSigmoid|Sigmoid` becomes
one kernel whose epilogue adds the residual and applies the activation as each output tile
is stored. An intermediate value is absorbed only if its single use is the next fused op
(a value that is also a model output or feeds another op stays materialised).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from irforge.backends.cpu.codegen.epilogue import FUSED_KINDS, Epilogue
from irforge.backends.cpu.lower import Buffer, Lowering, shape_of
from irforge.dialects.nn import Activation, Clamp, Eltwise, ReLU
from irforge.dialects.nn.base import NNOp
from irforge.errors import IrforgeError
from xdsl.dialects.builtin import TensorType, f32


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


def absorb_epilogue(ctx: Lowering, op: Operation) -> tuple[Epilogue, Buffer | None, SSAValue]:
    """The epilogue, residual buffer and final value of `op` with what follows it absorbed."""
    value = op.results[0]
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
