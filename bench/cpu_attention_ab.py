"""The blocked attention kernel (`codegen/attention.py`) against the unfused phases (kT copy,
GEMM, scale, mask, softmax, GEMM) at the zoo transformers' shapes, in one process, one
thread: both compiled (`ops.attention.FUSED` False / True), whole op runs alternating, the
minimum and median of each.

Outside CI:

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/cpu_attention_ab.py [--runs 21] [--shapes whisper,vit]

`--set module:NAME=VALUE` (repeatable) sets a code-generation value for the fused build;
with `--both-fused` the first build is fused too (with the values as they were): an A/B of
the setting on the fused kernel.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import statistics
import time

import numpy as np

SHAPES = {
    # name: (heads, L, S, D, mask shape or None)
    "whisper": (8, 1500, 1500, 64, None),
    "vit": (12, 197, 197, 64, None),
    "deit": (6, 197, 197, 64, None),
    "bert": (12, 128, 128, 64, (1, 1, 1, 128)),
    "t5": (8, 128, 128, 64, (1, 8, 128, 128)),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--set", action="append", default=[])
    ap.add_argument("--both-fused", action="store_true")
    args = ap.parse_args()
    os.environ["IRFORGE_COMPILE_WORKERS"] = "1"
    from irforge.backends.cpu import compile_model
    from irforge.backends.cpu.ops import attention
    from irforge.dialects.nn import ScaledDotProductAttention
    from tests.helpers import one_op_model

    rng = np.random.default_rng(0)
    for name in args.shapes.split(","):
        heads, l, s, d, mask = SHAPES[name]
        inputs = [rng.standard_normal(shape).astype(np.float32) for shape in ((1, heads, l, d), (1, heads, s, d), (1, heads, s, d))]
        if mask is not None:
            inputs.append(rng.uniform(-3, 0, mask).astype(np.float32))
        model = one_op_model(ScaledDotProductAttention, inputs, [])
        feeds = {f"x{i}": x for i, x in enumerate(inputs)}
        compiled, saved = [], []
        for fused in (args.both_fused, True):
            attention.FUSED = fused
            for item in args.set if len(compiled) else []:
                target, value = item.split("=")
                module, attr = target.split(":")
                saved.append((importlib.import_module(module), attr, getattr(importlib.import_module(module), attr)))
                setattr(importlib.import_module(module), attr, ast.literal_eval(value))
            compiled.append(compile_model(model, threads=1, cache_dir=False))
        for module_, attr, value in saved:
            setattr(module_, attr, value)
        outs = [c(feeds)["y0"] for c in compiled]
        err = float(np.max(np.abs(outs[0] - outs[1])))
        times: list[list[float]] = [[], []]
        for r in range(args.runs):
            for which in (0, 1) if r % 2 == 0 else (1, 0):
                t0 = time.process_time()
                compiled[which](feeds)
                times[which].append(time.process_time() - t0)
        (a, b), (ma, mb) = (min(t) for t in times), (statistics.median(t) for t in times)
        print(f"{name:8s} [{heads},{l},{s},{d}] A min {a * 1e3:8.3f} ms, B {b * 1e3:8.3f} ms, {b / a:.3f}x; "
              f"median {ma * 1e3:8.3f} / {mb * 1e3:8.3f}, {mb / ma:.3f}x; max diff {err:.1e} (load {os.getloadavg()[0]:.1f})")
        for c in compiled:
            c.close()


if __name__ == "__main__":
    main()
