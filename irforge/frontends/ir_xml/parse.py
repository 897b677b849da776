"""Reading the two files of an OpenVINO IR: the .xml into plain records, the .bin mapped.

The XML is parsed with defusedxml (an IR is user input: no entity expansion, no external
references). Every structural problem, and every Const whose bytes lie outside the .bin,
becomes a one-line `IrforgeError` naming the file and the layer.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree.ElementTree import Element

import defusedxml
import defusedxml.ElementTree as SafeET
import numpy as np

from irforge.errors import IrforgeError, one_line

ELEMENT_DTYPES: dict[str, np.dtype] = {
    "f16": np.dtype(np.float16), "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "i8": np.dtype(np.int8), "u8": np.dtype(np.uint8), "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64), "boolean": np.dtype(np.bool_),
}  # fmt: skip
PACKED_ELEMENTS: dict[str, np.dtype] = {"i4": np.dtype(np.int8), "u4": np.dtype(np.uint8)}
"""4-bit Const element types (compressed weights): read unpacked into int8 / uint8, one value
per byte, the constant marked `bits = 4` so that a written IR packs them again."""
PRECISION_DTYPES: dict[str, np.dtype] = {
    "I4": PACKED_ELEMENTS["i4"], "U4": PACKED_ELEMENTS["u4"],
    "FP16": ELEMENT_DTYPES["f16"], "FP32": ELEMENT_DTYPES["f32"], "FP64": ELEMENT_DTYPES["f64"],
    "I8": ELEMENT_DTYPES["i8"], "U8": ELEMENT_DTYPES["u8"], "I32": ELEMENT_DTYPES["i32"],
    "I64": ELEMENT_DTYPES["i64"], "BOOL": ELEMENT_DTYPES["boolean"],
}  # fmt: skip
IR_VERSIONS = ("10", "11")
NESTED = ("If", "Loop", "TensorIterator")
"""Layer types whose element keeps its body nets and port maps."""


@dataclass
class IrPort:
    id: int
    dims: tuple[int, ...]
    dtype: np.dtype | None
    names: list[str] = field(default_factory=list)


@dataclass
class IrLayer:
    id: int
    name: str
    type: str
    version: str
    data: dict[str, str]
    inputs: list[IrPort]
    outputs: list[IrPort]
    attrs: dict[str, str] = field(default_factory=dict)
    """All attributes of the <layer> element (Result's output_names, say)."""
    element: Element | None = field(default=None, repr=False)
    """The <layer> element itself, for layers with nested content (If/Loop bodies)."""

    @property
    def label(self) -> str:
        return f"IR layer '{self.name}' (id {self.id}, {self.type})"


@dataclass
class IrNet:
    name: str
    layers: dict[int, IrLayer]
    edges: list[tuple[int, int, int, int]]
    """(from layer, from port id, to layer, to port id)."""


def split_names(text: str) -> list[str]:
    """The comma-separated `names` of a port; `\\,` is a comma inside a name."""
    names, current, escaped = [], [], False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == ",":
            names.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    names.append("".join(current).strip())
    return [n for n in names if n]


def _int(text: str | None, what: str, where: str) -> int:
    try:
        return int(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise IrforgeError(f"{what} must be an integer, got {text!r}", where=where, fix="the IR is corrupt; regenerate it", code="E642") from None


def _ports(element: Element | None, where: str) -> list[IrPort]:
    ports = []
    for port in element if element is not None else []:
        dims = tuple(_int(d.text, "a <dim>", where) for d in port.findall("dim"))
        precision = port.get("precision")
        dtype = PRECISION_DTYPES.get(precision) if precision else None
        ports.append(IrPort(_int(port.get("id"), "a port id", where), dims, dtype, split_names(port.get("names", ""))))
    return ports


def _layer(element: Element, path: Path) -> IrLayer:
    where = f"{path}, layer id {element.get('id')}"
    layer_type = element.get("type")
    if not layer_type:
        raise IrforgeError("a <layer> has no type", where=where, fix="the IR is corrupt; regenerate it", code="E642")
    data = element.find("data")
    return IrLayer(
        _int(element.get("id"), "a layer id", where),
        element.get("name", f"layer_{element.get('id')}"),
        layer_type,
        element.get("version", ""),
        dict(data.attrib) if data is not None else {},
        _ports(element.find("input"), where),
        _ports(element.find("output"), where),
        dict(element.attrib),
        element if layer_type in NESTED else None,
    )


def parse_ir_xml(path: str | os.PathLike[str]) -> IrNet:
    """The layers and edges of an IR v10/v11 XML file."""
    path = Path(path)
    if not path.is_file():
        raise IrforgeError(f"IR file '{path}' not found", fix="check the path", code="E698")
    try:
        root = SafeET.parse(str(path)).getroot()
    except SafeET.ParseError as e:
        line, column = e.position
        raise IrforgeError(f"malformed IR XML: {str(e).split(':')[0]}", where=f"{path}:{line}:{column}", fix="the .xml is damaged; regenerate it", code="E699") from None
    except LookupError as e:  # <?xml encoding="UTF-99"?>: Python knows no such codec
        raise IrforgeError(f"malformed IR XML: {one_line(str(e))[:80]}", where=f"{path}:1", fix="an IR is UTF-8: declare encoding=\"UTF-8\" or none", code="E699") from None
    except defusedxml.DefusedXmlException as e:
        raise IrforgeError(f"IR XML refused: {e}", where=str(path), fix="an IR has no DTDs or entities; regenerate it", code="E697") from None
    if root.tag != "net" or root.find("layers") is None or root.find("edges") is None:
        raise IrforgeError("not an OpenVINO IR: expected <net> with <layers> and <edges>", where=str(path), fix="give the .xml of an IR", code="E696")
    if root.get("version") not in IR_VERSIONS:
        raise IrforgeError(f"IR version {root.get('version')} is not supported", where=str(path), fix=f"use IR version {' or '.join(IR_VERSIONS)} (OpenVINO 2022 or later)", code="E696")
    return parse_net(root, path, root.get("name", "main"))


def parse_net(root: Element, path: Path, name: str) -> IrNet:
    """The layers and edges under `root`: a <net>, or the body element of an If/Loop layer."""
    if root.find("layers") is None or root.find("edges") is None:
        raise IrforgeError(f"<{root.tag}> has no <layers> and <edges>", where=str(path), fix="the IR is corrupt; regenerate it", code="E696")
    layers: dict[int, IrLayer] = {}
    for element in root.find("layers"):  # type: ignore[union-attr]
        layer = _layer(element, path)
        if layer.id in layers:
            raise IrforgeError(f"two layers have id {layer.id}", where=str(path), fix="the IR is corrupt; regenerate it", code="E642")
        layers[layer.id] = layer
    edges = []
    for e in root.find("edges"):  # type: ignore[union-attr]
        where = f"{path}, edge {dict(e.attrib)}"
        edges.append(tuple(_int(e.get(k), k, where) for k in ("from-layer", "from-port", "to-layer", "to-port")))
    return IrNet(name, layers, edges)  # type: ignore[arg-type]


class BinFile:
    """The .bin, memory-mapped; Const arrays are read-only views into it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if not path.is_file():
            raise IrforgeError(f"weights file '{path}' not found", fix="put NAME.bin beside NAME.xml", code="E642")
        self.size = path.stat().st_size
        self._mapped = np.memmap(path, dtype=np.uint8, mode="r") if self.size else np.zeros(0, np.uint8)

    def const(self, layer: IrLayer) -> np.ndarray:
        """The value of a Const layer, checked against the file's extent."""
        data = layer.data
        where = f"{self.path.with_suffix('.xml').name}: {layer.label}"
        element = data.get("element_type", "")
        if element not in ELEMENT_DTYPES and element not in PACKED_ELEMENTS:
            raise IrforgeError(f"Const element type '{element}' is not supported", where=where, fix=f"use one of {', '.join([*ELEMENT_DTYPES, *PACKED_ELEMENTS])}", code="E642")
        dtype = ELEMENT_DTYPES.get(element) or PACKED_ELEMENTS[element]
        shape_text = data.get("shape", "").strip()
        shape = tuple(_int(s, "a Const shape", where) for s in shape_text.split(",")) if shape_text else ()
        offset, size = _int(data.get("offset"), "offset", where), _int(data.get("size"), "size", where)
        expected = -(-math.prod(shape) // 2) if element in PACKED_ELEMENTS else math.prod(shape) * dtype.itemsize
        if size != expected:
            raise IrforgeError(f"Const size {size} does not match {element}{list(shape)} ({expected} bytes)", where=where, fix="the IR is corrupt; regenerate it", code="E642")
        if offset < 0 or offset + size > self.size:
            raise IrforgeError(
                f"Const bytes {offset}..{offset + size} lie outside the .bin ({self.size} bytes)",
                where=where,
                fix=f"the .bin is truncated or belongs to another .xml; regenerate {self.path.name}",
                code="E642",
            )
        if element in PACKED_ELEMENTS:
            return unpack_nibbles(self._mapped[offset : offset + size], dtype, math.prod(shape)).reshape(shape)
        return self._mapped[offset : offset + size].view(dtype).reshape(shape)


def unpack_nibbles(packed: np.ndarray, dtype: np.dtype, count: int) -> np.ndarray:
    """`count` 4-bit values, two per byte with the first in the low nibble (OpenVINO's i4 /
    u4), as int8 (sign-extended) or uint8."""
    nibbles = np.stack([packed & np.uint8(0x0F), packed >> np.uint8(4)], axis=-1).reshape(-1)[:count]
    if dtype == np.int8:
        return ((nibbles ^ np.uint8(8)).astype(np.int8) - np.int8(8)).astype(np.int8)
    return nibbles.astype(np.uint8)
