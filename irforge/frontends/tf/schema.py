"""The subset of TensorFlow's GraphDef schema irforge reads, built at import time.

TensorFlow is not a dependency and no generated `_pb2` module is shipped: the messages are
declared here as tables (names, field numbers and types as in TensorFlow's public
graph.proto, node_def.proto, attr_value.proto, tensor.proto, tensor_shape.proto,
function.proto, op_def.proto and types.proto), turned into a `FileDescriptorProto` and then into message classes by
protobuf's runtime. Fields irforge does not read (debug info, gradients, arg attributes, resource
handles) are left out; protobuf keeps them as unknown fields.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "irforge.tf"
F = descriptor_pb2.FieldDescriptorProto

# message -> [(field, number, type, label, message type or None)]; label "*" = repeated
MESSAGES: dict[str, list[tuple[str, int, int, str, str | None]]] = {
    "TensorShapeProto.Dim": [("size", 1, F.TYPE_INT64, "", None), ("name", 2, F.TYPE_STRING, "", None)],
    "TensorShapeProto": [
        ("dim", 2, F.TYPE_MESSAGE, "*", "TensorShapeProto.Dim"),
        ("unknown_rank", 3, F.TYPE_BOOL, "", None),
    ],
    "TensorProto": [
        ("dtype", 1, F.TYPE_ENUM, "", "DataType"),
        ("tensor_shape", 2, F.TYPE_MESSAGE, "", "TensorShapeProto"),
        ("version_number", 3, F.TYPE_INT32, "", None),
        ("tensor_content", 4, F.TYPE_BYTES, "", None),
        ("float_val", 5, F.TYPE_FLOAT, "*", None),
        ("double_val", 6, F.TYPE_DOUBLE, "*", None),
        ("int_val", 7, F.TYPE_INT32, "*", None),
        ("string_val", 8, F.TYPE_BYTES, "*", None),
        ("int64_val", 10, F.TYPE_INT64, "*", None),
        ("bool_val", 11, F.TYPE_BOOL, "*", None),
        ("half_val", 13, F.TYPE_INT32, "*", None),
        ("uint32_val", 16, F.TYPE_UINT32, "*", None),
        ("uint64_val", 17, F.TYPE_UINT64, "*", None),
    ],
    "AttrValue.ListValue": [
        ("s", 2, F.TYPE_BYTES, "*", None),
        ("i", 3, F.TYPE_INT64, "*", None),
        ("f", 4, F.TYPE_FLOAT, "*", None),
        ("b", 5, F.TYPE_BOOL, "*", None),
        ("type", 6, F.TYPE_ENUM, "*", "DataType"),
        ("shape", 7, F.TYPE_MESSAGE, "*", "TensorShapeProto"),
        ("tensor", 8, F.TYPE_MESSAGE, "*", "TensorProto"),
    ],
    "AttrValue": [
        ("list", 1, F.TYPE_MESSAGE, "", "AttrValue.ListValue"),
        ("s", 2, F.TYPE_BYTES, "", None),
        ("i", 3, F.TYPE_INT64, "", None),
        ("f", 4, F.TYPE_FLOAT, "", None),
        ("b", 5, F.TYPE_BOOL, "", None),
        ("type", 6, F.TYPE_ENUM, "", "DataType"),
        ("shape", 7, F.TYPE_MESSAGE, "", "TensorShapeProto"),
        ("tensor", 8, F.TYPE_MESSAGE, "", "TensorProto"),
        ("placeholder", 9, F.TYPE_STRING, "", None),
        ("func", 10, F.TYPE_MESSAGE, "", "NameAttrList"),
    ],
    "NameAttrList.AttrEntry": [("key", 1, F.TYPE_STRING, "", None), ("value", 2, F.TYPE_MESSAGE, "", "AttrValue")],
    "NameAttrList": [("name", 1, F.TYPE_STRING, "", None), ("attr", 2, F.TYPE_MESSAGE, "*", "NameAttrList.AttrEntry")],
    "OpDef.ArgDef": [
        ("name", 1, F.TYPE_STRING, "", None),
        ("type", 3, F.TYPE_ENUM, "", "DataType"),
        ("type_attr", 4, F.TYPE_STRING, "", None),
        ("number_attr", 5, F.TYPE_STRING, "", None),
        ("type_list_attr", 6, F.TYPE_STRING, "", None),
    ],
    "OpDef": [
        ("name", 1, F.TYPE_STRING, "", None),
        ("input_arg", 2, F.TYPE_MESSAGE, "*", "OpDef.ArgDef"),
        ("output_arg", 3, F.TYPE_MESSAGE, "*", "OpDef.ArgDef"),
    ],
    "FunctionDef.RetEntry": [("key", 1, F.TYPE_STRING, "", None), ("value", 2, F.TYPE_STRING, "", None)],
    "FunctionDef": [
        ("signature", 1, F.TYPE_MESSAGE, "", "OpDef"),
        ("node_def", 3, F.TYPE_MESSAGE, "*", "NodeDef"),
        ("ret", 4, F.TYPE_MESSAGE, "*", "FunctionDef.RetEntry"),
    ],
    "FunctionDefLibrary": [("function", 1, F.TYPE_MESSAGE, "*", "FunctionDef")],
    "NodeDef.AttrEntry": [("key", 1, F.TYPE_STRING, "", None), ("value", 2, F.TYPE_MESSAGE, "", "AttrValue")],
    "NodeDef": [
        ("name", 1, F.TYPE_STRING, "", None),
        ("op", 2, F.TYPE_STRING, "", None),
        ("input", 3, F.TYPE_STRING, "*", None),
        ("device", 4, F.TYPE_STRING, "", None),
        ("attr", 5, F.TYPE_MESSAGE, "*", "NodeDef.AttrEntry"),
    ],
    "VersionDef": [
        ("producer", 1, F.TYPE_INT32, "", None),
        ("min_consumer", 2, F.TYPE_INT32, "", None),
        ("bad_consumers", 3, F.TYPE_INT32, "*", None),
    ],
    "GraphDef": [
        ("node", 1, F.TYPE_MESSAGE, "*", "NodeDef"),
        ("library", 2, F.TYPE_MESSAGE, "", "FunctionDefLibrary"),
        ("version", 3, F.TYPE_INT32, "", None),
        ("versions", 4, F.TYPE_MESSAGE, "", "VersionDef"),
    ],
}
MAP_ENTRIES = {"NodeDef.AttrEntry", "NameAttrList.AttrEntry", "FunctionDef.RetEntry"}
ONEOFS = {"AttrValue": "value"}
"""Messages whose fields all belong to one oneof (AttrValue holds exactly one kind of value)."""
DATA_TYPES = (
    "DT_INVALID DT_FLOAT DT_DOUBLE DT_INT32 DT_UINT8 DT_INT16 DT_INT8 DT_STRING DT_COMPLEX64 DT_INT64 "
    "DT_BOOL DT_QINT8 DT_QUINT8 DT_QINT32 DT_BFLOAT16 DT_QINT16 DT_QUINT16 DT_UINT16 DT_COMPLEX128 "
    "DT_HALF DT_RESOURCE DT_VARIANT DT_UINT32 DT_UINT64"
).split()
"""types.proto's DataType enum, by value (the `_REF` variants of TF1 variables are absent
from frozen graphs)."""
PACKED = {"float_val", "double_val", "int_val", "int64_val", "bool_val", "half_val", "uint32_val", "uint64_val", "i", "f", "b", "type"}


def _field(name: str, number: int, kind: int, label: str, type_name: str | None) -> descriptor_pb2.FieldDescriptorProto:
    field = descriptor_pb2.FieldDescriptorProto(name=name, number=number, type=kind)  # type: ignore[arg-type]
    field.label = F.LABEL_REPEATED if label == "*" else F.LABEL_OPTIONAL
    if type_name is not None:
        field.type_name = f".{PACKAGE}.{type_name}"
    if label == "*" and name in PACKED and kind != F.TYPE_MESSAGE:
        field.options.packed = True
    return field


def _file() -> descriptor_pb2.FileDescriptorProto:
    file = descriptor_pb2.FileDescriptorProto(name="irforge_tf_graph.proto", package=PACKAGE, syntax="proto3")
    enum = file.enum_type.add(name="DataType")
    enum.value.extend(descriptor_pb2.EnumValueDescriptorProto(name=n, number=i) for i, n in enumerate(DATA_TYPES))
    declared: dict[str, descriptor_pb2.DescriptorProto] = {}
    # outer messages first, so nested ones ("NodeDef.AttrEntry") have a parent to go into
    for full_name in sorted(MESSAGES, key=lambda n: n.count(".")):
        outer, _, inner = full_name.partition(".")
        message = declared[outer].nested_type.add(name=inner) if inner else file.message_type.add(name=outer)
        declared[full_name] = message
    for full_name, fields in MESSAGES.items():
        message = declared[full_name]
        if full_name in MAP_ENTRIES:
            message.options.map_entry = True
        message.field.extend(_field(*f) for f in fields)
        if full_name in ONEOFS:
            message.oneof_decl.add(name=ONEOFS[full_name])
            for field in message.field:
                field.oneof_index = 0
    return file


@cache
def message_classes() -> dict[str, Any]:
    """GraphDef, NodeDef, AttrValue, TensorProto, TensorShapeProto classes by name."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file())
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
        for name in ("GraphDef", "NodeDef", "AttrValue", "TensorProto", "TensorShapeProto", "FunctionDef", "NameAttrList")
    }


# DataType enum values of types.proto that irforge reads
DT_FLOAT, DT_DOUBLE, DT_INT32, DT_UINT8, DT_INT16, DT_INT8 = 1, 2, 3, 4, 5, 6
DT_INT64, DT_BOOL, DT_UINT16, DT_HALF, DT_UINT32, DT_UINT64 = 9, 10, 17, 19, 22, 23
NUMPY_TYPES = {
    DT_FLOAT: "float32", DT_DOUBLE: "float64", DT_INT32: "int32", DT_UINT8: "uint8", DT_INT16: "int16",
    DT_INT8: "int8", DT_INT64: "int64", DT_BOOL: "bool", DT_UINT16: "uint16", DT_HALF: "float16",
    DT_UINT32: "uint32", DT_UINT64: "uint64",
}
