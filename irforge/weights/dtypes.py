"""Element types: numpy dtypes, their short names in weights files, and xDSL types."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

from irforge.errors import IrforgeError

_NAMES: dict[str, np.dtype] = {
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i8": np.dtype(np.int8),
    "u8": np.dtype(np.uint8),
    "i16": np.dtype(np.int16),
    "u16": np.dtype(np.uint16),
    "i32": np.dtype(np.int32),
    "u32": np.dtype(np.uint32),
    "i64": np.dtype(np.int64),
    "u64": np.dtype(np.uint64),
    "bool": np.dtype(np.bool_),
}
_BY_DTYPE = {v: k for k, v in _NAMES.items()}

u8 = IntegerType(8, Signedness.UNSIGNED)
u16 = IntegerType(16, Signedness.UNSIGNED)
u32 = IntegerType(32, Signedness.UNSIGNED)
u64 = IntegerType(64, Signedness.UNSIGNED)
_XDSL: dict[str, Attribute] = {
    "f16": f16,
    "f32": f32,
    "f64": f64,
    "i8": i8,
    "u8": u8,
    "i16": i16,
    "u16": u16,
    "i32": i32,
    "u32": u32,
    "i64": i64,
    "u64": u64,
    "bool": i1,
}
_BY_XDSL = {v: k for k, v in _XDSL.items()}


def dtype_from_name(name: str) -> np.dtype:
    try:
        return _NAMES[name]
    except KeyError:
        raise IrforgeError(f"unsupported element type '{name}'", code="E644") from None


def dtype_name(dtype: np.dtype) -> str:
    try:
        return _BY_DTYPE[np.dtype(dtype)]
    except KeyError:
        raise IrforgeError(
            f"unsupported element type '{dtype}'", fix=f"use one of {', '.join(_NAMES)}", code="E644"
        ) from None


def to_xdsl(dtype: np.dtype) -> Attribute:
    return _XDSL[dtype_name(dtype)]


def from_xdsl(element_type: Attribute) -> np.dtype:
    try:
        return _NAMES[_BY_XDSL[element_type]]
    except KeyError:
        raise IrforgeError(f"unsupported element type '{element_type}'", code="E644") from None


def is_float(element_type: Attribute) -> bool:
    return isinstance(element_type, Float16Type | Float32Type | Float64Type)


__all__ = [
    "dtype_from_name",
    "dtype_name",
    "from_xdsl",
    "is_float",
    "to_xdsl",
    "u8",
    "u16",
    "u32",
    "u64",
]
