"""Zero-copy reading of embedded ONNX weights through the protobuf wire format.

Parsing a 100 MB `.onnx` with protobuf holds the weights twice (the file bytes and the
parsed message) and a third time once `raw_data` is read into Python. Instead, the file is
memory-mapped and scanned at the wire level: every `raw_data` payload of
`ModelProto.graph.initializer` is cut out and remembered as a (offset, length) span of the
file, and only the remaining skeleton (graph structure, names, attributes: kilobytes) is
parsed by protobuf. Weights then are `np.frombuffer` views of the mapping, read lazily.

Field numbers (onnx.proto): ModelProto.graph = 7, GraphProto.initializer = 5,
TensorProto.raw_data = 9.
"""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass

MODEL_GRAPH = 7
GRAPH_INITIALIZER = 5
TENSOR_RAW_DATA = 9
LENGTH_DELIMITED = 2


class WireFormatError(ValueError):
    """The bytes are not a well-formed protobuf message."""


@dataclass(frozen=True)
class Span:
    offset: int
    length: int


def _varint(buf: mmap.mmap | bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise WireFormatError("truncated or malformed varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _fields(buf: mmap.mmap | bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, field start, value start, value end) of each field."""
    pos = start
    while pos < end:
        field_start = pos
        key, pos = _varint(buf, pos, end)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, value_end = _varint(buf, pos, end)
        elif wire_type == 1:
            value_end = pos + 8
        elif wire_type == LENGTH_DELIMITED:
            length, pos = _varint(buf, pos, end)
            value_end = pos + length
        elif wire_type == 5:
            value_end = pos + 4
        else:
            raise WireFormatError(f"unsupported wire type {wire_type}")
        if value_end > end:
            raise WireFormatError("a field runs past the end of its message (truncated file?)")
        yield number, wire_type, field_start, pos, value_end
        pos = value_end


def _message(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | LENGTH_DELIMITED) + _encode_varint(len(payload)) + payload


def _strip_tensor(buf: mmap.mmap | bytes, start: int, end: int) -> tuple[bytes, Span | None]:
    parts, span = [], None
    for number, wire_type, field_start, value_start, value_end in _fields(buf, start, end):
        if number == TENSOR_RAW_DATA and wire_type == LENGTH_DELIMITED:
            span = Span(value_start, value_end - value_start)
        else:
            parts.append(buf[field_start:value_end])
    return b"".join(parts), span


def _strip_graph(buf: mmap.mmap | bytes, start: int, end: int, spans: list[Span | None]) -> bytes:
    parts = []
    for number, wire_type, field_start, value_start, value_end in _fields(buf, start, end):
        if number == GRAPH_INITIALIZER and wire_type == LENGTH_DELIMITED:
            tensor, span = _strip_tensor(buf, value_start, value_end)
            parts.append(_message(GRAPH_INITIALIZER, tensor))
            spans.append(span)
        else:
            parts.append(buf[field_start:value_end])
    return b"".join(parts)


def split_weights(buf: mmap.mmap | bytes) -> tuple[bytes, list[Span | None]]:
    """The model without initializer raw_data, and each initializer's raw_data span (in order)."""
    parts, spans = [], []  # type: ignore[var-annotated]
    for number, wire_type, field_start, value_start, value_end in _fields(buf, 0, len(buf)):
        if number == MODEL_GRAPH and wire_type == LENGTH_DELIMITED:
            parts.append(_message(MODEL_GRAPH, _strip_graph(buf, value_start, value_end, spans)))
        else:
            parts.append(buf[field_start:value_end])
    return b"".join(parts), spans
