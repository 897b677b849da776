"""Where a whole run's CPU time over the sum of its phases' minima goes, on one zoo model.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_run_gap.py regnet_x_1_6gf [--runs 21]

Every round times, in CPU time of the process and in this order (the order rotates by one
each round, so no way is always first after another), one thread:
  whole   `compiled(feeds)` (inputs bound, the native driver runs every phase, outputs copied);
  launch  the native driver alone (`Executable.team.run`: no Python per run);
  pyloop  every phase called from Python through its own entry point, untimed one by one
          (the whole loop timed): the driver's order with a ctypes call per phase;
  timed   the same, each phase timed on its own (`cpu_phase_vs_ort.py`'s way); its round sum;
  hot     each phase called twice at once, the second call timed (its inputs and weights in
          cache: what a phase costs when the previous phase evicted nothing).
Printed: per way the min / median over rounds; for `timed` also the sum of the per-phase
minima and of the per-phase medians (hypothesis: minima over different rounds undercount
a whole run), and the phases whose median over their minimum adds most.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from cpu_phase_profile import _keras  # noqa: E402  (also skips transformers' torchvision probe)
from zoo_latency import ZOO, scratch  # noqa: E402
from zoo_more import KERAS_MODELS  # noqa: E402

_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=sorted([*ZOO, *KERAS_MODELS]))
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--engines", action="store_true", help="also time `compiled(feeds)` right after an onnxruntime run "
                    "(`after_ort`) and right after an OpenVINO run (`after_ov`), as `cpu_time_vs_engines.py` orders them, "
                    "in CPU time of the process and of the calling thread")
    args = ap.parse_args()
    from irforge.backends.cpu import compile_model
    from irforge.frontends.onnx import import_onnx
    from irforge.model import input_names
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    tmp = scratch("run-gap-")
    path = tmp / f"{args.model}.onnx"
    feeds = _keras(args.model, tmp, path) if args.model in KERAS_MODELS else ZOO[args.model](path)
    model = import_onnx(str(path))
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    compiled = compile_model(model, threads=1, cache_dir=False)
    feeds = dict(zip(input_names(model.func), feeds.values()))
    compiled(feeds)  # binds the inputs' addresses into the tables
    ex = compiled._executable
    phases = ex.program.phases
    calls = [(_KERNEL(ex.jit.address(p.function)), t.ctypes.data) for p, t in zip(phases, ex.tables)]
    clock = time.process_time_ns
    n = len(calls)

    def whole() -> None:
        compiled(feeds)

    def launch() -> None:
        ex.team.run(ex._tables_at)

    def pyloop() -> None:
        for fn, table in calls:
            fn(table, 0, 1)

    per_phase: list[list[float]] = [[] for _ in calls]
    hot: list[list[float]] = [[] for _ in calls]

    def timed() -> None:
        for i, (fn, table) in enumerate(calls):
            t0 = clock()
            fn(table, 0, 1)
            per_phase[i].append((clock() - t0) * 1e-6)

    def hot_pass() -> None:
        for i, (fn, table) in enumerate(calls):
            fn(table, 0, 1)
            t0 = clock()
            fn(table, 0, 1)
            hot[i].append((clock() - t0) * 1e-6)

    ways = {"whole": whole, "launch": launch, "pyloop": pyloop, "timed": timed, "hot": hot_pass}
    before: dict[str, object] = {}
    if args.engines:
        import onnxruntime as ort
        import openvino as ov

        from zoo_latency import openvino_model

        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        ort_feeds = {i.name: a for i, a in zip(session.get_inputs(), feeds.values())}
        request = ov.Core().compile_model(openvino_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32",
                                                                        "INFERENCE_NUM_THREADS": 1}).create_infer_request()
        before = {"after_ort": lambda: session.run(None, ort_feeds), "after_ov": lambda: request.infer(ort_feeds)}
        for k, f in before.items():
            f()
            ways[k] = whole
    totals: dict[str, list[float]] = {k: [] for k in ways}
    thread: dict[str, list[float]] = {k: [] for k in ways}
    names = list(ways)
    for r in range(args.runs):
        for k in names[r % len(names):] + names[:r % len(names)]:
            if k in before:
                before[k]()  # type: ignore[operator]
            t0, h0 = clock(), time.thread_time_ns()
            ways[k]()
            totals[k].append((clock() - t0) * 1e-6)
            thread[k].append((time.thread_time_ns() - h0) * 1e-6)
    # a clock read costs: time `n` empty pairs to know what `timed` adds by timing
    t0 = clock()
    for _ in range(n):
        clock()
        clock()
    clock_cost = (clock() - t0) * 1e-6
    compiled.close()

    print(f"{args.model}: {n} phases, {args.runs} rounds, CPU time of the process (ms)")
    for k, v in totals.items():
        h = thread[k]
        print(f"  {k:9} min {min(v):8.2f}  median {statistics.median(v):8.2f}   (this thread: min {min(h):8.2f} median {statistics.median(h):8.2f})")
    mins = sum(min(t) for t in per_phase)
    meds = sum(statistics.median(t) for t in per_phase)
    sums = [sum(t[r] for t in per_phase) for r in range(args.runs)]
    print(f"  timed: sum of phase minima {mins:8.2f}, of phase medians {meds:8.2f}; "
          f"round sums min {min(sums):8.2f} median {statistics.median(sums):8.2f}")
    print(f"  hot:   sum of phase minima {sum(min(t) for t in hot):8.2f}, of medians {sum(statistics.median(t) for t in hot):8.2f}")
    print(f"  {n} clock-read pairs: {clock_cost:.3f} ms")
    cold_min = [min(t) for t in per_phase]
    hot_min = [min(t) for t in hot]
    print(f"phases whose min cold - min hot is largest (ms; cold-hot sum {sum(cold_min) - sum(hot_min):.2f}):")
    order = sorted(range(n), key=lambda i: hot_min[i] - cold_min[i])[:args.top]
    for i in order:
        p = phases[i]
        sizes = " ".join(f"{b.kind[0]}{b.nbytes // 1024}k" for b in p.args)
        print(f"  {i:4d} {p.tag or 'other':10} {p.function[-24:]:24} cold {cold_min[i]:7.3f} hot {hot_min[i]:7.3f}  {sizes}")
    print("phases whose median - min is largest (ms):")
    spread = [statistics.median(t) - min(t) for t in per_phase]
    for i in sorted(range(n), key=lambda i: -spread[i])[:args.top]:
        p = phases[i]
        print(f"  {i:4d} {p.tag or 'other':10} {p.function[-24:]:24} min {cold_min[i]:7.3f} median {statistics.median(per_phase[i]):7.3f}")


if __name__ == "__main__":
    main()
