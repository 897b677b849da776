"""The one table from op class to IR XML emitter, filled for every `nn` op.

`EMITTERS` maps an op class to a small function `(ctx, op, inputs) -> outputs` building its
opset layers (see `context.EmitContext`). The `nn` emitters live in `emitters/`, one module
per dialect family; an extension registers its own ops with `register_ir_xml_emitter`, and
may use `custom_layer` to write an op as one layer of its own type, whose `version` is the
extension's name (OpenVINO then needs that extension loaded to read the model).
"""

from __future__ import annotations

from collections.abc import Mapping

from xdsl.ir import Operation

from irforge.backends.ir_xml import emitters  # noqa: F401  (registers the nn emitters)
from irforge.backends.ir_xml.context import EMITTERS, EmitContext, Port, ir_xml_emitter, register_ir_xml_emitter
from irforge.backends.ir_xml.graph import PortType, fmt_bool, fmt_float, fmt_ints
from irforge.dialects.nn.base import python_value


def attribute_text(value: object) -> str:
    """A property value in the opset's attribute format."""
    if isinstance(value, bool):
        return fmt_bool(value)
    if isinstance(value, float):
        return fmt_float(value)
    if isinstance(value, tuple | list):
        return fmt_ints(value) if all(isinstance(v, int) for v in value) else ", ".join(fmt_float(v) for v in value)
    return str(value)


def custom_layer(ctx: EmitContext, op: Operation, inputs: list[Port], type: str | None = None, data: Mapping[str, str] | None = None) -> list[Port]:
    """`op` as one layer of type `type` (default: its class name), version = its dialect's
    name, data = its properties (unless `data` is given), outputs typed as its results."""
    if data is None:
        data = {k: attribute_text(python_value(v)) for k, v in sorted(op.properties.items()) if k != "name"}
    outputs = [PortType.of(r.type) for r in op.results]
    return ctx.layer(type or type_name(op), inputs, outputs, name=ctx.name(op), data=data, version=op.dialect_name())


def type_name(op: Operation) -> str:
    return type(op).__name__


__all__ = ["EMITTERS", "EmitContext", "Port", "custom_layer", "ir_xml_emitter", "register_ir_xml_emitter"]
