"""Where a cold CPU compile goes: per phase, CPU time, for one zoo model.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_compile_profile.py resnet50 [--workers 1] [--rounds 3] [--top 15]
        [--set irforge.backends.cpu.codegen.depthwise:UNROLL_LOOPS=True,False]

The model is imported as `zoo_latency` does (default pipeline applied), then compiled cold
(a fresh cache directory) `--rounds` times. With `--workers 1` (the default) every LLVM
module compiles in this process, so the phases below add up to the process's CPU time:
the backend's pass pipeline, lowering (of it: building kernel IR, and the rest: weight
packing, buffers), planning, printing IR, LLVM per module (parse + verify, optimise, emit
an object), loading the objects (MCJIT), the executable (constants gathered into huge
pages) and the program cache's key and entry. With more workers it gives the wall time and
the CPU time of this process and of the worker processes together. Figures are medians
over the rounds; the machine may be shared: record `uptime` with them.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import re
import resource
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

TIMES: dict[str, float] = defaultdict(float)
MODULES: list[tuple[str, int, float, float, float]] = []
"""(kernel kind, IR bytes, parse+verify s, optimise s, emit s) per module compiled here."""


def timed(owner: Any, attr: str, label: str) -> None:
    """Wrap `owner.attr` to add its CPU time to TIMES[label] (outermost call only)."""
    original = getattr(owner, attr)
    depth = [0]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        depth[0] += 1
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                TIMES[label] += time.process_time() - start

    setattr(owner, attr, wrapper)


def instrument() -> None:
    import llvmlite.binding as llvm

    import irforge.backends.cpu.jit as jit
    import irforge.backends.cpu.llvm_worker as worker
    import irforge.backends.cpu.lower as lower
    import irforge.backends.cpu.memory as memory
    import irforge.backends.cpu.planner as planner
    import irforge.backends.cpu.program_cache as program_cache
    import irforge.backends.cpu.runtime as runtime
    import irforge.passes as passes

    timed(passes, "apply_pipeline", "pass pipeline")
    timed(lower, "lower", "lowering (all)")
    timed(planner, "plan", "planning")
    timed(jit.Jit, "text", "printing IR")
    timed(jit.Jit, "add_object", "loading objects")
    timed(jit.Jit, "finalize", "loading objects")
    timed(runtime, "Executable", "executable (constants)")
    timed(runtime, "driver_module", "driver IR")
    timed(program_cache, "program_key", "program key")
    timed(program_cache, "save", "program save")
    timed(memory, "release_freed_memory", "malloc_trim")
    original_kernel = lower.Lowering.kernel

    def kernel(self: Any, key: tuple, build: Callable[..., None]) -> str:
        def built(module: Any, name: str) -> None:
            start = time.process_time()
            build(module, name)
            TIMES["lowering: kernel IR"] += time.process_time() - start
            TIMES[f"kernel IR: {key[0]}"] += time.process_time() - start

        return original_kernel(self, key, built)

    lower.Lowering.kernel = kernel  # type: ignore[method-assign]

    def compile_one(tm: Any, text: str, level: int = 3, unroll: bool = True) -> bytes:
        kind = re.search(r"define [^@]*@\"?k[0-9a-f]{16}_(\w+)", text)
        t0 = time.process_time()
        mod = llvm.parse_assembly(text)
        mod.verify()
        t1 = time.process_time()
        worker.optimise(tm, mod, level, unroll)
        t2 = time.process_time()
        data = tm.emit_object(mod)
        t3 = time.process_time()
        MODULES.append((kind.group(1) if kind else "driver", len(text), t1 - t0, t2 - t1, t3 - t2))
        return data

    worker.compile_one = compile_one


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--set", default="", help="module:NAME=V1[,V2..]: a module-level setting, round r at value r mod count "
                        "(Python literals; rounds alternate, each printed with its LLVM seconds per kernel kind)")
    args = parser.parse_args()
    values: list[object] = [None]
    if args.set:
        where, _, listed = args.set.partition("=")
        owner, _, attr = where.partition(":")
        values = [ast.literal_eval(v) for v in listed.split(",")]
    os.environ["IRFORGE_COMPILE_WORKERS"] = str(args.workers)
    from zoo_latency import prepare, scratch

    from irforge.backends.cpu import compile_model

    instrument()
    workdir = scratch("compile-profile-")
    model, _, _ = prepare(args.model, workdir)
    rounds: list[dict[str, float]] = []
    modules: list[list[tuple[str, int, float, float, float]]] = []
    for r in range(args.rounds):
        TIMES.clear()
        MODULES.clear()
        if args.set:
            setattr(importlib.import_module(owner), attr, values[r % len(values)])
        cpu0, child0 = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN)
        wall0 = time.perf_counter()
        compiled = compile_model(model, threads=1, cache_dir=workdir / f"cache{r}")
        wall = time.perf_counter() - wall0
        child1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = time.process_time() - cpu0
        children = (child1.ru_utime + child1.ru_stime) - (child0.ru_utime + child0.ru_stime)
        stats = compiled.stats
        compiled.close()
        llvm_total = sum(p + o + e for _, _, p, o, e in MODULES)
        row = dict(TIMES)
        row["LLVM here (parse+opt+emit)"] = llvm_total
        row["LLVM parse+verify"] = sum(m[2] for m in MODULES)
        row["LLVM optimise"] = sum(m[3] for m in MODULES)
        row["LLVM emit"] = sum(m[4] for m in MODULES)
        row["lowering: rest (packing, buffers)"] = row.get("lowering (all)", 0) - row.get("lowering: kernel IR", 0)
        row["wall"], row["cpu this process"], row["cpu workers"] = wall, own, children
        row["cpu total"] = own + children
        rounds.append(row)
        modules.append(list(MODULES))
        print(f"round {r}: wall {wall:.2f} s, cpu {own:.2f} + workers {children:.2f} s, "
              f"{stats.kernels} kernels, {stats.cache_misses} compiled", flush=True)
        if args.set:
            kinds: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
            for kind, size, p, o, e in MODULES:
                kinds[kind][0] += 1
                kinds[kind][1] += p + o + e
                kinds[kind][2] += size
            print(f"  {args.set.partition('=')[0]} = {values[r % len(values)]!r}: LLVM {llvm_total:.2f} s; "
                  + ", ".join(f"{k} {n} {t:.2f} s {b / 1024:.0f} KiB" for k, (n, t, b) in sorted(kinds.items(), key=lambda kv: -kv[1][1])[:4]),
                  flush=True)
    keys = sorted({k for row in rounds for k in row}, key=lambda k: (k.startswith("kernel IR:"), k))
    print(f"\n{args.model}: cold compile, {args.workers} worker(s), median of {args.rounds} rounds, CPU s")
    for key in keys:
        if key.startswith("kernel IR:"):
            continue
        print(f"  {key:40s} {statistics.median(row.get(key, 0.0) for row in rounds):7.3f}")
    per_kind: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0])
    for kind, size, p, o, e in modules[-1]:
        entry = per_kind[kind]
        entry[0] += 1
        entry[1] += p + o + e
        entry[2] += size
        entry[3] = 0
    ir = {k.split(": ", 1)[1]: statistics.median(row.get(k, 0.0) for row in rounds) for k in keys if k.startswith("kernel IR:")}
    print("\n  per kernel kind (last round): modules, LLVM s, IR KiB, IR-building s")
    for kind, (n, secs, size, _) in sorted(per_kind.items(), key=lambda kv: -kv[1][1])[: args.top]:
        print(f"  {kind:24s} {n:4d} {secs:7.3f} {size / 1024:8.0f} {ir.get(kind, 0.0):7.3f}")


if __name__ == "__main__":
    main()
