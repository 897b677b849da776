"""Writing the .bin: the raw bytes of every Const, streamed chunk by chunk, each distinct
blob once.

Blobs come from the weight store's memory-mapped arrays, so a chunk is read (and, for FP16,
converted) only while it is written; the whole .bin never exists in memory. Identical blobs
share one offset: a blob is hashed while it is written, and when the hash was seen before,
the file is cut back to where the blob began.
"""

from __future__ import annotations

import hashlib
from typing import BinaryIO

import numpy as np

CHUNK_ELEMENTS = 1 << 20


def blob_chunks(array: np.ndarray, dtype: np.dtype):  # type: ignore[no-untyped-def]
    """Raw little-endian bytes of `array` cast to `dtype`, a bounded chunk at a time."""
    flat = array.reshape(-1)
    for start in range(0, flat.size, CHUNK_ELEMENTS):
        chunk = np.ascontiguousarray(flat[start : start + CHUNK_ELEMENTS]).astype(dtype, copy=False)
        yield memoryview(chunk).cast("B")


class BinWriter:
    """Appends blobs to an open binary file; `add` returns (offset, size) in bytes."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.end = 0
        self._seen: dict[bytes, tuple[int, int]] = {}

    def add(self, array: np.ndarray, dtype: np.dtype) -> tuple[int, int]:
        start = self.end
        digest = hashlib.sha256()
        self.f.seek(start)
        for chunk in blob_chunks(array, dtype):
            digest.update(chunk)
            self.f.write(chunk)
        size = self.f.tell() - start
        key = digest.digest() + size.to_bytes(8, "little")
        if key in self._seen:
            self.f.seek(start)
            self.f.truncate()
            return self._seen[key]
        self._seen[key] = (start, size)
        self.end = start + size
        return start, size
