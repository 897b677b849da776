"""Float operands of different widths where an ONNX schema binds them to one type T.

torch's half exports write them: `model.half()` of a Hugging Face model runs float32 islands
(transformers casts to float32 before a residual sum), torch promotes float16 + float32 to
float32 and its CPU layer_norm takes float32 input with float16 weights, and the TorchScript
exporter records those mixtures as they ran (an Add of float16 and float32, a
LayerNormalization whose X is float32 and Scale float16). onnxruntime refuses such a file
("Type parameter (T) bound to different types"); irforge computes what torch computed, the
arithmetic the file records: a binary op converts its narrower float operand to the wider
type (torch's promotion; float16 -> float32 is exact), a normalisation converts its
parameters to X's type (torch's mixed-type layer_norm keeps the input's). Integer or
boolean mixtures stay the dialect's coded error.
"""

from __future__ import annotations

from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute, SSAValue

from irforge.dialects.nn import Convert
from irforge.frontends.onnx.registry import NodeContext


def _float_width(t: Attribute) -> int | None:
    return t.bitwidth if isinstance(t, AnyFloat) else None


def converted_to(ctx: NodeContext, value: SSAValue, element_type: Attribute, suffix: str) -> SSAValue:
    """`value` as `element_type` where both are floats of different widths; else unchanged."""
    own = value.type.element_type  # type: ignore[attr-defined]
    if own == element_type or _float_width(own) is None or _float_width(element_type) is None:
        return value
    return ctx.value(Convert, [value], suffix=suffix, destination_type=element_type)


def promoted(ctx: NodeContext, a: SSAValue, b: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(a, b) with the narrower of two float operands converted to the wider's type."""
    wa, wb = _float_width(a.type.element_type), _float_width(b.type.element_type)  # type: ignore[attr-defined]
    if wa is None or wb is None or wa == wb:
        return a, b
    if wa < wb:
        return converted_to(ctx, a, b.type.element_type, "/promoted_a"), b  # type: ignore[attr-defined]
    return a, converted_to(ctx, b, a.type.element_type, "/promoted_b")  # type: ignore[attr-defined]
