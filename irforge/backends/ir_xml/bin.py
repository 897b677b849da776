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


def blob_chunks(array: np.ndarray, dtype: np.dtype, bits: int = 0):  # type: ignore[no-untyped-def]
    """Raw little-endian bytes of `array` cast to `dtype`, a bounded chunk at a time; with
    `bits` 4, int8 / uint8 values packed two per byte (OpenVINO's i4 / u4)."""
    flat = array.reshape(-1)
    for start in range(0, flat.size, CHUNK_ELEMENTS):  # CHUNK_ELEMENTS is even: packed chunks join
        chunk = np.ascontiguousarray(flat[start : start + CHUNK_ELEMENTS]).astype(dtype, copy=False)
        yield memoryview(pack_nibbles(chunk) if bits == 4 else chunk).cast("B")


def pack_nibbles(values: np.ndarray) -> np.ndarray:
    """4-bit values (int8 -8..7 or uint8 0..15) two per byte, the first in the low nibble, as
    OpenVINO lays out i4 / u4 (and ONNX INT4 / UINT4); an odd count leaves the last high
    nibble 0."""
    nibbles = values.view(np.uint8) & np.uint8(0x0F)
    if nibbles.size % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return nibbles[0::2] | (nibbles[1::2] << np.uint8(4))


class BinWriter:
    """Appends blobs to an open binary file; `add` returns (offset, size) in bytes."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.end = 0
        self._seen: dict[bytes, tuple[int, int]] = {}

    def add(self, array: np.ndarray, dtype: np.dtype, bits: int = 0) -> tuple[int, int]:
        start = self.end
        digest = hashlib.sha256()
        self.f.seek(start)
        for chunk in blob_chunks(array, dtype, bits):
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
