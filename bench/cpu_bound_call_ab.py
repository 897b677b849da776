"""Per-call Python cost of the CPU backend: `runtime.BOUND_CALL` off and on, on a one-op model.

Outside CI:

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/cpu_bound_call_ab.py [--blocks 21] [--calls 2000]

A Sigmoid on [1, 1000] compiled twice (the setting False, then True) on one thread; blocks of
`--calls` calls of A, of B and of the native launch alone alternate; printed: the median and
min of each block's CPU time per call (us).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from irforge.backends.cpu import compile_model, runtime
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--blocks", type=int, default=21)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    b = ModelBuilder()
    x = b.input("x", (1, 1000), np.float32)
    b.output(b.add(Activation, [x], kind="sigmoid").results[0], "y")
    model = b.finish()
    feeds = {"x": np.random.default_rng(0).random((1, 1000), np.float32)}
    runtime.BOUND_CALL = False
    a = compile_model(model, threads=1, cache_dir=False)
    runtime.BOUND_CALL = True
    bound = compile_model(model, threads=1, cache_dir=False)
    ex = bound._executable
    rows = {"BOUND_CALL False": lambda: a(feeds), "BOUND_CALL True": lambda: bound(feeds),
            "native launch": lambda: ex.team.run(ex.table_of_tables.ctypes.data)}
    times: dict[str, list[float]] = {n: [] for n in rows}
    for _ in range(args.blocks):
        for name, fn in rows.items():
            start = time.process_time()
            for _ in range(args.calls):
                fn()
            times[name].append((time.process_time() - start) / args.calls * 1e6)
    for name, t in times.items():
        print(f"{name:18} median {statistics.median(t):6.2f} us, min {min(t):6.2f} us CPU per call")
    a.close()
    bound.close()


if __name__ == "__main__":
    main()
