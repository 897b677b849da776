"""Whole models on the CPU backend vs onnxruntime; threads, the object cache, the API."""

from __future__ import annotations

import time

import numpy as np
import pytest

import irforge
from irforge.backends.cpu import compile_model
from irforge.frontends.onnx import import_onnx
from irforge.testing import onnx_models
from tests.helpers import ort_session_run

MODELS = {
    "resnet": (lambda: onnx_models.resnet(), (1, 3, 32, 32)),
    "resnet_bottleneck_64": (lambda: onnx_models.resnet((1, 1), 8, 64, 10, bottleneck=True), (1, 3, 64, 64)),
    "mobilenet_v2": (lambda: onnx_models.mobilenet_v2(), (1, 3, 32, 32)),
    "vgg": (lambda: onnx_models.vgg(), (1, 3, 32, 32)),
    "transformer_encoder": (lambda: onnx_models.transformer_encoder(), (1, 8, 32)),
}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_matches_onnxruntime(name, threads, cache_dir) -> None:  # type: ignore[no-untyped-def]
    build, shape = MODELS[name]
    proto = build()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    feeds = {proto.graph.input[0].name: x}
    want = ort_session_run(proto, feeds)[0]
    compiled = compile_model(import_onnx(proto), threads=threads, cache_dir=cache_dir)
    for _ in range(2):  # a second run reuses the arena: no state leaks between runs
        got = next(iter(compiled(feeds).values()))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    compiled.close()


def test_thread_team_wakes_after_sleeping_and_stops(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Workers run back-to-back launches, wake from futex sleep after an idle gap, and exit on close."""
    compiled = compile_model(import_onnx(onnx_models.resnet()), threads=3, cache_dir=cache_dir)
    x = {"data": np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    want = next(iter(compiled(x).values()))
    for _ in range(5):
        np.testing.assert_array_equal(next(iter(compiled(x).values())), want)
    time.sleep(0.05)  # far past the workers' spin: they sleep in futex(2) until the next launch
    np.testing.assert_array_equal(next(iter(compiled(x).values())), want)
    workers = compiled._executable.team.workers
    compiled.close()
    assert len(workers) == 2 and not any(w.is_alive() for w in workers)


def test_a_thread_that_does_not_run_holds_nobody_up(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Thread 0 alone runs a 2-thread program to the end (it takes the chunks of a worker that
    never wakes: the old barrier waited for it forever), and the team runs correctly after."""
    import ctypes

    from irforge.backends.cpu.runtime import DRIVER

    compiled = compile_model(import_onnx(onnx_models.mobilenet_v2()), threads=2, cache_dir=cache_dir)
    exe = compiled._executable
    x = {"data": np.random.default_rng(3).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    want = next(iter(compiled(x).values()))
    out = exe.program.outputs[0][1]
    time.sleep(0.05)  # the worker sleeps in futex(2); the driver call below does not wake it
    exe.arena[:] = 0
    exe.sync[0] += 1  # a new epoch, as irforge_launch sets it
    driver = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)(exe.jit.address(DRIVER))
    driver(exe.table_of_tables.ctypes.data, 0, 2, exe.sync.ctypes.data)
    np.testing.assert_array_equal(exe._read(out, *exe.program.outputs[0][2:]), want)
    for _ in range(3):  # the worker, woken for these, finds the epoch moved on and joins in
        np.testing.assert_array_equal(next(iter(compiled(x).values())), want)
    compiled.close()


def test_second_compile_hits_the_cache(tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = import_onnx(onnx_models.resnet())
    first = compile_model(model, threads=1, cache_dir=tmp_path)
    second = compile_model(model, threads=1, cache_dir=tmp_path)
    assert first.stats.cache_misses > 0 and first.stats.cache_hits == 0 and not first.stats.program_cached
    # the whole program comes back (program_cache.py): every object is a hit, no IR is built
    assert second.stats.program_cached and second.stats.cache_misses == 0
    assert second.stats.cache_hits == first.stats.cache_misses
    assert not second._executable.program.modules
    x = {"data": np.ones((1, 3, 32, 32), np.float32)}
    np.testing.assert_array_equal(next(iter(first(x).values())), next(iter(second(x).values())))


def test_planner_reuses_memory(cache_dir) -> None:  # type: ignore[no-untyped-def]
    stats = compile_model(import_onnx(onnx_models.resnet()), threads=1, cache_dir=cache_dir).stats
    assert stats.arena_bytes < stats.unplanned_bytes / 2


def test_public_api(cache_dir) -> None:  # type: ignore[no-untyped-def]
    proto = onnx_models.vgg()
    run = irforge.compile(import_onnx(proto), device="cpu", threads=2, cache_dir=cache_dir)
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.testing.assert_allclose(next(iter(run({"data": x}).values())), ort_session_run(proto, {"data": x})[0], rtol=1e-4, atol=1e-5)
    with pytest.raises(irforge.errors.IrforgeError, match="unknown device"):
        irforge.compile(import_onnx(proto), device="tpu")


def test_compiling_leaves_the_models_weight_store_as_it_was() -> None:
    """The pipeline folds BatchNorm into new weights on a copy: they must not pile up in the
    caller's store (one more copy of the weights per compile)."""
    model = import_onnx(onnx_models.resnet())
    names = set(model.store)
    for _ in range(2):
        compile_model(model, threads=1, cache_dir=False).close()
    assert set(model.store) == names
