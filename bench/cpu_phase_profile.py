"""Per-phase time of irforge's CPU backend on one zoo model, next to onnxruntime's own
per-node profile (both on one thread).

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_phase_profile.py resnext50_32x4d [--runs 5] [--top 25]

keras.applications models (`keras_Xception`, ...) are profiled on tf2onnx's ONNX file, both sides.

irforge's phases are called one by one in model order (each kernel through its own entry
point, thread 0 of 1), so each phase finds its inputs where the previous one left them, as in
a whole run; times are medians over `--runs` passes, summed per (tag, kernel). onnxruntime's
are the medians of its profiler's node events, summed per op type. Read ratios, not absolute
times, when the machine is shared.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path


def _without_torchvision() -> None:
    """transformers imports torchvision when it is installed; a torchvision built for another
    torch breaks every transformers model (the zoo venv got one): skip it, BERT and ViT need none."""
    try:
        import transformers.utils as utils
        import transformers.utils.import_utils as import_utils
    except ImportError:
        return
    import_utils.is_torchvision_available = utils.is_torchvision_available = lambda: False  # type: ignore[assignment]


_without_torchvision()
sys.path.insert(0, str(Path(__file__).parent))
from zoo_latency import ZOO  # noqa: E402
from zoo_more import KERAS_MODELS  # noqa: E402

_KERNEL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


def irforge_phases(model, feeds, runs: int) -> list[tuple[str, str, float, int]]:  # type: ignore[no-untyped-def]
    """(tag, function, median seconds, flops) per phase, in model order."""
    from irforge.backends.cpu import compile_model

    compiled = compile_model(model, threads=1, cache_dir=False)
    compiled(feeds)  # binds the inputs' addresses into the tables
    ex = compiled._executable
    calls = [(_KERNEL(ex.jit.address(p.function)), t.ctypes.data) for p, t in zip(ex.program.phases, ex.tables)]
    times: list[list[float]] = [[] for _ in calls]
    again: list[list[float]] = [[] for _ in calls]
    for _ in range(runs):
        for i, (fn, table) in enumerate(calls):
            t0 = time.perf_counter()
            fn(table, 0, 1)
            times[i].append(time.perf_counter() - t0)
            if HOT:  # the same phase once more at once: its buffers now hot in cache
                t0 = time.perf_counter()
                fn(table, 0, 1)
                again[i].append(time.perf_counter() - t0)
    _HOT_TIMES[:] = [statistics.median(t) if t else 0.0 for t in again]
    compiled.close()
    _PHASE_ARGS[:] = [" ".join(f"{b.kind[0]}{b.nbytes // 1024}k" for b in p.args) for p in ex.program.phases]
    return [(p.tag or "other", p.function, statistics.median(t), p.flops) for p, t in zip(ex.program.phases, times)]


HOT = False
"""`--hot`: also time each phase called a second time right after the first (cache-hot)."""
_HOT_TIMES: list[float] = []
_PHASE_ARGS: list[str] = []
"""each phase's buffers (kind initial and KiB), for `--phases`"""


_ORT_ORDER: list[tuple[str, str, str, float]] = []
"""(node, op, output shape, median seconds) in run order, filled by `ort_nodes` for `--phases`."""


def ort_nodes(path: Path, feeds, runs: int) -> dict[str, float]:  # type: ignore[no-untyped-def]
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.enable_profiling = True
    opts.profile_file_prefix = str(path.with_suffix(""))
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    for _ in range(runs + 1):
        session.run(None, feeds)
    events = json.loads(Path(session.end_profiling()).read_text())
    per_node: dict[str, list[float]] = defaultdict(list)
    kind: dict[str, str] = {}
    shape: dict[str, str] = {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            per_node[e["name"]].append(e["dur"] * 1e-6)
            kind[e["name"]] = e["args"].get("op_name", "?")
            shape[e["name"]] = str(e["args"].get("output_type_shape", ""))[:60]
    _ORT_ORDER[:] = [(n[:-len("_kernel_time")], kind[n], shape[n], statistics.median(t[1:] or t))
                     for n, t in per_node.items()]
    by_kind: dict[str, float] = defaultdict(float)
    for name, t in per_node.items():
        by_kind[kind[name]] += statistics.median(t[1:] or t)
    return dict(by_kind)


def _keras(name: str, tmp: Path, path: Path):  # type: ignore[no-untyped-def]
    """Feeds of a keras.applications model written to `path` as tf2onnx converts it."""
    import onnx
    from zoo_more import freeze_keras, keras_onnx

    pb = tmp / f"{name}.pb"
    feeds, _ = freeze_keras(name, pb)
    keras_onnx(pb).replace(path)
    inputs = [i.name for i in onnx.load(str(path)).graph.input]
    return dict(zip(inputs, feeds.values()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted([*ZOO, *KERAS_MODELS]))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--phases", action="store_true", help="also list every phase in model order")
    ap.add_argument("--hot", action="store_true", help="with --phases: each phase's time when called again at once")
    args = ap.parse_args()
    global HOT
    HOT = args.hot
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{args.model}.onnx"
        if args.model in KERAS_MODELS:  # both on tf2onnx's ONNX file (the zoo gives irforge the frozen graph)
            feeds = _keras(args.model, Path(tmp), path)
        else:
            feeds = ZOO[args.model](path)
        model = import_onnx(str(path))
        apply_pipeline(model.module, DEFAULT_PIPELINE)
        phases = irforge_phases(model, feeds, args.runs)
        ort_kinds = ort_nodes(path, feeds, args.runs)
    by_kernel: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for tag, fn, t, flops in phases:
        entry = by_kernel[(tag, fn)]
        entry[0] += t
        entry[1] += flops
        entry[2] += 1
    total = sum(t for _, _, t, _ in phases)
    print(f"irforge: {len(phases)} phases, {total * 1e3:.1f} ms summed")
    print(f"{'tag':12} {'kernel':40} {'n':>3} {'ms':>8} {'GF/s':>6}")
    for (tag, fn), (t, flops, n) in sorted(by_kernel.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"{tag:12} {fn[:40]:40} {int(n):3d} {t * 1e3:8.2f} {flops / t / 1e9 if flops else 0:6.1f}")
    by_tag: dict[str, float] = defaultdict(float)
    for tag, _, t, _ in phases:
        by_tag[tag] += t
    print("\nirforge per tag (ms): " + ", ".join(f"{k} {v * 1e3:.1f}" for k, v in sorted(by_tag.items(), key=lambda kv: -kv[1])))
    print(f"onnxruntime per op ({sum(ort_kinds.values()) * 1e3:.1f} ms summed): "
          + ", ".join(f"{k} {v * 1e3:.1f}" for k, v in sorted(ort_kinds.items(), key=lambda kv: -kv[1])))
    if args.phases:
        for i, (tag, fn, t, flops) in enumerate(phases):
            print(f"{i:4d} {tag:12} {fn[:24]:24} {t * 1e3:8.3f} {flops / t / 1e9 if flops else 0:6.1f}  {_PHASE_ARGS[i]}"
                  + (f"  again {_HOT_TIMES[i] * 1e3:.3f}" if HOT else ""))
        print("\nonnxruntime nodes in run order (ms):")
        for name, op, shp, t in _ORT_ORDER:
            print(f"{op:18} {t * 1e3:8.3f} {shp} {name[:40]}")


if __name__ == "__main__":
    main()
