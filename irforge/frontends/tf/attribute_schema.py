"""Kinds of TensorFlow node attributes, checked where extractors read them (`NodeContext.attr`).

TensorFlow is not a dependency, so its op registry (OpDef attr types) is not at hand; but
TensorFlow names attributes consistently across ops (`strides` is always a list of ints,
`padding` a string, `T` a type), so one table by attribute name is the schema of every op
irforge reads. An attribute of another kind (`strides` a string, `padding` an int) is a
malformed graph; without this check an extractor would meet it as a Python TypeError, or
read an empty list and silently use a default. Names not in the table are checked against
the kind of the default the extractor passes.
"""

from __future__ import annotations

from typing import Any

from irforge.errors import IrforgeError, quoted

KINDS: dict[str, str] = {
    **dict.fromkeys(("strides", "ksize", "dilations", "explicit_paddings", "squeeze_dims", "size_splits"), "list(int)"),
    **dict.fromkeys(("padding", "data_format", "mode", "equation", "reduction", "message"), "string"),
    **dict.fromkeys(("block_size", "num_split", "num", "batch_dims", "N", "depth_radius", "seed", "seed2"), "int"),
    **dict.fromkeys(("transpose_a", "transpose_b", "adj_x", "adj_y", "keep_dims", "is_training", "align_corners",
                     "half_pixel_centers", "exclusive", "reverse", "validate_indices"), "bool"),
    **dict.fromkeys(("epsilon", "alpha", "beta", "bias", "momentum"), "float"),
    **dict.fromkeys(("T", "DstT", "SrcT", "dtype", "output_type", "out_type", "Tidx", "Tshape", "Tpaddings", "Index",
                     "Tindices", "Taxis", "TI", "Tmultiples", "Tperm", "Tblock_shape", "Tcrops", "U"), "type"),
    "value": "tensor",
    "shape": "shape",
}  # fmt: skip
"""Attribute name -> TensorFlow attr kind, as in TensorFlow's op definitions."""

REQUIRED = frozenset({"strides", "ksize", "padding", "block_size", "num_split", "num", "equation", "DstT", "mode", "value", "dtype"})
"""Attributes TensorFlow's op definitions give no default: a node without them is malformed."""

LIST_FIELDS = {"i": "int", "f": "float", "b": "bool", "s": "string", "type": "type", "shape": "shape", "tensor": "tensor", "func": "func"}
SINGLE_FIELDS = {"i": "int", "f": "float", "b": "bool", "s": "string", "type": "type", "shape": "shape", "tensor": "tensor",
                 "func": "func", "placeholder": "placeholder"}  # fmt: skip


def kind_of(value: Any) -> str | None:
    """The kind of an AttrValue: `int`, `list(int)`, ..., `list` for an empty list, None if unset."""
    field = value.WhichOneof("value")
    if field is None:
        return None
    if field != "list":
        return SINGLE_FIELDS.get(field, field)
    present = value.list.DESCRIPTOR.fields_by_name  # the vendored ListValue has no `func` list
    for name, kind in LIST_FIELDS.items():
        if name in present and len(getattr(value.list, name)):
            return f"list({kind})"
    return "list"


def kind_of_default(default: Any) -> str | None:
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    if isinstance(default, str):
        return "string"
    if isinstance(default, list | tuple):
        inner = kind_of_default(default[0]) if default else None
        return f"list({inner})" if inner else "list"
    return None


def matches(found: str, expected: str) -> bool:
    if found == expected:
        return True
    if found == "list":  # an empty list fits every list kind
        return expected.startswith("list")
    if expected == "list":
        return found.startswith("list")
    # numbers written as ints where floats are declared convert exactly
    return (expected, found) in (("float", "int"), ("list(float)", "list(int)"))


def check(name: str, value: Any, default: Any, where: str) -> None:
    """Raise E399 when the attribute `name` is not of its kind (the table, else the default's)."""
    expected = KINDS.get(name) or kind_of_default(default)
    found = kind_of(value)
    if expected is None or found is None or matches(found, expected):
        return
    raise IrforgeError(
        f"attribute {quoted(name)} is {_article(found)}, expected {_article(expected)}",
        where=where,
        fix="the graph is malformed: re-export or re-freeze it",
        code="E399",
    )


def missing(name: str, where: str) -> IrforgeError | None:
    """E398 for a required attribute the node lacks."""
    if name not in REQUIRED:
        return None
    return IrforgeError(
        f"required attribute {quoted(name)} ({_article(KINDS[name])}) is missing",
        where=where,
        fix="the graph is malformed: re-export or re-freeze it",
        code="E398",
    )


def _article(kind: str) -> str:
    if kind.startswith("list("):
        return f"a list of {kind[5:-1]}s"
    return {"int": "an int", "list": "a list", "type": "a dtype", "shape": "a shape"}.get(kind, f"a {kind}")


__all__ = ["KINDS", "REQUIRED", "check", "kind_of", "missing"]
