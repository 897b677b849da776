"""Kernels compiled in worker processes (`llvm_worker.py`) run like those compiled here."""

from __future__ import annotations

import re
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


def test_a_large_model_starts_its_worker_before_lowering(monkeypatch: pytest.MonkeyPatch) -> None:
    """With as many ops as `EAGER_WORKER_OPS` the first worker process starts before any IR
    is submitted (PARALLEL_BYTES is out of reach here: no worker otherwise) and compiles
    what it is sent."""
    import irforge.backends.cpu as cpu

    started = []
    real_init = llvm_worker.Worker.__init__

    def spy(self, target) -> None:  # type: ignore[no-untyped-def]
        real_init(self, target)
        started.append(self)

    monkeypatch.setattr(llvm_worker, "PARALLEL_BYTES", 1 << 40)
    monkeypatch.setattr(llvm_worker.Worker, "__init__", spy)
    monkeypatch.setattr(cpu, "_compile_workers", lambda: 2)
    monkeypatch.setattr(cpu, "EAGER_WORKER_OPS", 1)
    proto = onnx_models.vgg()
    x = {"data": np.random.default_rng(4).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    compiled = compile_model(import_onnx(proto), threads=1, cache_dir=False)
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


def test_packed_gemms_skip_loop_unrolling_and_still_compute() -> None:
    """A packed-A GEMM's module asks LLVM not to unroll (its k loop is blocked by hand); a
    shifted or batched one does not; the flag reaches `compile_one`, whose object differs."""
    from llvmlite import ir

    from irforge.backends.cpu.codegen.gemm import Batch, GemmSpec, Shifted, gemm_kernel
    from irforge.backends.cpu.jit import Jit, unrolls

    jit = Jit(None)

    def module(spec: GemmSpec) -> ir.Module:
        m = jit.module("kgemm_test")
        gemm_kernel(m, spec, "kgemm_test")
        return m

    plain = module(GemmSpec(m=20, n=50, k=40, a_panel=True, ldb=50, ldc=50))
    assert not unrolls(plain)
    assert unrolls(module(GemmSpec(m=20, n=50, k=40, a_panel=False, a_rs=40, a_cs=1, b_panel=True, ldb=50, ldc=50)))
    assert unrolls(module(GemmSpec(m=20, n=50, k=40, a_panel=True, ldb=50, ldc=50, batches=(Batch(2, 0, 0, 1000),))))
    shifted = Shifted(offsets=(0, 1, 2), plane=60, row=12, cols=10, rows=5)
    assert unrolls(module(GemmSpec(m=20, n=60, k=30, a_panel=True, ldb=0, ldc=50, kc=30, shifted=shifted)))
    tm = llvm_worker.target_machine(jit.triple, jit.cpu, jit.features)
    text = jit.text(plain)
    assert llvm_worker.compile_one(tm, text, 3, False) != llvm_worker.compile_one(tm, text, 3, True)


def test_rolled_gemms_at_their_level(monkeypatch: pytest.MonkeyPatch) -> None:
    """`OPT_LEVELS` by kind, and by kind + "/rolled" for modules LLVM does not unroll: a
    1x1 convolution's packed-A GEMM goes to LLVM at O1 (the default table), other modules
    at O3, and the model still computes what onnxruntime does."""
    assert llvm_worker.opt_level("k0123_gemm", unroll=False) == llvm_worker.OPT_LEVELS.get("gemm/rolled", 3) == 1
    assert llvm_worker.opt_level("k0123_gemm", unroll=True) == 3
    assert llvm_worker.opt_level("k0123_dwconv", unroll=False) == 3
    monkeypatch.setitem(llvm_worker.OPT_LEVELS, "pointwise", 2)
    assert llvm_worker.opt_level("k0123_pointwise", unroll=False) == 2
    monkeypatch.delitem(llvm_worker.OPT_LEVELS, "pointwise")
    levels: dict[str, int] = {}
    submit = llvm_worker.Pool.submit

    def record(self, item):  # type: ignore[no-untyped-def]
        levels[item[0]] = item[2]
        submit(self, item)

    monkeypatch.setattr(llvm_worker.Pool, "submit", record)
    proto = onnx_models.resnet(bottleneck=True)  # 1x1 convolutions: packed-A GEMMs
    model = import_onnx(proto)
    feeds = {"data": np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    compiled = compile_model(model, threads=1, cache_dir=False)
    got = compiled(feeds)
    compiled.close()
    assert 1 in levels.values() and 3 in levels.values()
    np.testing.assert_allclose(next(iter(got.values())), ort_session_run(proto, feeds)[0], rtol=1e-4, atol=1e-4)


def test_winograd_transforms_emitted_at_their_level(monkeypatch: pytest.MonkeyPatch) -> None:
    """`EMIT_LEVELS` by kind: the Winograd transforms' modules reach the target machine of
    code-generation level 1 (in this process and in a worker process), the others level 3,
    and the model still computes what onnxruntime does."""
    assert llvm_worker.emit_level("k0123_winograd_in") == llvm_worker.EMIT_LEVELS.get("winograd_in", 3) == 1
    assert llvm_worker.emit_level("k0123_winograd_out") == 1
    assert llvm_worker.emit_level("k0123_gemm") == llvm_worker.emit_level("driver") == 3
    levels: dict[str, int] = {}
    submit = llvm_worker.Pool.submit

    def record(self, item):  # type: ignore[no-untyped-def]
        # keyed by the kernel's function name (the item's key is the cache's)
        levels[re.search(r"define [^@]*@\"?(\w+)", item[1]).group(1)] = item[4]
        submit(self, item)

    monkeypatch.setattr(llvm_worker.Pool, "submit", record)
    monkeypatch.setattr(llvm_worker, "PARALLEL_BYTES", 1)  # a worker process takes some modules
    monkeypatch.setattr("irforge.backends.cpu._compile_workers", lambda: 2)
    made: list[int] = []
    real = llvm_worker.target_machine

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        made.append(kwargs.get("opt", 3))
        return real(*args, **kwargs)

    monkeypatch.setattr(llvm_worker, "target_machine", spy)
    proto = onnx_models.resnet(width=32, size=112)  # 3x3 convolutions: Winograd
    feeds = {"data": np.random.default_rng(1).standard_normal((1, 3, 112, 112)).astype(np.float32)}
    compiled = compile_model(import_onnx(proto), threads=1, cache_dir=False)
    got = compiled(feeds)
    compiled.close()
    winograd = {name: level for name, level in levels.items() if "winograd" in name}
    assert winograd and set(winograd.values()) == {1} and 3 in levels.values(), levels
    assert 1 in made
    np.testing.assert_allclose(next(iter(got.values())), ort_session_run(proto, feeds)[0], rtol=1e-4, atol=1e-4)
