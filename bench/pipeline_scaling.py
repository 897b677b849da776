"""Benchmark: ir-convert's default pass pipeline on generated 10,000- and 100,000-op models.

The models are long chains of conv(3x3) -> batch_norm -> relu blocks on a 1x4x4x4 tensor
(8 ops per block with the constants), built with ModelBuilder. Only the pass pipeline is
timed. A linear pipeline takes about 10x as long for the 10x larger model; the ratio of
the times is printed next to the ratio of the op counts.

    python bench/pipeline_scaling.py [--sizes 10000 100000] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np

from irforge.builder import ModelBuilder
from irforge.dialects.nn import BatchNormalization, Convolution, ReLU
from irforge.model import Model
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

CHANNELS = 4
OPS_PER_BLOCK = 8  # weight constant, conv, 4 statistics constants, batch_norm, relu


def chain_model(ops: int, seed: int = 0) -> Model:
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    y = b.input("data", [1, CHANNELS, 4, 4])
    for i in range(ops // OPS_PER_BLOCK):
        w = b.constant(rng.standard_normal((CHANNELS, CHANNELS, 3, 3)).astype(np.float32) / 6, f"w{i}")
        y = b.add(Convolution, [y, w], pads_begin=[1, 1], pads_end=[1, 1], name=f"conv{i}").output
        stats = [b.constant(rng.uniform(0.5, 1.5, CHANNELS).astype(np.float32)) for _ in range(4)]
        y = b.add(BatchNormalization, [y, *stats], name=f"bn{i}").output
        y = b.add(ReLU, [y], name=f"relu{i}").output
    b.output(y, "out")
    return b.finish()


def op_count(model: Model) -> int:
    return sum(1 for _ in model.func.body.block.ops)


def time_pipeline(ops: int, profile: bool) -> tuple[int, int, float]:
    model = chain_model(ops)
    before = op_count(model)
    profiler = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if profiler:
        profiler.enable()
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    if profiler:
        profiler.disable()
    elapsed = time.perf_counter() - start
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    return before, op_count(model), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=[10_000, 100_000], metavar="OPS")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of each run")
    args = parser.parse_args()
    print(f"pipeline: {DEFAULT_PIPELINE}")
    results = []
    for size in args.sizes:
        before, after, seconds = time_pipeline(size, args.profile)
        results.append((before, seconds))
        print(f"{before:>8} ops -> {after:>7} ops: {seconds:8.2f} s  ({seconds / before * 1e6:6.1f} us/op)")
    (small_ops, small_s), (large_ops, large_s) = results
    print(f"op ratio {large_ops / small_ops:.1f}x, time ratio {large_s / small_s:.1f}x "
          f"({'linear' if large_s / small_s <= 1.5 * large_ops / small_ops else 'SUPERLINEAR'})")


if __name__ == "__main__":
    main()
