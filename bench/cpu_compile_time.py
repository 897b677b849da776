"""Cold and cached compile of zoo models: CPU seconds (this process + LLVM workers) and wall.

Outside CI (the zoo venv); to compare two source trees, run it alternately with each on the
path (the ONNX exports are kept in --workdir):

    PYTHONPATH=<tree> /work/zoo-venv/bin/python bench/cpu_compile_time.py resnet50,vgg16 [--workdir /tmp/irforge-compile-time]

Per model: the kernels, a cold compile into a fresh cache directory (as many LLVM worker
processes as `compile_model` starts by default, one thread), CPU time of this process and
its children and the wall time, the growth of the peak RSS over the process before it
(VmHWM, reset through /proc/self/clear_refs) beside the weights, packed constants and arena
it should come to, then a compile of the same model from that cache (the
program cache: no pass, lowering or LLVM), after its entry is written. One JSON line each,
with the load average: read CPU seconds on a shared machine, walls on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cpu_phase_profile  # noqa: E402,F401  (skips torchvision inside transformers)
from zoo_latency import MIB, ZOO, reset_peak, rss  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models")
    ap.add_argument("--workdir", default="/tmp/irforge-compile-time")
    args = ap.parse_args()
    import irforge
    from irforge.backends.cpu import compile_model, program_cache
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    for name in args.models.split(","):
        path = Path(args.workdir) / f"{name}.onnx"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.with_suffix(".feeds").write_bytes(pickle.dumps(ZOO[name](path)))
        model = import_onnx(str(path))
        apply_pipeline(model.module, DEFAULT_PIPELINE)
        cache = Path(tempfile.mkdtemp(prefix="compile-time-"))
        before = rss()
        reset_peak()
        cpu0, child0, wall0 = time.process_time(), resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        compiled = compile_model(model, threads=1, cache_dir=cache)
        wall = time.perf_counter() - wall0
        peak = rss("VmHWM") - before
        stats = compiled.stats
        child1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = time.process_time() - cpu0 + (child1.ru_utime + child1.ru_stime) - (child0.ru_utime + child0.ru_stime)
        kernels = compiled.stats.kernels
        compiled.close()
        program_cache.wait_for_writes()  # else the cached compile waits for the entry's writing
        cpu0, wall0 = time.process_time(), time.perf_counter()
        compiled = compile_model(model, threads=1, cache_dir=cache)
        cached_wall, cached_cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        assert compiled.stats.program_cached
        compiled.close()
        shutil.rmtree(cache)
        print(json.dumps({
            "model": name, "tree": str(Path(irforge.__file__).parent.parent), "kernels": kernels,
            "cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "cached_wall_s": round(cached_wall, 2),
            "cached_cpu_s": round(cached_cpu, 2), "weights_mib": round(stats.weight_bytes / MIB),
            "packed_mib": round(stats.constant_bytes / MIB), "arena_mib": round(stats.arena_bytes / MIB),
            "cold_peak_mib": round(peak / MIB), "load": round(os.getloadavg()[0], 1),
        }), flush=True)


if __name__ == "__main__":
    main()
