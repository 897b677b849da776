"""Attribute types of ONNX nodes, checked where extractors read them (`NodeContext.attr`).

The `onnx` package knows every standard op's attributes per opset: their type and whether
they are required. An attribute of another type (`kernel_shape` a string, `axis` a tensor)
or a required one that is missing is a malformed model; without this check an extractor
would meet it as a Python TypeError deep inside. For ops the `onnx` package does not know
(custom domains, extensions), the type of the default the extractor passes is the schema.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import onnx

from irforge.errors import IrforgeError, quoted

AttributeType = onnx.AttributeProto.AttributeType

# an INT where a FLOAT is declared converts exactly; everything else must match
COMPATIBLE = {("FLOAT", "INT")}


@cache
def declared_attributes(domain: str, op_type: str, opset: int) -> dict[str, tuple[str, bool]] | None:
    """name -> (type name, required) for a standard op at `opset`, None if onnx has no schema."""
    try:
        schema = onnx.defs.get_schema(op_type, opset, domain)
    except Exception:  # noqa: BLE001  (onnx's SchemaError: an op of another domain or an extension's)
        return None
    return {name: (attr.type.name, bool(attr.required)) for name, attr in schema.attributes.items()}


def type_name(attribute: onnx.AttributeProto) -> str:
    try:
        return AttributeType.Name(attribute.type)
    except ValueError:
        return f"type {attribute.type}"


def _kind_of_default(default: Any) -> str | None:
    """The attribute type an extractor's default implies (bool and int are both INT)."""
    if isinstance(default, bool | int):
        return "INT"
    if isinstance(default, float):
        return "FLOAT"
    if isinstance(default, str):
        return "STRING"
    if isinstance(default, list | tuple) and default:
        inner = _kind_of_default(default[0])
        return inner + "S" if inner else None
    return None


# an extractor's default of 1 for a float attribute says "a number", not "an int"
FAMILY = {"INT": "number", "FLOAT": "number", "INTS": "numbers", "FLOATS": "numbers"}


def check_attribute(attribute: onnx.AttributeProto, expected: str, where: str, loose: bool = False) -> None:
    """Raise E199 when `attribute` is not of the `expected` type (an AttributeType name);
    `loose` (an expectation from an extractor's default) takes ints and floats alike."""
    found = type_name(attribute)
    defined = found not in ("UNDEFINED",) and not found.startswith("type ")
    if defined and (found == expected or (expected, found) in COMPATIBLE):
        return
    if loose and defined and FAMILY.get(found, found) == FAMILY.get(expected, expected):
        return
    raise IrforgeError(
        f"attribute {quoted(attribute.name)} is {_article(found)}, expected {_article(expected)}",
        where=where,
        fix="the model file is malformed: re-export it (onnx.checker.check_model names such attributes too)",
        code="E199",
    )


def _article(kind: str) -> str:
    """INTS -> 'a list of ints (INTS)': the error reads as a sentence."""
    words = {"INT": "an int", "FLOAT": "a float", "STRING": "a string", "TENSOR": "a tensor", "GRAPH": "a graph",
             "INTS": "a list of ints", "FLOATS": "a list of floats", "STRINGS": "a list of strings", "TENSORS": "a list of tensors",
             "GRAPHS": "a list of graphs", "UNDEFINED": "of no type", "SPARSE_TENSOR": "a sparse tensor", "TYPE_PROTO": "a type"}  # fmt: skip
    return f"{words.get(kind, kind)} ({kind})"


def expected_type(declared: dict[str, tuple[str, bool]] | None, name: str, default: Any) -> tuple[str | None, bool]:
    """The type `name` must have and whether it is only implied by the extractor's default."""
    if declared is not None and name in declared:
        return declared[name][0], False
    return _kind_of_default(default), True


def missing_required(declared: dict[str, tuple[str, bool]] | None, name: str, where: str) -> IrforgeError | None:
    """E198 when the op's schema requires `name` (the node has no such attribute)."""
    if declared is None or name not in declared or not declared[name][1]:
        return None
    return IrforgeError(
        f"required attribute {quoted(name)} ({_article(declared[name][0])}) is missing",
        where=where,
        fix="the model file is malformed: re-export it (onnx.checker.check_model names such attributes too)",
        code="E198",
    )


__all__ = ["check_attribute", "declared_attributes", "expected_type", "missing_required"]
