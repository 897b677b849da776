"""The in-memory form of an OpenVINO IR v11 graph, as the writer builds it before printing.

Layers hold their `<data>` attributes already formatted as the opset specification spells
them; Const layers hold the array their bytes come from (a view of the weight store), so the
.bin can be streamed once the whole graph is known. Nothing here knows about `nn` ops.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute

from irforge.errors import IrforgeError
from irforge.weights.dtypes import from_xdsl

# numpy dtype <-> OpenVINO element type name and port precision
ELEMENT_TYPES: dict[np.dtype, tuple[str, str]] = {
    np.dtype(np.float16): ("f16", "FP16"),
    np.dtype(np.float32): ("f32", "FP32"),
    np.dtype(np.float64): ("f64", "FP64"),
    np.dtype(np.int8): ("i8", "I8"),
    np.dtype(np.uint8): ("u8", "U8"),
    np.dtype(np.int32): ("i32", "I32"),
    np.dtype(np.int64): ("i64", "I64"),
    np.dtype(np.bool_): ("boolean", "BOOL"),
}
DTYPE_OF_ELEMENT = {name: dtype for dtype, (name, _) in ELEMENT_TYPES.items()}


def element_name(dtype: np.dtype) -> str:
    try:
        return ELEMENT_TYPES[np.dtype(dtype)][0]
    except KeyError:
        raise IrforgeError(f"element type {dtype} has no OpenVINO IR equivalent", code="E851") from None


def packed_element_name(dtype: np.dtype, bits: int) -> str:
    """`i4` / `u4`: the OpenVINO element type of int8 / uint8 values stored in `bits` bits."""
    return ("i" if np.dtype(dtype) == np.int8 else "u") + str(bits)


@dataclass(frozen=True)
class PortType:
    """Element type and dims of a port; -1 for a dim known only at run time."""

    dtype: np.dtype
    dims: tuple[int, ...]
    bits: int = 0
    """4 for a packed i4 / u4 Const's output (its values held as int8 / uint8 in `dtype`)."""

    @staticmethod
    def of(t: Attribute) -> PortType:
        assert isinstance(t, TensorType), f"expected a tensor type, got {t}"
        return PortType(from_xdsl(t.element_type), tuple(int(d) if d >= 0 else -1 for d in t.get_shape()))

    def with_dims(self, dims: Iterable[int]) -> PortType:
        return PortType(self.dtype, tuple(dims))

    def with_dtype(self, dtype: np.dtype | type) -> PortType:
        return PortType(np.dtype(dtype), self.dims)

    @property
    def precision(self) -> str:
        return ELEMENT_TYPES[self.dtype][1] if not self.bits else packed_element_name(self.dtype, self.bits).upper()

    @property
    def rank(self) -> int:
        return len(self.dims)


@dataclass
class Layer:
    """One `<layer>`: ports are listed inputs first, then outputs, as the IR numbers them."""

    id: int
    name: str
    type: str
    version: str
    data: dict[str, str]
    inputs: list[PortType]
    outputs: list[PortType]
    output_names: list[list[str]] = field(default_factory=list)
    rt_info: list[str] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    """Extra attributes of the <layer> element itself (a Result's output_names)."""
    blob: np.ndarray | None = None
    """Const layers: the values, in the element type written to the .bin."""
    blob_bits: int = 0
    """4 when the blob's int8 / uint8 values are written packed, two per byte (i4 / u4)."""
    maps: list[tuple[str, list[tuple[str, dict[str, str]]]]] = field(default_factory=list)
    """If/Loop: elements printed before the ports (`port_map`, `back_edges`), each a list of
    (tag, attributes) children."""
    bodies: list[tuple[str, IrGraph]] = field(default_factory=list)
    """If/Loop: the body nets (`then_body`, `else_body`, `body`), printed after the ports."""

    def output_port_id(self, index: int) -> int:
        return len(self.inputs) + index


@dataclass(frozen=True)
class Edge:
    from_layer: int
    from_port: int
    to_layer: int
    to_port: int


@dataclass
class IrGraph:
    name: str
    layers: list[Layer] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)

    def all_layers(self) -> Iterable[Layer]:
        """The layers, and those of the bodies of If/Loop layers, depth first."""
        for layer in self.layers:
            yield layer
            for _, body in layer.bodies:
                yield from body.all_layers()


# -- attribute formats of the opset specification --------------------------------------
def fmt_ints(values: Sequence[int]) -> str:
    """`1, 1` as OpenVINO writes int vectors (strides, pads, Const shapes)."""
    return ", ".join(str(int(v)) for v in values)


def fmt_float(value: float) -> str:
    """17 significant digits, as OpenVINO prints double attributes (exact round trip)."""
    return format(float(value), ".17g")


def fmt_bool(value: bool) -> str:
    return "true" if value else "false"


def fmt_partial_shape(dims: Sequence[int]) -> str:
    """A Parameter's shape: `1,3,224,224`, with `?` for dims known only at run time."""
    return ",".join("?" if d < 0 else str(d) for d in dims)
