"""Host memory for compiled models: 2 MiB-aligned regions backed by transparent huge pages.

A 1x1 convolution reads its input rows 12 KiB apart and an implicit GEMM its channel planes
13 KiB apart, so with 4 KiB pages nearly every k step of the micro-kernel touches a new page,
and ResNet-50's 100 MB of packed weights stream through 25,000 of them. Regions madvise'd
MADV_HUGEPAGE (the kernel's THP mode on most distributions is `madvise`) turn that into 2 MiB
pages; where the kernel refuses, the region is ordinary memory.

`release_freed_memory` gives the heap's free pages back to the OS (glibc keeps them);
`release_mapped_pages` drops the resident pages of the weight files a model maps.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterable
import mmap

import numpy as np

HUGE_PAGE = 2 << 20


class Region:
    """An anonymous mapping with a 2 MiB-aligned byte view `data` of `nbytes`."""

    def __init__(self, nbytes: int, huge_now: bool = True) -> None:
        """`huge_now` False: ordinary pages at first, madvise'd only by `huge_later` (see there)."""
        self.nbytes = max(int(nbytes), 1)
        self._size = self.nbytes + HUGE_PAGE
        self._map = mmap.mmap(-1, self._size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        raw = np.frombuffer(self._map, np.uint8)
        self._start = -raw.ctypes.data % HUGE_PAGE  # a multiple of the page size: mappings are page-aligned
        if huge_now:
            self.huge_later()
        self.data = raw[self._start:self._start + self.nbytes]

    def huge_later(self) -> None:
        """madvise MADV_HUGEPAGE. Before the first touch, each fault takes a 2 MiB page, which
        on a long-running host's fragmented memory means direct compaction: a program-cache
        hit reading BERT's 414 MiB into a fresh region took 1.3-1.7 s, 0.33 s in 4 KiB pages
        (ResNet-50 0.69 -> 0.26 s; session 13). After the touch it only lets khugepaged merge
        the pages in the background."""
        if hasattr(mmap, "MADV_HUGEPAGE"):
            try:
                self._map.madvise(mmap.MADV_HUGEPAGE, self._start, self._size - self._start)
            except OSError:
                pass

    def view(self, offset: int, like: np.ndarray) -> np.ndarray:
        """An array of `like`'s dtype and shape at byte `offset`, holding a copy of `like`."""
        out = self.data[offset:offset + like.nbytes].view(like.dtype).reshape(like.shape)
        out[...] = like
        return out


def release_freed_memory() -> None:
    """Give the heap's free pages back to the OS: glibc keeps what was freed, arrays of up to
    32 MiB included (its mmap threshold rises to the largest block freed), so RSS counts them
    until this trim (ResNet-50: RSS after a cold compile 712 -> 560 MB)."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def release_mapped_pages(arrays: Iterable[np.ndarray]) -> int:
    """Drop this process's resident pages of the read-only file mappings the arrays view (a
    model's weights mapped from its .bin / .onnx / .weights file); returns the mappings
    released. Such pages count in RSS once read (hashing for the program cache's key, packing)
    though a compiled model never reads them again: BERT-base under `ir-run --device cpu` kept
    its 414 MiB file resident beside the 414 MiB of packed constants. MADV_DONTNEED on a
    read-only file mapping loses nothing: a later read faults the page in again from the file
    (the page cache, mostly). Writable or anonymous memory is never touched."""
    roots: dict[int, mmap.mmap] = {}
    for array in arrays:
        base = array
        while isinstance(base, np.ndarray) and base.base is not None:
            base = base.base
        if isinstance(base, mmap.mmap):
            roots[id(base)] = base
    released = 0
    for mapping in roots.values():
        try:
            if np.frombuffer(mapping, np.uint8).flags.writeable:  # ACCESS_WRITE / ACCESS_COPY: keep
                continue
            mapping.madvise(mmap.MADV_DONTNEED)
        except (ValueError, OSError, AttributeError):  # closed, empty, or no madvise here
            continue
        released += 1
    return released
