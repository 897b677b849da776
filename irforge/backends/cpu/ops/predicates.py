"""CPU lowering of IsNaN: `x != x` by the pointwise comparison (an unordered compare, true
exactly for NaN), so the dynamo exporter's softmax guard `Where(IsNaN(p), 0, p)` compiles."""

from __future__ import annotations

from irforge.backends.cpu.lower import Lowering, lowering, shape_of
from irforge.backends.cpu.ops.elementwise import emit_pointwise, type_name
from irforge.dialects.nn.indexing import IsNaN
from irforge.errors import IrforgeError


@lowering(IsNaN)
def is_nan(ctx: Lowering, op: IsNaN) -> None:
    element = type_name(op.input)
    if element not in ("f32", "f16"):
        raise IrforgeError(f"'{op.name}' on {element} has no CPU kernel", where=op.label, fix="run the model with --device ref", code="E844")
    x = ctx.input(op, 0)
    emit_pointwise(ctx, op, [x, x], [shape_of(op.input)] * 2, "cmp.not_equal", types=(element, element, "bool"))
