"""Names and element types of a converted model's inputs and outputs, as ir-convert's
--input / --output asked for them."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr, TensorType
from xdsl.dialects.func import FuncOp

from irforge.errors import IrforgeError
from irforge.model import input_names
from irforge.weights.dtypes import from_xdsl


def _renamed(attrs: ArrayAttr | None, renames: Mapping[str, str]) -> ArrayAttr | None:
    if attrs is None:
        return None
    entries = []
    for attr in attrs.data:
        entry = dict(attr.data)
        name = entry.get("nn.name")
        if isinstance(name, StringAttr) and name.data in renames:
            entry["nn.name"] = StringAttr(renames[name.data])
        entries.append(DictionaryAttr(entry))
    return ArrayAttr(entries)


def rename_ports(func: FuncOp, renames: Mapping[str, str]) -> None:
    """Inputs and outputs named `old` (a `layer:port` cut point) are named `new` (the tensor)."""
    if renames:
        func.arg_attrs = _renamed(func.arg_attrs, renames)
        func.res_attrs = _renamed(func.res_attrs, renames)


def check_input_types(func: FuncOp, wanted: Mapping[str, str]) -> None:
    """`--input data{f32}`: the input must have that element type already; converting it
    would change the model, which ir-convert does not do silently."""
    from irforge.tools.convert_options import ELEMENT_TYPES

    names = input_names(func)
    for name, dtype in wanted.items():
        key = name or (names[0] if len(names) == 1 else "")
        if key not in names:
            raise IrforgeError(f"--input gives an element type for '{name}', which is not an input of the converted model",
                               fix=f"its inputs are: {', '.join(names)}", code="E057")
        t = func.args[names.index(key)].type
        assert isinstance(t, TensorType)
        have = np.dtype(from_xdsl(t.element_type))
        short = next((k for k, v in ELEMENT_TYPES.items() if np.dtype(v) == have), str(have))
        if have != np.dtype(ELEMENT_TYPES[dtype]):
            raise IrforgeError(
                f"--input asks for input '{key}' as {{{dtype}}}, but the model's input is {{{short}}}",
                fix=f"irforge does not change input element types; drop {{{dtype}}} or write {{{short}}}", code="E057",
            )
