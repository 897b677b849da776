"""Framework tensor names of a freshly imported model, for cut points named by tensor (ovc's
`--input conv1_out`, `--output prob_tensor`) where the IR keeps only layer names.

The importer records name -> SSA value as it builds; `layer_point` turns a tensor name into
the `layer:port` form the `cut` pass reads. The table is weakly keyed by module, so it lives
as long as the imported module and passes never have to carry it.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import OpResult, SSAValue

from irforge.dialects.nn.base import NNOp

_TABLES: weakref.WeakKeyDictionary[ModuleOp, dict[str, SSAValue]] = weakref.WeakKeyDictionary()


def record_tensor_names(module: ModuleOp, values: Mapping[str, SSAValue]) -> None:
    _TABLES[module] = dict(values)


def layer_point(module: ModuleOp, tensor: str) -> str | None:
    """`layer:port` of the op result that tensor `tensor` was imported as, or None when the
    importer recorded no such tensor (or it became a constant or a model input)."""
    value = _TABLES.get(module, {}).get(tensor)
    if not isinstance(value, OpResult) or not isinstance(value.op, NNOp) or value.op.layer_name is None:
        return None
    if value.op.parent is None:  # erased since the import
        return None
    return f"{value.op.layer_name.data}:{value.index}"
