"""`nn.constant`: a tensor known at compile time.

Large tensors live in the weight store and are referenced by symbol; small ones (scalars,
shape vectors) may be inline dense attributes:

    %w = nn.constant @conv1_w : tensor<64x3x7x7xf32>
    %s = nn.constant dense<[1, 2048]> : tensor<2xi64>
    %q = nn.constant @fc_w_q4 {bits = 4 : i64} : tensor<96x2x32xui8>

`bits = 4` marks an i8 / u8 constant whose values fit in 4 bits (-8..7 / 0..15): packed
INT4 / UINT4 weights of the source model, held one per byte here (every backend computes
with them as they are) and stored packed, as OpenVINO's i4 / u4, by the IR writer.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import (
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    TensorType,
)
from xdsl.irdl import irdl_op_definition, opt_prop_def, result_def
from xdsl.parser import Parser
from xdsl.printer import Printer

from irforge.dialects.nn.base import DYN, NNOp
from irforge.weights.dtypes import from_xdsl, to_xdsl

INLINE_LIMIT = 16
"""Constants with at most this many elements are printed inline, larger ones go to the store."""
PACKED_BITS = 4
"""The one packed width `bits` takes (OpenVINO's i4 / u4)."""


@irdl_op_definition
class Constant(NNOp):
    """A constant tensor: a weight-store reference (`@name`) or an inline dense value."""

    name = "nn.constant"

    weight = opt_prop_def(SymbolRefAttr)
    value = opt_prop_def(DenseIntOrFPElementsAttr)
    bits = opt_prop_def(IntegerAttr)
    output = result_def(TensorType)

    assembly_format = None

    def infer_shapes(self) -> list[TensorType]:
        if self.value is not None:
            value_type = self.value.get_type()
            assert isinstance(value_type, TensorType)
            return [value_type]
        assert isinstance(self.output.type, TensorType)
        return [self.output.type]

    def verify_attributes(self) -> None:
        if (self.weight is None) == (self.value is None):
            raise self.error("exactly one of a weight reference or an inline value is needed")
        result_type = self.output.type
        if isinstance(result_type, TensorType) and DYN in result_type.get_shape():
            raise self.error(f"a constant needs a static shape, got {result_type}")
        if self.bits is not None:
            element = result_type.element_type if isinstance(result_type, TensorType) else None
            if self.bits.value.data != PACKED_BITS or not (isinstance(element, IntegerType) and element.width.data == 8):
                raise self.error(f"bits = {self.bits.value.data} needs bits = {PACKED_BITS} on an i8 / u8 constant, got {result_type}")

    @property
    def packed_bits(self) -> int:
        """4 when the values are stored packed 4-bit (see the module docstring), else 0."""
        return 0 if self.bits is None else self.bits.value.data

    @property
    def weight_name(self) -> str | None:
        return None if self.weight is None else self.weight.root_reference.data

    @staticmethod
    def inline(array: np.ndarray, name: str | None = None) -> Constant:
        """An inline constant holding `array` (meant for small arrays)."""
        # tobytes() writes C order for any layout; np.ascontiguousarray would make 0-d arrays 1-d
        array = np.asarray(array)
        if array.dtype == np.bool_:
            raw = (array.astype(np.uint8) * 0xFF).tobytes()
        else:
            raw = array.tobytes()
        t = TensorType(to_xdsl(array.dtype), list(array.shape))
        props = {"value": DenseIntOrFPElementsAttr(t, BytesAttr(raw))}
        if name is not None:
            props["name"] = StringAttr(name)
        return Constant.create(properties=props, result_types=[t])

    @staticmethod
    def reference(weight: str, result_type: TensorType, name: str | None = None) -> Constant:
        props: dict[str, object] = {"weight": SymbolRefAttr(weight)}
        if name is not None:
            props["name"] = StringAttr(name)
        return Constant.create(properties=props, result_types=[result_type])  # type: ignore[arg-type]

    def inline_array(self) -> np.ndarray:
        """The value of an inline constant as a read-only numpy array (no copy but for i1)."""
        assert self.value is not None
        t = self.value.get_type()
        assert isinstance(t, TensorType)
        dtype = from_xdsl(t.element_type)
        raw = self.value.data.data
        if dtype == np.bool_:
            array = np.frombuffer(raw, np.uint8) != 0
            array.flags.writeable = False
        else:
            array = np.frombuffer(raw, dtype)
        return array.reshape(tuple(t.get_shape()))

    @classmethod
    def parse(cls, parser: Parser) -> Constant:
        weight = parser.parse_optional_symbol_name()
        props: dict[str, object] = {}
        if weight is not None:
            props["weight"] = SymbolRefAttr(weight.data)
        else:
            value = parser.parse_attribute()
            if not isinstance(value, DenseIntOrFPElementsAttr):
                parser.raise_error("expected '@weight' or a dense<...> attribute")
            props["value"] = value
        extra = parser.parse_optional_attr_dict()
        props.update(extra)
        if weight is not None:
            parser.parse_punctuation(":")
            result_type = parser.parse_type()
        else:
            result_type = props["value"].get_type()  # type: ignore[union-attr]
        return cls.create(properties=props, result_types=[result_type])  # type: ignore[arg-type]

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        if self.weight is not None:
            printer.print_attribute(self.weight)
        else:
            self._print_value(printer)
        extra = {k: v for k, v in (("name", self.layer_name), ("bits", self.bits)) if v is not None}
        if extra:
            printer.print_string(" ")
            printer.print_attr_dict(extra)
        if self.weight is not None:
            printer.print_string(" : ")
            printer.print_attribute(self.output.type)

    def _print_value(self, printer: Printer) -> None:
        value = self.value
        assert value is not None
        if isinstance(value.get_element_type(), AnyFloat) and not all(
            math.isfinite(v) for v in value.iter_values()  # type: ignore[arg-type]
        ):
            # xDSL prints inf and NaN as hex integers, which its parser reads back as numbers;
            # the hex string of the raw data reads back bit for bit
            printer.print_string(f'dense<"0x{value.data.data.hex().upper()}"> : ')
            printer.print_attribute(value.get_type())
        else:
            printer.print_attribute(value)


__all__ = ["INLINE_LIMIT", "PACKED_BITS", "Constant"]
