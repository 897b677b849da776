"""Run-time A/B of a code-generation setting on one zoo model, per phase, in one process.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_knob_ab.py resnet50 \
        irforge.backends.cpu.codegen.gemm:UNROLL_PLAIN --a True --b False [--runs 31]

The model is compiled twice without any cache (LLVM in this process), with the module-level
setting `module:NAME` at value A, then at value B (Python literals); every round calls all
of A's phases in model order, then all of B's (the order alternating between rounds), each
kernel through its own entry point on one thread. Printed: the sums over phases of each
phase's minimum, their ratio B/A, and the ratio per phase tag (conv1x1, conv3x3, ...).
Run an A/A (the same value twice) for the noise of the moment; record `uptime` with it.
`--cpu-time`: phases timed in CPU time of the process, which the other jobs of a loaded host
do not inflate by taking the core mid-phase (they still share the caches and memory).
`--phases TEXT` also prints each phase whose tag or kernel name contains TEXT (B's kernel names);
where the setting changes the phase list, the phases tagged TEXT, paired in model order.
`--whole`: time whole runs (`compiled(feeds)`, one thread) instead, A and B alternating, and
print the minimum and median of each in CPU time of the process: for settings that change the phases themselves.
"""

from __future__ import annotations

import argparse
import ast
import collections
import ctypes
import importlib
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cpu_phase_profile  # noqa: E402,F401  (skips torchvision inside transformers)
from zoo_latency import prepare, scratch  # noqa: E402

_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("setting", help="module:NAME, a module-level value the code generator reads")
    ap.add_argument("--a", required=True)
    ap.add_argument("--b", required=True)
    ap.add_argument("--runs", type=int, default=31)
    ap.add_argument("--phases", default="", help="also print A's and B's minimum of every phase whose tag or kernel contains this")
    ap.add_argument("--cpu-time", action="store_true", help="time phases in CPU time of the process (time.process_time_ns), not wall: "
                    "a loaded host's other jobs take the core mid-phase")
    ap.add_argument("--prepare-each", action="store_true", help="import and run the pass pipeline again per value (a setting the passes read)")
    ap.add_argument("--whole", action="store_true", help="time whole runs, not phases (the phase lists may differ)")
    args = ap.parse_args()
    os.environ["IRFORGE_COMPILE_WORKERS"] = "1"  # LLVM here: the setting is this process's
    from irforge.backends.cpu import compile_model

    module_name, attr = args.setting.split(":")
    module = importlib.import_module(module_name)
    if args.prepare_each:
        setattr(module, attr, ast.literal_eval(args.a))
    model, feeds, _ = prepare(args.model, scratch("knob-ab-"))
    calls, alive = [], []
    for value in (args.a, args.b):
        setattr(module, attr, ast.literal_eval(value))
        if args.prepare_each and value is args.b:  # (A's model was prepared under A's value above)
            model, feeds, _ = prepare(args.model, scratch("knob-ab-"))
        compiled = compile_model(model, threads=1, cache_dir=False)
        compiled(feeds)  # binds the inputs' addresses into the tables
        alive.append(compiled)  # its JIT holds the code the entry points below call
        ex = compiled._executable
        if not args.whole:  # (a host step's symbol is no JIT address: --whole times those)
            calls.append([(_KERNEL(ex.jit.address(p.function)), t.ctypes.data, p.tag or "other") for p, t in zip(ex.program.phases, ex.tables)])
        names = [p.function for p in ex.program.phases]
    if args.whole:
        _whole(args, alive, feeds)
        return
    comparable = len(calls[0]) == len(calls[1])
    if not comparable:  # a setting that adds or removes phases: sums and per-tag sums only
        print(f"A has {len(calls[0])} phases, B {len(calls[1])}: compared by their sums and per tag")
    clock = time.process_time_ns if args.cpu_time else time.perf_counter_ns
    best = [[float("inf")] * len(c) for c in calls]
    for r in range(args.runs):
        for which in (0, 1) if r % 2 == 0 else (1, 0):
            for i, (fn, table, _) in enumerate(calls[which]):
                t0 = clock()
                fn(table, 0, 1)
                best[which][i] = min(best[which][i], (clock() - t0) * 1e-9)
    tags: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
    for which in (0, 1):
        for i, (_, _, tag) in enumerate(calls[which]):
            tags[tag][which] += best[which][i]
    a, b = sum(best[0]), sum(best[1])
    per_tag = "  ".join(f"{tag} {tb / ta if ta else float('inf'):.3f}" + ("" if comparable else f" ({ta * 1e3:.3f} -> {tb * 1e3:.3f} ms)")
                        for tag, (ta, tb) in sorted(tags.items(), key=lambda kv: -kv[1][0]))
    print(f"{args.model} {args.setting} {args.a} -> {args.b}: A {a * 1e3:.2f} ms, B {b * 1e3:.2f} ms, "
          f"B/A {b / a:.3f} (load {os.getloadavg()[0]:.1f}); per tag: {per_tag}")
    if args.phases and comparable:
        for i, (_, _, tag) in enumerate(calls[0]):
            if args.phases in tag or args.phases in names[i]:
                print(f"  {i:4d} {tag:10s} {names[i][-16:]:16s} A {best[0][i] * 1e3:7.3f}  B {best[1][i] * 1e3:7.3f} ms  B/A {best[1][i] / best[0][i]:.3f}")
    elif args.phases:  # phase lists differ: the phases of tag `--phases` paired in model order
        picked = [[i for i, (_, _, tag) in enumerate(c) if tag == args.phases] for c in calls]
        for n, (i, j) in enumerate(zip(*picked)):
            print(f"  {args.phases} #{n:3d} (A {i:3d}, B {j:3d}) A {best[0][i] * 1e3:7.3f}  B {best[1][j] * 1e3:7.3f} ms  B/A {best[1][j] / best[0][i]:.3f}")


def _whole(args, compiled, feeds) -> None:  # type: ignore[no-untyped-def]
    import statistics

    times: list[list[float]] = [[], []]
    for r in range(args.runs):
        for which in (0, 1) if r % 2 == 0 else (1, 0):
            t0 = time.process_time()  # CPU time: the shared host's other jobs take wall time
            compiled[which](feeds)
            times[which].append(time.process_time() - t0)
    (a, b), (ma, mb) = (min(t) for t in times), (statistics.median(t) for t in times)
    print(f"{args.model} {args.setting} {args.a} -> {args.b} (whole runs, {len(compiled[0]._executable.program.phases)} -> "
          f"{len(compiled[1]._executable.program.phases)} phases): min A {a * 1e3:.2f} ms, B {b * 1e3:.2f} ms, B/A {b / a:.3f}; "
          f"median A {ma * 1e3:.2f}, B {mb * 1e3:.2f}, B/A {mb / ma:.3f} (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
