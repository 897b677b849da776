"""OpenCL latency of ResNet-50 and MobileNetV2: irforge's OpenCL backend vs onnxruntime (CPU).

    .venv/bin/python bench/gpu_latency.py [--models resnet50,mobilenet_v2] [--runs 20]
        [--opencl-device N|NAME]

Prints, per model: the OpenCL device, compile time (cold: no program in this process),
the median latency over --runs runs (inputs copied in and outputs out included) of irforge
on the device and of onnxruntime on the CPU, and GFLOP/s per layer class (3x3/kxk conv,
1x1 conv, depthwise, FC, ...) from the device's own profiling of each kernel launch.
`--models small` runs a small ResNet (a quick check that the script works, e.g. on pocl).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from collections.abc import Callable

import numpy as np
import onnx
import onnxruntime as ort

from irforge.backends.opencl import compile_model
from irforge.frontends.onnx import import_onnx
from irforge.testing import onnx_models

MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet50": lambda: onnx_models.resnet((3, 4, 6, 3), 64, 224, 1000, bottleneck=True),
    "mobilenet_v2": lambda: onnx_models.mobilenet_v2(onnx_models.MOBILENET_V2_FULL, 32, 224, 1000),
    "small": lambda: onnx_models.resnet((1, 1), 16, 64, 10, bottleneck=True),
}


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up: first launches compile work-group code on some drivers
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def onnxruntime_session(proto: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])


def layer_classes(name: str, device: str | None) -> list[str]:
    """GFLOP/s per kernel class, from one profiled run (kernel device time only)."""
    proto = MODELS[name]()
    compiled = compile_model(import_onnx(proto), device, profile=True)
    feeds = {"data": np.random.default_rng(0).standard_normal((1, 3, *_spatial(proto)), np.float32)}
    compiled(feeds)
    compiled(feeds)
    seconds: dict[str, float] = defaultdict(float)
    flops: dict[str, int] = defaultdict(int)
    steps = [s for s in compiled._executable.program.steps if hasattr(s, "kernel")]
    for step, timing in zip(steps, compiled.timings(), strict=True):
        kind = step.kernel.rsplit("_", 1)[0]
        seconds[kind] += timing.seconds
        flops[kind] += timing.flops
    lines = []
    for kind in sorted(seconds, key=lambda k: -seconds[k]):
        rate = f"{flops[kind] / seconds[kind] / 1e9:8.1f} GFLOP/s" if flops[kind] else "       - GFLOP/s"
        lines.append(f"    {kind:<14} {seconds[kind] * 1e3:9.3f} ms  {rate}  ({flops[kind] / 1e9:.3f} GFLOP)")
    return lines


def _spatial(proto: onnx.ModelProto) -> tuple[int, int]:
    dims = proto.graph.input[0].type.tensor_type.shape.dim
    return dims[2].dim_value, dims[3].dim_value


def bench(name: str, runs: int, device: str | None) -> None:
    proto = MODELS[name]()
    model = import_onnx(proto)
    start = time.perf_counter()
    compiled = compile_model(model, device)
    compile_s = time.perf_counter() - start
    feeds = {"data": np.random.default_rng(0).standard_normal((1, 3, *_spatial(proto)), np.float32)}
    session = onnxruntime_session(proto)
    got = next(iter(compiled(feeds).values()))
    want = session.run(None, feeds)[0]
    error = float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-6))
    ocl_ms = median_ms(lambda: compiled(feeds), runs)
    ort_ms = median_ms(lambda: session.run(None, feeds), runs)
    print(f"{name}: device '{compiled.device}', {compiled.stats.kernels} kernels, {compiled.stats.launches} launches, "
          f"fallbacks {len(compiled.fallbacks)}, compile {compile_s:.2f} s, max rel error vs onnxruntime {error:.1e}")
    print(f"  irforge OpenCL {ocl_ms:9.2f} ms   onnxruntime CPU {ort_ms:9.2f} ms   (median of {runs})")
    print("  per layer class (device time of one profiled run):")
    print("\n".join(layer_classes(name, device)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet50,mobilenet_v2")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--opencl-device", default=None)
    args = p.parse_args()
    for name in args.models.split(","):
        bench(name, args.runs, args.opencl_device)


if __name__ == "__main__":
    main()
