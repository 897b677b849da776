"""The weight store: named constant tensors kept outside the textual IR.

`nn.constant @name : tensor<...>` refers to an entry of the store attached to its module.
Entries are either views into a memory-mapped weights file or arrays computed in this
process (by a frontend or a folding pass); neither is ever turned into Python objects per
element.

File layout (`model.weights`), little-endian:

    bytes 0..7     magic  b"IRFWGT01"
    bytes 8..15    uint64 length H of the JSON index
    bytes 16..16+H JSON: {"alignment": 64, "entries": {name: {"dtype", "shape", "offset", "nbytes"}}}
    padding        up to the data section start, a multiple of the alignment
    data section   the blobs, each at data_start + offset, offsets aligned to 64 bytes

The data section alone has the layout of an OpenVINO `.bin` (raw aligned blobs addressed by
offset and size), so the IR XML writer can stream it unchanged and reuse the offsets.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from irforge.errors import IrforgeError, one_line, quoted
from irforge.weights.dtypes import dtype_from_name, dtype_name

MAGIC = b"IRFWGT01"
ALIGNMENT = 64
_HEADER_PREFIX = struct.Struct("<8sQ")


def _align(value: int, alignment: int = ALIGNMENT) -> int:
    return (value + alignment - 1) // alignment * alignment


@dataclass(frozen=True)
class WeightSpec:
    """Element type and shape of one entry, without touching its bytes."""

    dtype: np.dtype
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


class WeightStore:
    """Named read-only tensors, memory-mapped from a weights file or held in memory."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}
        self._next_suffix: dict[str, int] = {}

    # -- reading -------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> WeightStore:
        """Memory-map a weights file; entries are read lazily by the OS."""
        path = Path(path)
        if not path.is_file():
            raise IrforgeError(
                f"weights file '{path}' not found",
                fix="pass --weights PATH or put NAME.weights beside NAME.mlir",
                code="E645",
            )
        size = path.stat().st_size
        with open(path, "rb") as f:
            prefix = f.read(_HEADER_PREFIX.size)
            if len(prefix) < _HEADER_PREFIX.size or prefix[:8] != MAGIC:
                raise IrforgeError(
                    f"'{path}' is not an irforge weights file (bad magic)",
                    fix="give the .weights file written with the .mlir",
                    code="E645",
                )
            _, header_len = _HEADER_PREFIX.unpack(prefix)
            if _HEADER_PREFIX.size + header_len > size:
                raise IrforgeError(f"weights file '{path}' is truncated (index)", code="E645")
            try:
                header = json.loads(f.read(header_len))
                entries = header["entries"]
                alignment = int(header["alignment"])
                if alignment < 1 or not isinstance(entries, dict):
                    raise ValueError("bad alignment or entries")
            except (ValueError, KeyError, TypeError, RecursionError) as e:
                raise IrforgeError(
                    f"weights file {quoted(str(path))} has a corrupt index ({one_line(str(e))[:80]})",
                    fix="regenerate the .mlir and .weights together",
                    code="E610",
                ) from None
        data_start = _align(_HEADER_PREFIX.size + header_len, alignment)
        store = cls()
        if not entries:
            return store
        mapped = np.memmap(path, dtype=np.uint8, mode="r")
        for name, e in entries.items():
            try:
                dtype = dtype_from_name(e["dtype"])
                shape = tuple(int(d) for d in e["shape"])
                begin = data_start + int(e["offset"])
                nbytes = int(e["nbytes"])
                bad = any(d < 0 for d in shape) or begin < data_start or nbytes < 0
            except (ValueError, KeyError, TypeError, OverflowError):
                bad = True
            if bad or nbytes != WeightSpec(dtype, shape).nbytes or begin + nbytes > size:
                raise IrforgeError(
                    f"weights file '{path}' is truncated or corrupt (entry '{name}')",
                    fix="re-export the model",
                    code="E645",
                )
            store._arrays[name] = mapped[begin : begin + nbytes].view(dtype).reshape(shape)
        return store

    def __contains__(self, name: object) -> bool:
        return name in self._arrays

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self._arrays[name]
        except KeyError:
            raise IrforgeError(
                f"weight '@{name}' is not in the weight store",
                fix="check that the .weights file belongs to this .mlir",
                code="E645",
            ) from None

    def __len__(self) -> int:
        return len(self._arrays)

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def spec(self, name: str) -> WeightSpec:
        array = self[name]
        return WeightSpec(array.dtype, array.shape)

    # -- writing -------------------------------------------------------------------
    def branch(self) -> WeightStore:
        """A store holding the same arrays (not copied) whose additions stay its own: a pass
        pipeline run on a copy of a model (a backend's) leaves the original's store as it was."""
        other = WeightStore()
        other._arrays = dict(self._arrays)
        other._next_suffix = dict(self._next_suffix)
        return other

    def add(self, array: np.ndarray, name_hint: str = "w") -> str:
        """Add an array under a fresh name derived from `name_hint`; returns the name.

        The store keeps a read-only reference, so later in-place writes by the caller
        would be caught instead of silently changing a weight another op still reads.
        """
        array = np.asarray(array)
        if not array.flags.c_contiguous:
            array = np.ascontiguousarray(array)
        if array.flags.writeable and array.base is None:
            array.flags.writeable = False
        elif array.flags.writeable:
            array = array.copy()
            array.flags.writeable = False
        name = self._fresh_name(name_hint)
        self._arrays[name] = array
        return name

    def _fresh_name(self, hint: str) -> str:
        if hint not in self._arrays:
            return hint
        # remember where the search for this hint stopped: many entries named after one
        # layer (fusion rewrites them repeatedly) would otherwise cost a quadratic search
        i = self._next_suffix.get(hint, 1)
        while f"{hint}_{i}" in self._arrays:
            i += 1
        self._next_suffix[hint] = i + 1
        return f"{hint}_{i}"

    def save(self, path: str | os.PathLike[str], names: Iterable[str] | None = None) -> None:
        """Write the entries `names` (all if None) to `path` atomically, streaming each blob."""
        from irforge.output_files import write_files

        write_files([(path, lambda f: self.write(f, names))])

    def write(self, f: BinaryIO, names: Iterable[str] | None = None) -> None:
        """Write the entries `names` (all if None) as a weights file into `f`, blob by blob."""
        selected = list(self._arrays) if names is None else list(dict.fromkeys(names))
        entries: dict[str, dict[str, object]] = {}
        offset = 0
        for name in selected:
            array = self[name]
            entries[name] = {
                "dtype": dtype_name(array.dtype),
                "shape": list(array.shape),
                "offset": offset,
                "nbytes": array.nbytes,
            }
            offset = _align(offset + array.nbytes)
        header = json.dumps({"alignment": ALIGNMENT, "entries": entries}).encode()
        data_start = _align(_HEADER_PREFIX.size + len(header))
        f.write(_HEADER_PREFIX.pack(MAGIC, len(header)))
        f.write(header)
        for name in selected:
            f.seek(data_start + int(entries[name]["offset"]))  # type: ignore[arg-type]
            f.write(memoryview(np.ascontiguousarray(self[name])).cast("B"))
        f.truncate(data_start + offset)
