"""The table from TensorFlow op type to its extractor, and the context an extractor works in.

An extractor is a small function `(ctx: NodeContext) -> SSAValue | Sequence[SSAValue]` that
reads the node's inputs and attributes and builds `nn` ops. TensorFlow graphs are NHWC:
layout-sensitive ops are built in NCHW between `ctx.to_nchw` and `ctx.to_nhwc` transposes,
which the convert-layout pass then cancels across the network. Extensions register more
extractors with `@tf_extractor("MyOp")`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.errors import NotConstantError
from irforge.frontends.context import BuildContext
from irforge.frontends.tf import attribute_schema

if TYPE_CHECKING:
    from irforge.frontends.tf.importer import GraphImporter

Extractor = Callable[["NodeContext"], "SSAValue | Sequence[SSAValue]"]
EXTRACTORS: dict[str, Extractor] = {}
TO_NCHW, TO_NHWC = [0, 3, 1, 2], [0, 2, 3, 1]


def tf_extractor(*op_types: str) -> Callable[[Extractor], Extractor]:
    """Register the decorated function as the extractor of `op_types`."""

    def register(fn: Extractor) -> Extractor:
        for op_type in op_types:
            EXTRACTORS[op_type] = fn
        return fn

    return register


class NodeContext(BuildContext):
    """What an extractor sees of one NodeDef: inputs, constants, attributes, and a builder."""

    def __init__(self, importer: GraphImporter, node: Any) -> None:
        self.importer = importer
        self.node = node
        self.name = node.name
        self.data_inputs = [i for i in node.input if not i.startswith("^")]

    @property
    def where(self) -> str:
        return f"TensorFlow node '{self.name}' of type {self.node.op}"

    # -- inputs ------------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self.data_inputs)

    def input(self, index: int) -> SSAValue:
        if not 0 <= index < len(self.data_inputs):  # a last input (ConcatV2's axis) of a node without inputs is -1
            raise self.fail(f"input #{index} is missing" if index >= 0 else "the node has no inputs")
        return self.importer.value(self.data_inputs[index])

    def input_shape(self, index: int, rank: int | None = None) -> tuple[int, ...]:
        """The static shape of input `index` (-1 for dynamic dims); with `rank`, a one-line
        error for an input of another rank (extractors unpack the dims)."""
        t = self.input(index).type
        assert isinstance(t, TensorType)
        shape = tuple(t.get_shape())
        if rank is not None and len(shape) != rank:
            raise self.fail(f"input #{index} has rank {len(shape)} (shape {list(shape)}), this op needs rank {rank}")
        return shape

    def input_type(self, index: int) -> TensorType:
        t = self.input(index).type
        assert isinstance(t, TensorType)
        return t

    def constant_input(self, index: int) -> np.ndarray | None:
        return self.importer.constant_value(self.input(index))

    def required_constant(self, index: int, what: str) -> np.ndarray:
        value = self.constant_input(index)
        if value is None:
            raise NotConstantError(
                f"{what} (input #{index}, '{self.data_inputs[index]}') must be known at conversion time",
                self.data_inputs[index],
                where=self.where,
                fix="give static input shapes (--input_shape) so shape computations fold",
                code="E342",
            )
        return value

    def ints_input(self, index: int, what: str) -> list[int]:
        return [int(v) for v in self.required_constant(index, what).reshape(-1)]

    # -- attributes ----------------------------------------------------------------------
    def has_attr(self, name: str) -> bool:
        return name in self.node.attr

    def attr(self, name: str, default: Any = None) -> Any:
        """The attribute's Python value: int, float, bool, str, dtype enum, or a list; one of
        the wrong kind, or a required one missing, is a one-line error (attribute_schema.py)."""
        if name not in self.node.attr or self.node.attr[name].WhichOneof("value") is None:
            absent = attribute_schema.missing(name, self.where) if default is None else None
            if absent is not None:
                raise absent
            return default
        value = self.node.attr[name]
        attribute_schema.check(name, value, default, self.where)
        kind = value.WhichOneof("value")
        if kind == "list":
            listed = value.list
            for field in ("i", "f", "b", "s", "type"):
                items = list(getattr(listed, field))
                if items:
                    return [v.decode() if isinstance(v, bytes) else v for v in items]
            return []
        result = getattr(value, kind)
        return result.decode() if isinstance(result, bytes) else result

    def nhwc(self) -> bool:
        fmt = self.attr("data_format", "NHWC")
        if fmt not in ("NHWC", "NCHW"):
            raise self.fail(f"data_format '{fmt}' is not supported", fix="use NHWC or NCHW")
        return fmt == "NHWC"

    def spatial(self, name: str, default: int = 1) -> list[int]:
        """The H and W entries of a 4-value NHWC/NCHW attribute (strides, ksize, dilations)."""
        values = self.attr(name) or [default] * 4
        if len(values) != 4:
            raise self.fail(f"{name} must have 4 values, got {values}")
        return [int(v) for v in (values[1:3] if self.nhwc() else values[2:4])]

    # -- layout --------------------------------------------------------------------------
    def to_nchw(self, x: SSAValue) -> SSAValue:
        """x in NCHW for an NCHW-only `nn` op (no-op for data_format NCHW)."""
        from irforge.dialects.nn import Permute

        return self.value(Permute, [x], suffix="/to_nchw", order=TO_NCHW) if self.nhwc() else x

    def to_nhwc(self, y: SSAValue) -> SSAValue:
        from irforge.dialects.nn import Permute

        return self.value(Permute, [y], suffix="/to_nhwc", order=TO_NHWC) if self.nhwc() else y
