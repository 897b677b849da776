"""Kernels compiled in worker processes (`llvm_worker.py`) run like those compiled here."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.backends.cpu import compile_model, llvm_worker
from irforge.frontends.onnx import import_onnx
from irforge.testing import onnx_models
from tests.helpers import ort_session_run


def test_modules_compiled_by_a_worker_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started = []
    real = llvm_worker.Worker.__init__

    def spy(self, target) -> None:  # type: ignore[no-untyped-def]
        real(self, target)
        started.append(self)

    monkeypatch.setattr(llvm_worker, "PARALLEL_BYTES", 1)  # a worker even for this small model
    monkeypatch.setattr(llvm_worker.Worker, "__init__", spy)
    monkeypatch.setattr("irforge.backends.cpu._compile_workers", lambda: 2)
    proto = onnx_models.mobilenet_v2()
    x = {"data": np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    compiled = compile_model(import_onnx(proto), threads=2, cache_dir=tmp_path)
    got = next(iter(compiled(x).values()))
    compiled.close()
    assert len(started) == 1 and started[0].process.returncode == 0
    np.testing.assert_allclose(got, ort_session_run(proto, x)[0], rtol=1e-4, atol=1e-5)


def test_a_failed_worker_leaves_its_share_to_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(llvm_worker, "PARALLEL_BYTES", 1)
    monkeypatch.setattr(llvm_worker.Worker, "receive", lambda self: (self.process.kill(), self.process.wait(), None)[2])
    monkeypatch.setattr("irforge.backends.cpu._compile_workers", lambda: 2)
    proto = onnx_models.vgg()
    x = {"data": np.random.default_rng(4).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    compiled = compile_model(import_onnx(proto), threads=1, cache_dir=False)
    got = next(iter(compiled(x).values()))
    compiled.close()
    np.testing.assert_allclose(got, ort_session_run(proto, x)[0], rtol=1e-4, atol=1e-5)


def test_compile_workers_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from irforge.backends.cpu import _compile_workers

    monkeypatch.setenv("IRFORGE_COMPILE_WORKERS", "1")
    assert _compile_workers() == 1
    monkeypatch.setenv("IRFORGE_COMPILE_WORKERS", "3")
    assert _compile_workers() == 3
    monkeypatch.delenv("IRFORGE_COMPILE_WORKERS")
    assert _compile_workers() >= 1
