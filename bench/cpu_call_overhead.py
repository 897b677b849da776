"""Where a small model's wall time goes between its kernels, on one thread.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_call_overhead.py mnasnet1_0 [--runs 41]

Prints medians (ms, wall and CPU time of the process) of: the whole `compiled(feeds)` call;
the native driver alone (`team.run`, the tables already bound); the phases' sum (each kernel
called in order through its own entry point); irforge's call back to back vs alternating with
onnxruntime and OpenVINO (as bench/zoo_latency.py times it); onnxruntime's `session.run`.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from zoo_latency import KERAS_MODELS, ZOO, keras_onnx, openvino_model, prepare  # noqa: E402

_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def timed(fn, runs: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    """Median wall and CPU-time ms of `fn()` over `runs` calls (after two warm-up calls)."""
    fn()
    fn()
    wall, cpu = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return statistics.median(wall) * 1e3, statistics.median(cpu) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(ZOO) + sorted(KERAS_MODELS))
    ap.add_argument("--runs", type=int, default=41)
    args = ap.parse_args()
    import onnxruntime as ort
    import openvino as ov

    from irforge.backends.cpu import compile_model

    with tempfile.TemporaryDirectory() as tmp:
        model, feeds, path = prepare(args.model, Path(tmp))
        compiled = compile_model(model, threads=1, cache_dir=False)
        keras = path.suffix == ".pb"
        ort_path = keras_onnx(path) if keras else path
        opts = ort.SessionOptions()
        opts.intra_op_num_threads, opts.inter_op_num_threads = 1, 1
        session = ort.InferenceSession(str(ort_path), opts, providers=["CPUExecutionProvider"])
        ort_feeds = {session.get_inputs()[0].name: next(iter(feeds.values()))} if keras else feeds
        request = ov.Core().compile_model(openvino_model(path), "CPU", {
            "INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}).create_infer_request()
        ov_feeds = list(feeds.values()) if keras else feeds
    compiled(feeds)
    ex = compiled._executable
    calls = [(_KERNEL(ex.jit.address(p.function)), t.ctypes.data) for p, t in zip(ex.program.phases, ex.tables)]

    def phases() -> None:
        for fn, table in calls:
            fn(table, 0, 1)

    rows = {
        "irforge call": lambda: compiled(feeds),
        "driver only (team.run)": lambda: ex.team.run(ex.table_of_tables.ctypes.data),
        f"phases one by one ({len(calls)})": phases,
        "onnxruntime run": lambda: session.run(None, ort_feeds),
        "openvino infer": lambda: request.infer(ov_feeds),
    }
    for name, fn in rows.items():
        wall, cpu = timed(fn, args.runs)
        print(f"{name:32} wall {wall:7.3f}  cpu {cpu:7.3f}")
    # alternating, as zoo_latency's `alternate` does
    engines = {"irforge": rows["irforge call"], "onnxruntime": rows["onnxruntime run"], "openvino": rows["openvino infer"]}
    times: dict[str, list[float]] = {n: [] for n in engines}
    cpus: dict[str, list[float]] = {n: [] for n in engines}
    for _ in range(args.runs):
        for n, fn in engines.items():
            start, c = time.perf_counter(), time.process_time()
            fn()
            cpus[n].append(time.process_time() - c)
            times[n].append(time.perf_counter() - start)
    for label, series in (("wall", times), ("cpu", cpus)):
        for stat in (statistics.median, min):
            med = {n: stat(t) * 1e3 for n, t in series.items()}
            print(f"alternating ({label} ms, {stat.__name__}): " + ", ".join(f"{n} {v:.3f}" for n, v in med.items())
                  + f"  -> /ort {med['irforge'] / med['onnxruntime']:.3f} /ov {med['irforge'] / med['openvino']:.3f}")
    # irforge alone vs irforge right after the other two engines, paired per round (a load
    # change hits both), CPU time; and the minor page faults of one irforge call
    import resource

    alone, after, faults = [], [], []
    for _ in range(args.runs):
        c = time.process_time()
        compiled(feeds)
        alone.append(time.process_time() - c)
        session.run(None, ort_feeds)
        request.infer(ov_feeds)
        f, c = resource.getrusage(resource.RUSAGE_SELF).ru_minflt, time.process_time()
        compiled(feeds)
        after.append(time.process_time() - c)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f)
    print(f"irforge cpu ms: back to back {statistics.median(alone) * 1e3:.3f}, right after ort+ov "
          f"{statistics.median(after) * 1e3:.3f}; minor faults per call (median) {statistics.median(faults)}")
    compiled.close()


if __name__ == "__main__":
    main()
