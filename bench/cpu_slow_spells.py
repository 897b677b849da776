"""Each run of one zoo model in CPU time, in order, to see the host's slow spells.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_slow_spells.py regnet_y_800mf [--runs 40] [--ort]

On this shared host a process's runs sometimes all take ~45% more CPU time for seconds to
minutes (regnet_y_800mf: 20-21 ms, a dozen runs at 29-30, then 20 again), which no job of
this VM explains: CPU time excludes preemption, so the cycles themselves are slower (the L3
is shared with other tenants). A zoo row's median can land in such a spell; its minimum
rarely does. Prints every run (ms), min and median, and the process's anonymous huge pages
(irforge asks for them, `memory.py`: a spell is not their absence). `--ort`: onnxruntime's
runs interleaved, one each after irforge's, to see whether a spell slows both.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cpu_phase_profile  # noqa: E402,F401  (its import skips transformers' torchvision probe)
from zoo_latency import ZOO, prepare, scratch  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=sorted(ZOO), help="an ONNX row of the zoo (not the keras ones)")
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--ort", action="store_true", help="interleave onnxruntime's runs (one thread)")
    args = ap.parse_args()
    from irforge.backends.cpu import compile_model

    model, feeds, path = prepare(args.model, scratch("slow-spells-"))
    compiled = compile_model(model, threads=1, cache_dir=False)
    session = None
    if args.ort:
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    times: dict[str, list[float]] = {"irforge": [], "onnxruntime": []}
    try:
        for _ in range(args.runs):
            start = time.process_time()
            compiled(feeds)
            times["irforge"].append(1e3 * (time.process_time() - start))
            if session is not None:
                start = time.process_time()
                session.run(None, feeds)
                times["onnxruntime"].append(1e3 * (time.process_time() - start))
    finally:
        compiled.close()
    rollup = Path("/proc/self/smaps_rollup")
    huge = re.search(r"AnonHugePages:\s+(\d+)", rollup.read_text()) if rollup.exists() else None
    for engine, runs in times.items():
        if runs:
            print(f"{engine:12s}", " ".join(f"{t:.1f}" for t in runs))
            print(f"{engine:12s} min {min(runs):.1f} median {statistics.median(runs):.1f} ms")
    print(f"anonymous huge pages: {int(huge.group(1)) // 1024 if huge else '?'} MiB")


if __name__ == "__main__":
    main()
