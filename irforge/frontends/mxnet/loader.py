"""Reading MXNet's NDArray list files (`NAME-0000.params`, `.nd`) without MXNet.

The file is little-endian: `u64 0x112` (the list magic), `u64 0` (reserved), `u64 n`, n
NDArrays, then `u64 m` names (`u64 length` + UTF-8 bytes each; m is n, or 0 for an unnamed
list). One NDArray is

    v2/v3: u32 0xF993fac9 / 0xF993faca, i32 storage type (0 = dense), shape
    v1:    u32 0xF993fac8, shape
    legacy (before v1): u32 ndim, ndim x u32 dims   (the first word is the ndim itself)

followed, unless the shape is empty, by the context (`i32 dev_type, i32 dev_id`), `i32
type_flag` and the raw C-order data. A shape is `i32 ndim` + ndim x `i64`; ndim 0 is an
empty array whose record ends there (v3, numpy semantics: ndim 0 is a scalar and -1 empty).

The file is memory-mapped and each array is an `np.frombuffer` view of the mapping, as the
other importers keep their weights. Every way a file can be malformed (truncated, a wrong
magic, a huge ndim, a shape larger than the file, a name that is not UTF-8) is one error.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from irforge.errors import IrforgeError

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
MAX_NDIM = 32
"""MXNet's own limit is far lower in practice (kMaxDim is 6 for most ops); more is corruption."""

TYPE_FLAGS: dict[int, np.dtype] = {
    0: np.dtype("<f4"), 1: np.dtype("<f8"), 2: np.dtype("<f2"), 3: np.dtype("u1"), 4: np.dtype("<i4"),
    5: np.dtype("i1"), 6: np.dtype("<i8"), 7: np.dtype("?"), 12: np.dtype("<u2"),
}  # fmt: skip
"""MXNet's mshadow type flags; bfloat16 (12) is read as its raw 16 bits and widened on use."""
BFLOAT16 = 12


@dataclass
class NDArrayList:
    """The arrays of one file by name (`arg:`/`aux:` prefixes kept), views of `mapping`."""

    path: Path
    arrays: dict[str, np.ndarray]
    bfloat16: set[str] = field(default_factory=set)
    """Names whose array holds raw bfloat16 bits (as uint16)."""
    mapping: mmap.mmap | None = None


class _Reader:
    """A cursor over the mapped bytes; every read past the end is one error naming the offset."""

    def __init__(self, buf: mmap.mmap | bytes, where: str) -> None:
        self.buf = buf
        self.size = len(buf)
        self.pos = 0
        self.where = where

    def fail(self, what: str) -> IrforgeError:
        return IrforgeError(
            f"{self.where} is not a valid MXNet NDArray file: {what} at byte {self.pos}",
            fix="give the .params/.nd file MXNet saved (mx.nd.save, save_checkpoint, save_parameters); it may be truncated",
            code="E401",
        )

    def take(self, count: int, what: str) -> int:
        if count < 0 or self.pos + count > self.size:
            raise self.fail(f"{what} needs {count} bytes, {self.size - self.pos} are left")
        start = self.pos
        self.pos += count
        return start

    def unpack(self, fmt: str, what: str) -> tuple[int, ...]:
        start = self.take(struct.calcsize(fmt), what)
        return struct.unpack_from(fmt, self.buf, start)

    def u32(self, what: str) -> int:
        return self.unpack("<I", what)[0]

    def i32(self, what: str) -> int:
        return self.unpack("<i", what)[0]

    def u64(self, what: str) -> int:
        return self.unpack("<Q", what)[0]


def _shape(r: _Reader, ndim: int, dim_format: str, numpy_semantics: bool) -> tuple[int, ...] | None:
    """`ndim` dims (None for an empty array); each dim checked against the bytes left."""
    if numpy_semantics and ndim == -1:
        return None
    if ndim < 0 or ndim > MAX_NDIM:
        raise r.fail(f"an NDArray has ndim {ndim} (at most {MAX_NDIM} is plausible)")
    if ndim == 0 and not numpy_semantics:
        return None
    dims = r.unpack(f"<{ndim}{dim_format}", "the shape")
    if any(d < 0 for d in dims):
        raise r.fail(f"an NDArray has a negative dimension in {list(dims)}")
    return tuple(int(d) for d in dims)


def _array(r: _Reader) -> tuple[np.ndarray, int]:
    """One NDArray as a view of the buffer, and its type flag."""
    magic = r.u32("an NDArray's magic")
    numpy_semantics = magic == V3_MAGIC
    if magic in (V2_MAGIC, V3_MAGIC):
        storage = r.i32("the storage type")
        if storage != 0:
            raise IrforgeError(
                f"{r.where} holds a sparse NDArray (storage type {storage})",
                fix="save the weights dense (ndarray.tostype('default')) before converting",
                code="E402",
            )
        shape = _shape(r, r.i32("the ndim"), "q", numpy_semantics)
    elif magic == V1_MAGIC:
        shape = _shape(r, r.i32("the ndim"), "q", False)
    elif magic <= MAX_NDIM:  # legacy: the word is the ndim, dims are u32
        shape = _shape(r, magic, "I", False)
    else:
        raise r.fail(f"unknown NDArray magic 0x{magic:08x}")
    if shape is None:
        return np.zeros((0,), np.float32), 0
    r.unpack("<ii", "the context")
    flag = r.i32("the type flag")
    if flag not in TYPE_FLAGS:
        raise r.fail(f"unknown type flag {flag}")
    dtype = TYPE_FLAGS[flag]
    count = 1
    for d in shape:
        count *= d
        if count * dtype.itemsize > r.size:
            raise r.fail(f"an NDArray of shape {list(shape)} is larger than the file")
    start = r.take(count * dtype.itemsize, f"the data of an NDArray of shape {list(shape)}")
    return np.frombuffer(r.buf, dtype, count, start).reshape(shape), flag


def _names(r: _Reader, count: int) -> list[str]:
    names = []
    for i in range(count):
        length = r.u64("a name's length")
        start = r.take(length, f"name #{i}")
        try:
            names.append(bytes(r.buf[start : start + length]).decode("utf-8"))
        except UnicodeDecodeError:
            raise r.fail(f"name #{i} is not UTF-8") from None
    return names


def parse_ndarray_list(buf: mmap.mmap | bytes, where: str) -> tuple[dict[str, np.ndarray], set[str]]:
    """The named arrays of an NDArray list in `buf`, and the names holding bfloat16 bits."""
    r = _Reader(buf, where)
    if r.size < 8 or r.u64("the list magic") != LIST_MAGIC:
        r.pos = 0
        raise r.fail("the first 8 bytes are not the NDArray list magic 0x112")
    r.u64("the reserved word")
    count = r.u64("the array count")
    if count > r.size // 4:  # every array takes at least its 4-byte magic
        raise r.fail(f"the file claims {count} arrays")
    arrays, flags = [], []
    for _ in range(count):
        array, flag = _array(r)
        arrays.append(array)
        flags.append(flag)
    name_count = r.u64("the name count")
    if name_count != count:
        what = "no names" if name_count == 0 else f"{name_count} names"
        raise r.fail(f"{count} arrays come with {what} (a model's weights are a named list)")
    names = _names(r, name_count)
    if r.pos != r.size:
        raise r.fail(f"{r.size - r.pos} bytes follow the names")
    if len(set(names)) != len(names):
        raise r.fail("a name appears twice")
    return dict(zip(names, arrays)), {n for n, f in zip(names, flags) if f == BFLOAT16}


def load_ndarray_list(path: str | os.PathLike[str]) -> NDArrayList:
    """Map `path` and read its named arrays (views of the mapping)."""
    path = Path(path)
    if path.exists() and not path.is_file():  # opening a FIFO would block
        raise IrforgeError(f"MXNet weights '{path}' are not a regular file", fix="give the path of NAME-0000.params", code="E400")
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            buf: mmap.mmap | bytes = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except FileNotFoundError:
        raise IrforgeError(f"MXNet weights '{path}' do not exist", fix="check the path", code="E400") from None
    except OSError as e:
        raise IrforgeError(f"cannot read MXNet weights '{path}': {e.strerror}", fix="check the path and its permissions", code="E400") from None
    arrays, bfloat16 = parse_ndarray_list(buf, f"'{path}'")
    return NDArrayList(path, arrays, bfloat16, buf if isinstance(buf, mmap.mmap) else None)


def as_float32(array: np.ndarray, bfloat16: bool) -> np.ndarray:
    """A weight as float32: a view when it is one already, bfloat16 bits widened."""
    if bfloat16:
        return (array.astype(np.uint32) << 16).view(np.float32)
    if array.dtype == np.float32:
        return array
    return array.astype(np.float32)
