"""The object and program caches follow the module-level knobs (`cache.knob_settings`): a
knob that changes the generated code without changing any kernel's spec must not load the
other setting's objects or program from a shared cache folder (the tests' session-wide
`cache_dir` does share one)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.cache import knob_settings
from irforge.backends.cpu.codegen import gemm
from irforge.frontends.onnx import import_onnx
from irforge.testing import onnx_models
from tests.backends.cpu.test_program_cache import output


def _compile(cache: Path):  # type: ignore[no-untyped-def]
    compiled = compile_model(import_onnx(onnx_models.resnet(seed=0)), threads=1, cache_dir=cache)
    return compiled.stats, output(compiled)


def test_a_flipped_knob_misses_the_cached_program_and_kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, want = _compile(tmp_path)
    assert first.cache_misses > 0
    again, _ = _compile(tmp_path)
    assert again.program_cached
    monkeypatch.setattr(gemm, "B_PREFETCH_NEXT_PANEL", not gemm.B_PREFETCH_NEXT_PANEL)  # code, not the specs
    flipped, got = _compile(tmp_path)
    assert not flipped.program_cached and flipped.cache_misses > 0
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    monkeypatch.undo()
    back, _ = _compile(tmp_path)
    assert back.program_cached


def test_the_settings_hash_follows_plain_knobs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from irforge.backends.cpu.ops import winograd

    base = knob_settings()
    assert knob_settings() == base
    monkeypatch.setattr(winograd, "STRIDE2_F4_MIN_TILES", winograd.STRIDE2_F4_MIN_TILES + 1)
    assert knob_settings() != base
    monkeypatch.undo()
    from irforge.backends.cpu import llvm_worker

    monkeypatch.setitem(llvm_worker.OPT_LEVELS, "gemm/rolled", 3)  # a dict of plain values is a setting
    assert knob_settings() != base
    monkeypatch.undo()
    assert knob_settings() == base
    monkeypatch.setattr(winograd, "not_a_knob", 1, raising=False)  # lower case: not a setting
    monkeypatch.setattr(winograd, "_STATE", 1, raising=False)  # private: a module's own state
    assert knob_settings() == base


def test_the_settings_hash_is_the_same_in_every_process() -> None:
    """Sets of strings iterate in an order that follows each process's hash seed; the key is
    hashed from a sorted form, or a second process (`ir-run` twice) missed the first one's
    program (the clean clone's first run of this change did)."""
    import os
    import subprocess
    import sys

    code = "import irforge.backends.cpu.ops\nfrom irforge.backends.cpu.cache import knob_settings\nprint(knob_settings())"
    hashes = {subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True,
                             text=True, check=True).stdout.strip() for seed in ("1", "2", "3")}
    assert len(hashes) == 1 and knob_settings() in hashes
