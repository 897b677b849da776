"""One Kaldi component as read from a file: its type token and its `<Field> value` pairs.

nnet2 and nnet3 write a component as `<Type> <Field> value ... </Type>`, so one generic reader
serves every type, including ones irforge has no extractor for (they are listed together in
one error). In binary, an int32 and a float32 look alike (size byte 4 + 4 bytes), so scalars
are kept raw and read as the extractor asks (`int` / `float`). nnet1's positional bodies are
read by `nnet1.py` into the same structure.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from irforge.errors import IrforgeError
from irforge.frontends.kaldi.tokens import KaldiReader

INT_VECTOR_FIELDS = frozenset({"<Context>", "<Sizes>", "<TimeOffsets>", "<RequiredTimeOffsets>"})
"""Fields whose value is an integer vector (in binary indistinguishable from an int32 by its
first bytes)."""


@dataclass(frozen=True)
class Scalar:
    """A number as written: raw bytes (binary) or a word (text)."""

    raw: bytes | str

    def as_int(self) -> int:
        if isinstance(self.raw, str):
            return int(self.raw)
        return struct.unpack("<i" if len(self.raw) == 4 else "<q", self.raw)[0]

    def as_float(self) -> float:
        if isinstance(self.raw, str):
            return float(self.raw)
        return struct.unpack("<f" if len(self.raw) == 4 else "<d", self.raw)[0]


Value = Scalar | bool | np.ndarray | None


@dataclass
class Component:
    """A component's type token (`<AffineComponent>`), its name (nnet3) or index, its fields,
    and where it was read (for errors)."""

    kind: str
    name: str
    where: str
    fields: dict[str, list[Value]] = field(default_factory=dict)
    dims: tuple[int, int] | None = None
    """nnet1's (output dim, input dim) from the component header."""
    nested: list[list[Component]] = field(default_factory=list)
    """nnet1 ParallelComponent: the nested nets, each a list of components."""

    def error(self, what: str, fix: str | None = None, code: str = "E509") -> IrforgeError:
        return IrforgeError(f"Kaldi component {self.kind} '{self.name}': {what}", where=self.where, fix=fix, code=code)

    def has(self, key: str) -> bool:
        return key in self.fields

    def _one(self, key: str) -> Value:
        values = self.fields.get(key)
        if not values:
            raise self.error(f"has no {key} value", fix="check that the model is complete", code="E502")
        return values[0]

    def int(self, key: str, default: int | None = None) -> int:
        if default is not None and key not in self.fields:
            return default
        value = self._one(key)
        if not isinstance(value, Scalar):
            raise self.error(f"{key} is not a number", code="E502")
        try:
            return value.as_int()
        except (ValueError, struct.error):
            raise self.error(f"{key} is not an integer", code="E502") from None

    def float(self, key: str, default: float | None = None) -> float:
        if default is not None and key not in self.fields:
            return default
        value = self._one(key)
        if not isinstance(value, Scalar):
            raise self.error(f"{key} is not a number", code="E502")
        try:
            return value.as_float()
        except (ValueError, struct.error):
            raise self.error(f"{key} is not a number", code="E502") from None

    def bool(self, key: str, default: bool | None = None) -> bool:
        if default is not None and key not in self.fields:
            return default
        value = self._one(key)
        if not isinstance(value, bool):
            raise self.error(f"{key} is not a bool", code="E502")
        return value

    def array(self, key: str, ndim: int) -> np.ndarray:
        value = self._one(key)
        if not isinstance(value, np.ndarray):
            raise self.error(f"{key} is not an array", code="E502")
        if value.ndim != ndim:
            raise self.error(f"{key} should be a {'matrix' if ndim == 2 else 'vector'}, found {value.ndim}-D", code="E502")
        return value


def read_fields(reader: KaldiReader, component: Component, end: str) -> Component:
    """The `<Field> value...` pairs of `component` up to its closing token `end`."""
    while True:
        if reader.at_end():
            raise reader.error(f"the file ends inside {component.kind} (no {end})")
        key = reader.token()
        if key == end:
            return component
        component.fields[key] = _values(reader, key)


def _values(reader: KaldiReader, key: str) -> list[Value]:
    """The values after one field token: up to the next token."""
    values: list[Value] = []
    while not reader.at_end() and reader.peek_byte() != b"<":
        if key in INT_VECTOR_FIELDS and (reader.binary or reader.peek_byte() == b"["):
            values.append(reader.int_vector())
        elif key == "<Offsets>" and _is_pair_vector(reader):  # a ConvolutionModel's (time, height) pairs
            values.append(reader.int_pair_vector())
        elif reader.next_is_array():
            values.append(reader.array())
        elif reader.binary:
            values.append(binary_scalar(reader))
        else:
            word = reader.word()
            values.append(word == "T" if word in ("T", "F") else Scalar(word))
        if len(values) > 1 << 16:
            raise reader.error(f"field {key} has more than 65536 values")
    return values


def binary_scalar(reader: KaldiReader) -> Value:
    head = reader.peek_byte()
    if head in (b"T", b"F"):
        return reader.bool()
    size = head[0] if head else -1
    if size not in (4, 8):
        raise reader.error(f"expected a value, found byte 0x{size & 0xFF:02x}")
    reader.pos += 1
    return Scalar(reader._take(size))


def _is_pair_vector(reader: KaldiReader) -> bool:
    """`<Offsets>` is a float vector in PerElementOffset/ScaleAndOffset, integer pairs in a
    ConvolutionModel: binary pairs start with a size byte, text ones hold commas."""
    if reader.binary:
        return reader.peek_byte() == b"\x04"
    if reader.peek_byte() != b"[":
        return False
    end = reader.data.find(b"]", reader.pos)
    return end > 0 and b"," in bytes(reader.data[reader.pos : end])
