"""The whole-program cache (`program_cache.py`): what a hit reuses, what makes a miss."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from irforge.backends.cpu import compile_model
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
