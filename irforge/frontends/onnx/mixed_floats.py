"""Float operands of different widths where an ONNX schema binds them to one type T.

torch's half exports write them: `model.half()` of a Hugging Face model runs float32 islands
(transformers casts to float32 before a residual sum), torch promotes float16 + float32 to
float32 and its CPU layer_norm takes float32 input with float16 weights, and the TorchScript
exporter records those mixtures as they ran (an Add of float16 and float32, a
LayerNormalization whose X is float32 and Scale float16). onnxruntime refuses such a file
("Type parameter (T) bound to different types"); irforge computes what torch computed, the
arithmetic the file records: a binary op (and Where's two branches) converts its narrower float operand to the wider
type (torch's promotion; float16 -> float32 is exact), a normalisation converts its
parameters to X's type (torch's mixed-type layer_norm keeps the input's). Integer or
boolean mixtures stay the dialect's coded error.

A file that contradicts itself is refused instead (E147): a Cast whose `to` is one type (float
or not) while the file declares its output another. onnxconverter-common's convert_float_to_float16
writes these: it retypes every float32 tensor's value_info to float16 but leaves the Cast
nodes torch wrote (`to` float32) as they were, so the Cast's own consumers expect float16
and get float32. Neither reading is the file's: onnxruntime refuses it too.
"""

from __future__ import annotations

import onnx
from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import Attribute, SSAValue

from irforge.dialects.nn import Convert
from irforge.errors import IrforgeError
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


FLOAT_TYPES = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16, onnx.TensorProto.DOUBLE)
"""the float types whose contradiction float16 conversions leave (named in E147's message)"""


def _type_name(data_type: int) -> str:
    """ONNX's name of an element type; a declared type may be any number (99)."""
    return onnx.TensorProto.DataType.Name(data_type) if data_type in onnx.TensorProto.DataType.values() else f"type {data_type}"


def check_cast_declared_type(ctx: NodeContext, to: int) -> None:
    """E147 where the file declares the Cast's output a type other than `to` (a float type, as
    float16 conversions leave them, or any other: Cast to INT32 of an output declared FLOAT16
    gave int32 values where the file promises float16)."""
    declared = getattr(ctx.importer, "declared_element_types", {}).get(ctx.node.output[0])  # subgraphs: unchecked
    if declared and to and declared != to:
        name = _type_name
        why = "onnxconverter-common's float16 conversion leaves torch's Casts to FLOAT; " if {to, declared} <= set(FLOAT_TYPES) else ""
        raise IrforgeError(
            f"Cast to {name(to)} but the file declares its output '{ctx.node.output[0]}' {name(declared)}: the file contradicts "
            f"itself ({why}onnxruntime refuses it too)",
            where=ctx.where, code="E147",
            fix=f"set this Cast's `to` to {name(declared)} (every Cast whose declared output disagrees), or convert the float32 model",
        )
