"""The table from ONNX op type to its extractor, and the context an extractor works in.

An extractor is a small function `(ctx: NodeContext) -> SSAValue | Sequence[SSAValue]` that
reads the node's inputs and attributes and builds `nn` ops for it. Extensions register more
with `@onnx_extractor("MyOp", domain="com.example")`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irforge.errors import NotConstantError
from irforge.frontends.context import BuildContext
from irforge.frontends.onnx.attribute_schema import check_attribute, declared_attributes, expected_type, missing_required, type_name

if TYPE_CHECKING:
    from irforge.frontends.onnx.importer import GraphImporter

DEFAULT_DOMAINS = ("", "ai.onnx")

Extractor = Callable[["NodeContext"], "SSAValue | Sequence[SSAValue | None]"]

EXTRACTORS: dict[tuple[str, str], Extractor] = {}


def onnx_extractor(*op_types: str, domain: str = "") -> Callable[[Extractor], Extractor]:
    """Register the decorated function as the extractor of `op_types` in `domain`."""

    def register(fn: Extractor) -> Extractor:
        for op_type in op_types:
            EXTRACTORS[(_canonical_domain(domain), op_type)] = fn
        return fn

    return register


def _canonical_domain(domain: str) -> str:
    return "" if domain in DEFAULT_DOMAINS else domain


def find_extractor(domain: str, op_type: str) -> Extractor | None:
    return EXTRACTORS.get((_canonical_domain(domain), op_type))


class NodeContext(BuildContext):
    """What an extractor sees of one ONNX node: inputs, constants, attributes, and a builder."""

    def __init__(self, importer: GraphImporter, node: onnx.NodeProto, opset: int) -> None:
        self.importer = importer
        self.node = node
        self.opset = opset
        self.name = node.name or importer.generated_name(node)
        self._attrs = {a.name: a for a in node.attribute}

    # -- inputs ------------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        """Inputs given, not counting trailing omitted optional ones."""
        names = list(self.node.input)
        while names and not names[-1]:
            names.pop()
        return len(names)

    def has_input(self, index: int) -> bool:
        return index < len(self.node.input) and bool(self.node.input[index])

    def input(self, index: int) -> SSAValue:
        if not self.has_input(index):
            raise self.fail(f"input #{index} is required")
        from irforge.frontends.onnx.sequences import bad_kind, is_structured

        name = self.node.input[index]
        if is_structured(self.importer.values.get(name)):  # a sequence where a tensor belongs: name the node
            raise bad_kind(self.where, name, self.importer.values[name], "a tensor")
        return self.importer.value(name)

    def any_input(self, index: int) -> Any:
        """Input `index` as a tensor value or, for the ops that take them, a sequence or
        optional (`sequences.py`)."""
        if not self.has_input(index):
            raise self.fail(f"input #{index} is required")
        return self.importer.any_value(self.node.input[index])

    def optional_input(self, index: int) -> SSAValue | None:
        return self.input(index) if self.has_input(index) else None

    def inputs(self) -> list[SSAValue]:
        return [self.input(i) for i in range(self.num_inputs)]

    def input_type(self, index: int) -> TensorType:
        t = self.input(index).type
        assert isinstance(t, TensorType)
        return t

    def input_shape(self, index: int, rank: int | None = None) -> tuple[int, ...]:
        """The static shape of input `index` (-1 for dynamic dims); with `rank`, a one-line
        error for an input of another rank (extractors unpack the dims)."""
        shape = tuple(self.input_type(index).get_shape())
        if rank is not None and len(shape) != rank:
            raise self.fail(f"input #{index} has rank {len(shape)} (shape {list(shape)}), this op needs rank {rank}")
        return shape

    def constant_input(self, index: int) -> np.ndarray | None:
        """The value of input `index` if it is known at compile time, else None."""
        if not self.has_input(index):
            return None
        return self.importer.constant_value(self.input(index))

    def required_constant(self, index: int, what: str) -> np.ndarray:
        if not self.has_input(index):
            raise self.fail(f"{what} (input #{index}) is required, the node has {self.num_inputs} inputs")
        value = self.constant_input(index)
        if value is None:
            raise NotConstantError(
                f"{what} (input #{index}, '{self.node.input[index]}') must be known at conversion time",
                self.node.input[index],
                where=self.where,
                fix="give static input shapes (--input_shape) so shape computations fold",
                code="E142",
            )
        return value

    def output_used(self, index: int) -> bool:
        """Whether output `index` is named and read by a node or the graph's outputs."""
        names = self.node.output
        return index < len(names) and bool(names[index]) and names[index] in self.importer.used_names

    # -- attributes ----------------------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        """The attribute's value, checked against the op's schema (attribute_schema.py): a
        missing required attribute or one of the wrong type is a one-line error."""
        attribute = self._attrs.get(name)
        declared = declared_attributes("", self.node.op_type, self.opset) if self.node.domain in DEFAULT_DOMAINS else None
        if attribute is None:
            missing = missing_required(declared, name, self.where) if default is None else None
            if missing is not None:
                raise missing
            return default
        expected, loose = expected_type(declared, name, default)
        check_attribute(attribute, expected or type_name(attribute), self.where, loose)
        value = onnx.helper.get_attribute_value(attribute)
        if isinstance(value, bytes):
            return value.decode(errors="replace")  # not UTF-8: the extractor refuses the value by name
        if isinstance(value, onnx.TensorProto):
            from irforge.frontends.onnx.loader import tensor_to_array

            return tensor_to_array(value, self.importer.base_dir)
        if isinstance(value, list):
            return [v.decode(errors="replace") if isinstance(v, bytes) else v for v in value]
        return value

    def flag(self, name: str, default: int = 0) -> bool:
        """A 0/1 attribute: any other value is a one-line error (E041), since runtimes differ
        on it (onnxruntime reads some as `!= 0`, others as `== 1`)."""
        value = self.attr(name, default)
        if value not in (0, 1):
            raise self.fail(f"attribute {name}={value} must be 0 or 1")
        return bool(value)

    @property
    def where(self) -> str:
        return f"ONNX node '{self.name}' of type {self.node.op_type}"
