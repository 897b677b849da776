"""Caffe's message classes, built at run time from the schema text in `caffe_proto.py`.

A small parser reads the proto2 subset used there (top-level and nested messages and enums,
`optional`/`repeated` fields with `default` and `packed` options) into a
`FileDescriptorProto`; protobuf's descriptor pool and message factory then make real
message classes, so `text_format` parses prototxts and `FromString` parses caffemodels with
no generated code and no protoc.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

from irforge.frontends.caffe.caffe_proto import CAFFE_PROTO

PACKAGE = "caffe"
_F = descriptor_pb2.FieldDescriptorProto
SCALARS = {
    "double": _F.TYPE_DOUBLE, "float": _F.TYPE_FLOAT, "int64": _F.TYPE_INT64,
    "uint64": _F.TYPE_UINT64, "int32": _F.TYPE_INT32, "uint32": _F.TYPE_UINT32,
    "bool": _F.TYPE_BOOL, "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES,
}  # fmt: skip
_TOKEN = re.compile(r'\s*("[^"]*"|[A-Za-z_][\w.]*|-?[\d.]+(?:[eE][-+]?\d+)?|[{}\[\]=;,])')


class _Tokens:
    def __init__(self, text: str) -> None:
        text = re.sub(r"//[^\n]*", "", text)
        self.items = [m.group(1) for m in _TOKEN.finditer(text)]
        self.pos = 0

    def peek(self) -> str:
        return self.items[self.pos]

    def next(self) -> str:
        self.pos += 1
        return self.items[self.pos - 1]

    def expect(self, token: str) -> None:
        got = self.next()
        if got != token:
            raise ValueError(f"caffe schema: expected '{token}', got '{got}' at token {self.pos}")

    def done(self) -> bool:
        return self.pos >= len(self.items)


def _enum(tokens: _Tokens) -> descriptor_pb2.EnumDescriptorProto:
    enum = descriptor_pb2.EnumDescriptorProto(name=tokens.next())
    tokens.expect("{")
    while tokens.peek() != "}":
        name = tokens.next()
        tokens.expect("=")
        enum.value.add(name=name, number=int(tokens.next()))
        tokens.expect(";")
    tokens.next()
    return enum


def _field(tokens: _Tokens, label: str) -> tuple[_F, str]:
    """A field; its type name is resolved once all messages and enums are known."""
    type_name, name = tokens.next(), tokens.next()
    tokens.expect("=")
    field = _F(name=name, number=int(tokens.next()))
    field.label = _F.LABEL_REPEATED if label == "repeated" else _F.LABEL_OPTIONAL
    if tokens.peek() == "[":
        tokens.next()
        while True:
            option = tokens.next()
            tokens.expect("=")
            value = tokens.next()
            if option == "default":
                field.default_value = value.strip('"')
            elif option == "packed":
                field.options.packed = value == "true"
            if tokens.next() == "]":
                break
    tokens.expect(";")
    return field, type_name


def _message(tokens: _Tokens, unresolved: list[tuple[str, str, str]]) -> descriptor_pb2.DescriptorProto:
    message = descriptor_pb2.DescriptorProto(name=tokens.next())
    tokens.expect("{")
    while tokens.peek() != "}":
        word = tokens.next()
        if word == "enum":
            message.enum_type.append(_enum(tokens))
        else:
            field, type_name = _field(tokens, word)
            message.field.append(field)
            unresolved.append((message.name, field.name, type_name))
    tokens.next()
    return message


def _resolve(field: _F, type_name: str, owner: str, enums: set[str], messages: set[str]) -> None:
    if type_name in SCALARS:
        field.type = SCALARS[type_name]
        return
    for candidate in (f"{owner}.{type_name}", type_name):
        if candidate in enums or candidate in messages:
            field.type = _F.TYPE_ENUM if candidate in enums else _F.TYPE_MESSAGE
            field.type_name = f".{PACKAGE}.{candidate}"
            return
    raise ValueError(f"caffe schema: unknown type '{type_name}' in message {owner}")


def parse_schema(text: str) -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto of a proto2 schema text in the subset described above."""
    proto = descriptor_pb2.FileDescriptorProto(name="irforge_caffe.proto", package=PACKAGE, syntax="proto2")
    tokens = _Tokens(text)
    # (message, field, type name): protobuf copies on append, so fields are found again later
    unresolved: list[tuple[str, str, str]] = []
    while not tokens.done():
        kind = tokens.next()
        if kind == "enum":
            proto.enum_type.append(_enum(tokens))
        elif kind == "message":
            proto.message_type.append(_message(tokens, unresolved))
        else:
            raise ValueError(f"caffe schema: unexpected '{kind}' at top level")
    enums = {e.name for e in proto.enum_type} | {
        f"{m.name}.{e.name}" for m in proto.message_type for e in m.enum_type
    }
    by_name = {m.name: m for m in proto.message_type}
    for owner, field_name, type_name in unresolved:
        field = next(f for f in by_name[owner].field if f.name == field_name)
        _resolve(field, type_name, owner, enums, set(by_name))
    return proto


@cache
def message_classes() -> dict[str, type[Message]]:
    """Message class by name (`NetParameter`, `BlobProto`, ...), built once per process."""
    pool = descriptor_pool.DescriptorPool()
    proto = parse_schema(CAFFE_PROTO)
    pool.Add(proto)
    return {
        m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{m.name}"))
        for m in proto.message_type
    }


def net_parameter() -> Any:
    """A new, empty NetParameter message."""
    return message_classes()["NetParameter"]()
