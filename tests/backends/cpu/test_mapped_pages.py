"""`memory.release_mapped_pages`: the resident pages of read-only weight-file mappings are
dropped (the data reads back the same from the file), while copy-on-write and writable
mappings and heap arrays are left alone (dropping a modified private page would lose it)."""

from __future__ import annotations

import numpy as np

from irforge.backends.cpu.memory import release_mapped_pages


def _file(tmp_path, n: int = 1 << 18):  # type: ignore[no-untyped-def]
    data = np.arange(n, dtype=np.float32)
    path = tmp_path / "w.bin"
    data.tofile(path)
    return path, data


def _resident_kib(array: np.ndarray) -> int:
    """Resident KiB of the mapping that holds `array` (from /proc/self/smaps)."""
    address, current, rss = array.ctypes.data, None, 0
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                current = lo <= address < hi
            elif head == "Rss:" and current:
                rss = int(line.split()[1])
    return rss


def test_read_only_mapping_is_released_and_reads_back(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path, data = _file(tmp_path)
    mapped = np.memmap(path, dtype=np.float32, mode="r")
    view = mapped[1000:5000].reshape(50, 80)
    assert float(np.sum(mapped, dtype=np.float64)) == float(np.sum(data, dtype=np.float64))  # every page read
    before = _resident_kib(mapped)
    assert release_mapped_pages([view, view.T]) == 1
    assert _resident_kib(mapped) < before // 4
    np.testing.assert_array_equal(mapped, data)


def test_copy_on_write_and_heap_arrays_are_kept(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path, data = _file(tmp_path)
    private = np.memmap(path, dtype=np.float32, mode="c")
    private[:1000] = -1.0  # modified private pages: MADV_DONTNEED would bring back the file's
    writable = np.memmap(path, dtype=np.float32, mode="r+")
    assert release_mapped_pages([private, writable, data.copy()]) == 0
    assert np.all(private[:1000] == -1.0) and private[1000] == data[1000]
