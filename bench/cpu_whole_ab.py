"""One zoo model's whole irforge run next to onnxruntime's in one process, one thread: the
unit of an A/B between two source trees run as alternating processes (the ratio to
onnxruntime in the same process cancels much of a shared machine's load).

Outside CI (the zoo venv); the ONNX export is kept in --workdir between runs:

    PYTHONPATH=<tree> /work/zoo-venv/bin/python bench/cpu_whole_ab.py lraspp_mobilenet_v3 [--runs 11]
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cpu_phase_profile  # noqa: E402,F401  (skips torchvision inside transformers)
from zoo_latency import ZOO  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(ZOO))
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--workdir", default="/tmp/irforge-cpu-ab")
    args = ap.parse_args()
    import onnxruntime as ort

    from irforge.backends.cpu import compile_model
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    path = Path(args.workdir) / f"{args.model}.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.with_suffix(".feeds").exists():
        path.with_suffix(".feeds").write_bytes(pickle.dumps(ZOO[args.model](path)))
    feeds = pickle.loads(path.with_suffix(".feeds").read_bytes())
    model = import_onnx(str(path))
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    compiled = compile_model(model, threads=1, cache_dir=False)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    session = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
    for _ in range(2):
        compiled(feeds)
        session.run(None, feeds)
    mine, theirs = [], []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        compiled(feeds)
        mine.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        session.run(None, feeds)
        theirs.append(time.perf_counter() - t0)
    a, b = statistics.median(mine), statistics.median(theirs)
    print(f"{args.model}: irforge {a * 1e3:.1f} ms, onnxruntime {b * 1e3:.1f} ms, ratio {a / b:.2f}")
    compiled.close()


if __name__ == "__main__":
    main()
