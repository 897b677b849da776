"""Reading protobuf messages at the wire level, for importers that cut weights out of a
memory-mapped model file instead of letting protobuf copy them into Python objects."""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass

LENGTH_DELIMITED = 2


class WireFormatError(ValueError):
    """The bytes are not a well-formed protobuf message."""


@dataclass(frozen=True)
class Span:
    offset: int
    length: int


def varint(buf: mmap.mmap | bytes, pos: int, end: int) -> tuple[int, int]:
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


def encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def fields(buf: mmap.mmap | bytes, start: int, end: int) -> Iterator[tuple[int, int, int, int, int]]:
    """(field number, wire type, field start, value start, value end) of each field."""
    pos = start
    while pos < end:
        field_start = pos
        key, pos = varint(buf, pos, end)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            _, value_end = varint(buf, pos, end)
        elif wire_type == 1:
            value_end = pos + 8
        elif wire_type == LENGTH_DELIMITED:
            length, pos = varint(buf, pos, end)
            value_end = pos + length
        elif wire_type == 5:
            value_end = pos + 4
        else:
            raise WireFormatError(f"unsupported wire type {wire_type}")
        if value_end > end:
            raise WireFormatError("a field runs past the end of its message (truncated file?)")
        yield number, wire_type, field_start, pos, value_end
        pos = value_end


def message(number: int, payload: bytes) -> bytes:
    """A length-delimited field `number` holding `payload`."""
    return encode_varint(number << 3 | LENGTH_DELIMITED) + encode_varint(len(payload)) + payload
