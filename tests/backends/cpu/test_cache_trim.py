"""The CPU cache's size cap (`cache.trim`, `max_cache_bytes`): the least recently used of
irforge's own cache files go once the folder passes the cap, down to 3/4 of it; other files
and fresh temporary files stay; a compile whose objects were trimmed away is a miss that
compiles afresh, with the same numbers; a bad $IRFORGE_CACHE_MAX_MB is E148."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from irforge.backends.cpu import compile_model, program_cache
from irforge.backends.cpu.cache import DEFAULT_MAX_MB, max_cache_bytes, trim
from irforge.errors import IrforgeError
from irforge.testing.onnx_models import resnet
from irforge.frontends.onnx import import_onnx


def _file(folder: Path, name: str, size: int, age: float) -> Path:
    path = folder / name
    path.write_bytes(b"x" * size)
    t = 1_700_000_000 - age
    os.utime(path, (t, t))
    return path


def test_oldest_files_go_down_to_three_quarters(tmp_path: Path) -> None:
    hexes = [f"{i:040x}" for i in range(6)]
    files = [_file(tmp_path, f"m{h}.o", 100, age=600 - 100 * i) for i, h in enumerate(hexes)]  # files[0] oldest
    other = _file(tmp_path, "notes.txt", 10_000, age=10_000)
    assert trim(tmp_path, 600) == 0  # 600 bytes: at the cap, not over it
    _file(tmp_path, f"p{'f' * 40}.json", 100, age=0)
    assert trim(tmp_path, 600) == 300  # 700 > 600: down to <= 450, the three oldest
    assert [f.exists() for f in files] == [False, False, False, True, True, True]
    assert other.exists()  # not irforge's
    assert trim(tmp_path, None) == 0


def test_fresh_temporary_files_stay(tmp_path: Path) -> None:
    tmp = tmp_path / f".m{'a' * 40}.o.k2j4_x9q"
    tmp.write_bytes(b"x" * 1000)  # mtime now: a compile may be writing it
    old = _file(tmp_path, f"s{'b' * 40}.o", 1000, age=100)
    assert trim(tmp_path, 100) == 1000
    assert tmp.exists() and not old.exists()


def test_limit_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IRFORGE_CACHE_MAX_MB", raising=False)
    assert max_cache_bytes() == DEFAULT_MAX_MB << 20
    monkeypatch.setenv("IRFORGE_CACHE_MAX_MB", "0")
    assert max_cache_bytes() is None
    monkeypatch.setenv("IRFORGE_CACHE_MAX_MB", "12")
    assert max_cache_bytes() == 12 << 20
    for bad in ("-1", "1.5", "lots"):
        monkeypatch.setenv("IRFORGE_CACHE_MAX_MB", bad)
        with pytest.raises(IrforgeError) as error:
            max_cache_bytes()
        assert error.value.code == "E148"


def test_a_compile_after_its_cache_was_trimmed_is_a_fresh_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proto = resnet(blocks=(1,), width=4, size=8)
    model, name = import_onnx(proto), proto.graph.input[0].name
    feeds = {name: np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)}
    want = compile_model(model, threads=1, cache_dir=tmp_path)(feeds)
    program_cache.wait_for_writes()
    assert trim(tmp_path, 1) > 0  # every file over a 1-byte cap
    assert not list(tmp_path.glob("[msp]*"))
    again = compile_model(model, threads=1, cache_dir=tmp_path)
    assert not again.stats.program_cached
    for key, value in again(feeds).items():
        np.testing.assert_array_equal(value, want[key])


def test_a_program_save_trims_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = _file(tmp_path, f"p{'c' * 40}.bin", 3 << 20, age=10_000)  # an old 3 MiB entry
    monkeypatch.setenv("IRFORGE_CACHE_MAX_MB", "2")
    proto = resnet(blocks=(1,), width=4, size=8)
    compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path)
    program_cache.wait_for_writes()
    assert not stale.exists() and list(tmp_path.glob("p*.json"))
