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

from irforge.frontends.protowire import LENGTH_DELIMITED, Span, WireFormatError, fields, message

MODEL_GRAPH = 7
GRAPH_INITIALIZER = 5
TENSOR_RAW_DATA = 9

__all__ = ["Span", "WireFormatError", "split_weights"]


def _strip_tensor(buf: mmap.mmap | bytes, start: int, end: int) -> tuple[bytes, Span | None]:
    parts, span = [], None
    for number, wire_type, field_start, value_start, value_end in fields(buf, start, end):
        if number == TENSOR_RAW_DATA and wire_type == LENGTH_DELIMITED:
            span = Span(value_start, value_end - value_start)
        else:
            parts.append(buf[field_start:value_end])
    return b"".join(parts), span


def _strip_graph(buf: mmap.mmap | bytes, start: int, end: int, spans: list[Span | None]) -> bytes:
    parts = []
    for number, wire_type, field_start, value_start, value_end in fields(buf, start, end):
        if number == GRAPH_INITIALIZER and wire_type == LENGTH_DELIMITED:
            tensor, span = _strip_tensor(buf, value_start, value_end)
            parts.append(message(GRAPH_INITIALIZER, tensor))
            spans.append(span)
        else:
            parts.append(buf[field_start:value_end])
    return b"".join(parts)


def split_weights(buf: mmap.mmap | bytes) -> tuple[bytes, list[Span | None]]:
    """The model without initializer raw_data, and each initializer's raw_data span (in order)."""
    parts, spans = [], []  # type: ignore[var-annotated]
    for number, wire_type, field_start, value_start, value_end in fields(buf, 0, len(buf)):
        if number == MODEL_GRAPH and wire_type == LENGTH_DELIMITED:
            parts.append(message(MODEL_GRAPH, _strip_graph(buf, value_start, value_end, spans)))
        else:
            parts.append(buf[field_start:value_end])
    return b"".join(parts), spans
