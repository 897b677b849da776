"""The `nn` dialect: one op per layer of the IR layer catalog.

Ops are grouped by family, one module each (listed in FAMILIES); `NN` is the xDSL dialect
that registers them all, and every op class is importable from this package by its class
name (`from irforge.dialects.nn import Convolution`).

Adding an op: declare it in its family module (an `@irdl_op_definition` class deriving from
`base.NNOp`, with `infer_shapes` and, if needed, `verify_attributes`), give it a reference
kernel in `irforge.backends.reference.kernels`, and add tests (tests/dialects and
tests/filecheck/dialects).
"""

from __future__ import annotations

from types import ModuleType

from xdsl.ir import Dialect

from irforge.dialects.nn import activation, attention, bitwise, boxes, constant, control_flow, conv, deformable, detection, elementwise, grid_sample, indexing, linear, normalization, quantize, rcnn, recurrent, reduce, resample, shape, unique, unpool, yolo
from irforge.dialects.nn.base import NNOp, build

FAMILIES: tuple[ModuleType, ...] = (activation, attention, bitwise, boxes, constant, control_flow, conv, deformable, detection, elementwise, grid_sample, indexing, linear, normalization, quantize, rcnn, recurrent, reduce, resample, shape, unique, unpool, yolo)


def _ops_of(module: ModuleType) -> list[type[NNOp]]:
    return [
        obj
        for obj in vars(module).values()
        if isinstance(obj, type)
        and issubclass(obj, NNOp)
        and obj.__module__ == module.__name__
        and isinstance(vars(obj).get("name"), str)
    ]


OPS: tuple[type[NNOp], ...] = tuple(op for family in FAMILIES for op in _ops_of(family))
_BY_CLASS_NAME = {op.__name__: op for op in OPS}

NN = Dialect("nn", [*OPS, control_flow.Yield], [])  # nn.yield ends If/Loop bodies (not a layer)


def __getattr__(name: str) -> type[NNOp]:
    try:
        return _BY_CLASS_NAME[name]
    except KeyError:
        raise AttributeError(f"module 'irforge.dialects.nn' has no attribute '{name}'") from None


__all__ = ["FAMILIES", "NN", "OPS", "NNOp", "build", *_BY_CLASS_NAME]
