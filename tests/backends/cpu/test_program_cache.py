"""The whole-program cache (`program_cache.py`): what a hit reuses, what makes a miss."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from irforge.backends.cpu import compile_model, program_cache
from irforge.frontends.onnx import import_onnx
from irforge.testing import onnx_models
from tests.helpers import ort_session_run

X = {"data": np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32)}


def output(compiled) -> np.ndarray:  # type: ignore[no-untyped-def]
    try:
        return next(iter(compiled(X).values()))
    finally:
        compiled.close()


def test_other_weights_miss_the_program_but_hit_every_kernel(tmp_path: Path) -> None:
    """The key holds the weights' bytes: same graph, other weights is a new program (its
    packed weights differ) built from the cached kernels, whose modules get no IR."""
    first = compile_model(import_onnx(onnx_models.resnet(seed=0)), threads=1, cache_dir=tmp_path)
    first_out = output(first)
    proto = onnx_models.resnet(seed=1)
    other = compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path)
    assert not other.stats.program_cached and other.stats.cache_misses == 0
    modules = other._executable.program.modules
    assert modules and all(m.cached is not None and not m.functions for m in modules)
    got = output(other)
    np.testing.assert_allclose(got, ort_session_run(proto, X)[0], rtol=1e-4, atol=1e-5)
    assert not np.allclose(got, first_out)
    again = compile_model(import_onnx(proto), threads=2, cache_dir=tmp_path)
    assert again.stats.program_cached
    np.testing.assert_array_equal(output(again), got)


def test_a_missing_object_or_constants_file_compiles_again(tmp_path: Path) -> None:
    proto = onnx_models.mobilenet_v2()
    want = ort_session_run(proto, X)[0]
    np.testing.assert_allclose(output(compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path)), want, rtol=1e-4, atol=1e-5)
    next(tmp_path.glob("s*.o")).unlink()
    second = compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path)
    assert not second.stats.program_cached and second.stats.cache_misses == 1
    np.testing.assert_allclose(output(second), want, rtol=1e-4, atol=1e-5)
    program_cache.wait_for_writes()  # the entry is written in a thread: cut it once it is complete
    for constants in tmp_path.glob("p*.bin"):
        constants.write_bytes(constants.read_bytes()[:-64])  # cut short: not a usable entry
    third = compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path)
    assert not third.stats.program_cached and third.stats.cache_misses == 0
    np.testing.assert_allclose(output(third), want, rtol=1e-4, atol=1e-5)
    assert compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path).stats.program_cached


def test_no_program_cache_without_a_cache_directory(tmp_path: Path) -> None:
    compiled = compile_model(import_onnx(onnx_models.vgg()), threads=1, cache_dir=False)
    assert not compiled.stats.program_cached
    compiled.close()


def test_the_key_follows_irforge_sources_and_the_pipeline(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A pass or dialect edited since the program was cached (the key is taken before the
    pipeline runs), or another pipeline, is a new program."""
    from irforge.backends.cpu import PIPELINE, program_cache

    model = import_onnx(onnx_models.vgg())
    compile_model(model, threads=1, cache_dir=tmp_path).close()
    assert compile_model(model, threads=1, cache_dir=tmp_path).stats.program_cached
    assert not compile_model(model, threads=1, cache_dir=tmp_path, pipeline=PIPELINE + ",canonicalize").stats.program_cached
    monkeypatch.setattr(program_cache, "sources_version", lambda: "edited")
    assert not compile_model(model, threads=1, cache_dir=tmp_path).stats.program_cached


def test_a_program_with_reference_host_steps_is_cached(tmp_path: Path) -> None:
    """RoBERTa's position ids (an i32 CumSum runs its reference kernel as a host step; the i64
    GatherElements beside it did too before its native kernel, session 11) made every compile
    of it a full one: the host steps' symbols were random, so the program was never saved and
    its driver never hit the object cache."""
    import onnx
    from onnx import TensorProto, helper

    nodes = [
        helper.make_node("CumSum", ["ids", "axis"], ["positions"]),
        helper.make_node("GatherElements", ["table", "index"], ["picked"], axis=1),
        helper.make_node("Relu", ["x"], ["y"]),
    ]
    inits = [
        helper.make_tensor("axis", TensorProto.INT64, [], [1]),
        helper.make_tensor("table", TensorProto.INT64, [1, 32], list(range(100, 132))),
    ]
    graph = helper.make_graph(nodes, "host", [
        helper.make_tensor_value_info("ids", TensorProto.INT32, [1, 16]),
        helper.make_tensor_value_info("index", TensorProto.INT64, [1, 16]),
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64]),
    ], [helper.make_tensor_value_info(n, t, s) for n, t, s in (
        ("positions", TensorProto.INT32, [1, 16]), ("picked", TensorProto.INT64, [1, 16]), ("y", TensorProto.FLOAT, [2, 64]))],
        inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(proto)
    rng = np.random.default_rng(3)
    feeds = {"ids": rng.integers(0, 3, (1, 16)).astype(np.int32), "index": rng.integers(0, 32, (1, 16)),
             "x": rng.standard_normal((2, 64)).astype(np.float32)}
    want = {"positions": np.cumsum(feeds["ids"], axis=1, dtype=np.int32), "picked": feeds["index"] + 100,
            "y": np.maximum(feeds["x"], 0)}
    runs = []
    for _ in range(2):
        compiled = compile_model(import_onnx(proto), threads=2, cache_dir=tmp_path)
        assert len(compiled._executable.program.host_steps) == 1
        got = compiled(feeds)
        compiled.close()
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value)
        runs.append(compiled.stats)
    assert not runs[0].program_cached
    assert runs[1].program_cached and runs[1].cache_misses == 0


def test_object_cache_write_failure_is_only_a_miss(tmp_path, monkeypatch):
    """A full or read-only cache directory must not fail the compile that writes to it."""
    import irforge.backends.cpu.cache as cache_module

    cache = cache_module.ObjectCache(tmp_path, "x86_64-unknown-linux-gnu")

    def full(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_module.os, "fdopen", full)
    cache.store("m0123", b"object")
    assert not list(tmp_path.iterdir())  # no partial file left behind
    monkeypatch.undo()
    cache.store("m0123", b"object")
    assert cache.lookup("m0123") == b"object"


def test_close_waits_for_an_entry_written_in_the_background(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A large entry is written while the model runs; `close` (and leaving `with`) returns once
    it is on disk, so a caller may remove the cache directory right after (a temporary one)."""
    monkeypatch.setattr(program_cache, "BACKGROUND_BYTES", 0)
    release = threading.Event()
    real_write_atomic = program_cache.write_atomic

    def slow_write_atomic(path, write):  # type: ignore[no-untyped-def]
        release.wait()  # until the model has run: the write is still pending at `close`
        real_write_atomic(path, write)

    monkeypatch.setattr(program_cache, "write_atomic", slow_write_atomic)
    proto = onnx_models.resnet(seed=0)
    with compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path) as compiled:
        assert program_cache._PENDING  # the write waits for `release`
        got = next(iter(compiled(X).values()))
        threading.Timer(0.3, release.set).start()  # the write ends after `with` began to exit
    assert not program_cache._PENDING and list(tmp_path.glob("p*.json")) and list(tmp_path.glob("p*.bin"))
    np.testing.assert_allclose(got, ort_session_run(proto, X)[0], rtol=1e-4, atol=1e-5)


def test_a_small_entry_is_on_disk_when_compile_returns(tmp_path: Path) -> None:
    compiled = compile_model(import_onnx(onnx_models.resnet(seed=0)), threads=1, cache_dir=tmp_path)
    assert compiled._executable._const_region.nbytes < program_cache.BACKGROUND_BYTES
    assert not program_cache._PENDING and list(tmp_path.glob("p*.json"))
    compiled.close()


def test_constants_changed_in_place_are_a_miss(tmp_path: Path) -> None:
    """A `.bin` changed on disk but not cut (same size: its weights overwritten in place, or
    another writer's of the same key renamed over it before this record landed) was read as
    the weights: other numbers from a hit (`bench/fuzz_program_cache.py`, case `changed`).
    The record holds the file's size and modification time: a miss, compiled afresh."""
    proto = onnx_models.resnet(seed=0)
    want = ort_session_run(proto, X)[0]
    np.testing.assert_allclose(output(compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path)), want, rtol=1e-4, atol=1e-5)
    (constants,) = tmp_path.glob("p*.bin")
    with open(constants, "r+b") as f:
        f.seek(constants.stat().st_size // 2)
        f.write(b"\x42" * 64)  # 16 weights of 48.6, same size
    second = compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path)
    assert not second.stats.program_cached
    np.testing.assert_allclose(output(second), want, rtol=1e-4, atol=1e-5)
    assert compile_model(import_onnx(proto), threads=1, cache_dir=tmp_path).stats.program_cached  # rewritten whole
