"""Zero-copy reading of caffemodel blobs through the protobuf wire format.

A caffemodel is a binary NetParameter whose weights are the packed `BlobProto.data` floats
of each layer's `blobs`. Parsed by protobuf they would become Python lists (a float object per
element); instead the memory-mapped file is scanned at the wire level, every `data` and
`double_data` payload is cut out as a (offset, length) span, and only the skeleton (layer
names, types, parameters, blob shapes) is parsed. Blob arrays are then `np.frombuffer` views
of the mapping.

Field numbers (caffe.proto): NetParameter.layer = 100 (LayerParameter, blobs = 7),
NetParameter.layers = 2 (V1LayerParameter, blobs = 6), BlobProto.data = 5 (packed float),
BlobProto.double_data = 8 (packed double).
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass

from irforge.frontends.protowire import LENGTH_DELIMITED, Span, WireFormatError, fields, message

NET_LAYER, NET_V1_LAYERS = 100, 2
BLOBS_FIELD = {NET_LAYER: 7, NET_V1_LAYERS: 6}
BLOB_DATA, BLOB_DOUBLE_DATA = 5, 8

__all__ = ["BlobSpan", "Span", "WireFormatError", "split_blobs"]


@dataclass(frozen=True)
class BlobSpan:
    """Where one blob's values lie in the file, and their width (4: float, 8: double)."""

    span: Span
    itemsize: int


Buffer = mmap.mmap | bytes


def _strip_blob(buf: Buffer, start: int, end: int) -> tuple[bytes, BlobSpan | None]:
    parts, found = [], None
    for number, wire_type, field_start, value_start, value_end in fields(buf, start, end):
        packed = wire_type == LENGTH_DELIMITED and number in (BLOB_DATA, BLOB_DOUBLE_DATA)
        if packed and value_end > value_start:
            found = BlobSpan(Span(value_start, value_end - value_start), 4 if number == BLOB_DATA else 8)
        elif not packed:
            # unpacked values (very old writers) stay in the skeleton and parse as usual
            parts.append(buf[field_start:value_end])
    return b"".join(parts), found


def _strip_layer(buf: Buffer, start: int, end: int, blobs_field: int) -> tuple[bytes, list[BlobSpan | None]]:
    parts, spans = [], []
    for number, wire_type, field_start, value_start, value_end in fields(buf, start, end):
        if number == blobs_field and wire_type == LENGTH_DELIMITED:
            blob, span = _strip_blob(buf, value_start, value_end)
            parts.append(message(blobs_field, blob))
            spans.append(span)
        else:
            parts.append(buf[field_start:value_end])
    return b"".join(parts), spans


def split_blobs(buf: Buffer) -> tuple[bytes, dict[int, list[list[BlobSpan | None]]]]:
    """The NetParameter without blob data, and the data spans of each layer's blobs, in file
    order, keyed by the layer field (100: `layer`, 2: legacy `layers`)."""
    parts: list[bytes] = []
    spans: dict[int, list[list[BlobSpan | None]]] = {NET_LAYER: [], NET_V1_LAYERS: []}
    for number, wire_type, field_start, value_start, value_end in fields(buf, 0, len(buf)):
        if number in BLOBS_FIELD and wire_type == LENGTH_DELIMITED:
            layer, layer_spans = _strip_layer(buf, value_start, value_end, BLOBS_FIELD[number])
            parts.append(message(number, layer))
            spans[number].append(layer_spans)
        else:
            parts.append(buf[field_start:value_end])
    return b"".join(parts), spans
