"""CPU latency of ResNet-50 and MobileNetV2: irforge's CPU backend vs onnxruntime and OpenVINO.

    .venv/bin/python bench/cpu_latency.py [--runs 20] [--threads 1,2] [--models resnet50,mobilenet_v2]

Prints the median latency over --runs runs for each engine and thread count, the ratio
irforge/onnxruntime, the cold and cached compile times, and GFLOP/s per layer class (3x3
conv, 1x1 conv, depthwise, FC, ...) from timing each GEMM/conv kernel alone on one thread.
GFLOP/s count a direct convolution's FLOPs: a Winograd layer's GEMMs do 2.25x fewer (its
transforms are timed apart, as `winograd`), so conv3x3 can read above the FMA peak.
The machine may be shared: medians, and numbers to read with that in mind.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np
import onnx

from irforge.backends.cpu import compile_model
from irforge.frontends.onnx import import_onnx
from irforge.testing import onnx_models

MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet50": lambda: onnx_models.resnet((3, 4, 6, 3), 64, 224, 1000, bottleneck=True),
    "mobilenet_v2": lambda: onnx_models.mobilenet_v2(onnx_models.MOBILENET_V2_FULL, 32, 224, 1000),
}


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def onnxruntime_ms(path: str, feeds: dict[str, np.ndarray], threads: int, runs: int) -> float:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    return median_ms(lambda: session.run(None, feeds), runs)


def openvino_ms(path: str, feeds: dict[str, np.ndarray], threads: int, runs: int) -> float | None:
    try:
        import openvino
    except ImportError:
        return None
    compiled = openvino.Core().compile_model(path, "CPU", {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": threads})
    request = compiled.create_infer_request()
    return median_ms(lambda: request.infer(feeds), runs)


def layer_gflops(compiled, runs: int = 5) -> dict[str, tuple[float, float]]:  # type: ignore[no-untyped-def]
    """(total ms, GFLOP/s) per layer class, each kernel timed alone on one thread."""
    exe = compiled._executable
    kernel = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for phase, table in zip(exe.program.phases, exe.tables):
        if not phase.tag:
            continue
        fn = kernel(exe.jit.address(phase.function))
        ms = median_ms(lambda: fn(table.ctypes.data, 0, 1), runs)
        totals[phase.tag][0] += ms
        totals[phase.tag][1] += phase.flops or 0
    return {tag: (ms, flops / ms / 1e6) for tag, (ms, flops) in totals.items()}  # im2col: 0 GFLOP/s, time only


def bench_model(name: str, threads: list[int], runs: int) -> None:
    proto = MODELS[name]()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, f"{name}.onnx")
        onnx.save(proto, path)
        feeds = {"data": np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)}
        model = import_onnx(path)
        cache = os.path.join(tmp, "cache")
        cold = compile_model(model, threads=max(threads), cache_dir=cache)
        warm = compile_model(model, threads=max(threads), cache_dir=cache)
        print(f"{name}: compile cold {cold.stats.seconds:.2f} s ({cold.stats.kernels} kernels, "
              f"{cold.stats.phases} phases), cached {warm.stats.seconds:.2f} s "
              f"({warm.stats.cache_hits} cache hits, {warm.stats.cache_misses} misses); arena "
              f"{cold.stats.arena_bytes / 2**20:.1f} MiB (unplanned {cold.stats.unplanned_bytes / 2**20:.1f} MiB)")
        for n in threads:
            compiled = compile_model(model, threads=n, cache_dir=cache)
            ours = median_ms(lambda: compiled(feeds), runs)
            ort_ms = onnxruntime_ms(path, feeds, n, runs)
            ov_ms = openvino_ms(path, feeds, n, runs)
            ov = f"{ov_ms:.2f} ms" if ov_ms is not None else "n/a"
            print(f"  threads={n}: irforge {ours:.2f} ms, onnxruntime {ort_ms:.2f} ms, openvino {ov}, "
                  f"irforge/onnxruntime {ours / ort_ms:.2f}x")
            compiled.close()
        cold(feeds)  # binds the input buffer into the argument tables the kernels read
        for tag, (ms, gflops) in sorted(layer_gflops(cold).items()):
            print(f"  {tag:>10}: {ms:7.2f} ms on 1 thread, {gflops:6.1f} GFLOP/s")
        cold.close()
        warm.close()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--models", default=",".join(MODELS))
    args = p.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores; other work skews timings)")
    for name in args.models.split(","):
        bench_model(name, [int(t) for t in args.threads.split(",")], args.runs)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
