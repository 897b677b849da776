"""One zoo model on one thread: irforge, onnxruntime and OpenVINO run in turn in one process,
each run timed in CPU time of the process and in wall time; min and median of each.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_time_vs_engines.py t5_small_encoder_seq128 [--runs 21]

`bench/zoo_latency.py` reports wall-time medians; on a shared host whose load is over the core
count, other jobs take the core mid-run and those medians move by 10-20% between runs (T5-small
1.07x onnxruntime in one zoo run, 0.90x in another). CPU time counts only this process's own
cycles (every thread of it: onnxruntime on one intra-op thread runs in the caller's; OpenVINO's
one stream may run in a worker thread, whose time counts too), so the ratios of CPU-time minima
are what a quiet machine would show, up to cache sharing with the other jobs. keras.applications
rows (`keras_Xception`, ...) as in the zoo: irforge and OpenVINO on the frozen graph, onnxruntime
on tf2onnx's file of it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cpu_phase_profile  # noqa: E402,F401  (its import skips transformers' torchvision probe)
from zoo_latency import ZOO, openvino_model, prepare, scratch  # noqa: E402
from zoo_more import KERAS_MODELS, keras_onnx  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=sorted([*ZOO, *KERAS_MODELS]))
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    import onnxruntime as ort
    import openvino as ov

    from irforge.backends.cpu import compile_model

    model, feeds, path = prepare(args.model, scratch("vs-engines-"))
    mine = compile_model(model, threads=1, cache_dir=False)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
    keras = path.suffix == ".pb"  # a frozen keras graph: onnxruntime runs tf2onnx's file of it, as in the zoo
    session = ort.InferenceSession(str(keras_onnx(path) if keras else path), options, providers=["CPUExecutionProvider"])
    ort_feeds = {session.get_inputs()[0].name: feeds["x"]} if keras else feeds
    ov_feeds = list(feeds.values()) if keras else feeds  # OpenVINO names a TF input otherwise
    request = ov.Core().compile_model(openvino_model(path), "CPU", {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": 1}).create_infer_request()
    engines = {"irforge": lambda: mine(feeds), "onnxruntime": lambda: session.run(None, ort_feeds), "openvino": lambda: request.infer(ov_feeds)}
    cpu: dict[str, list[float]] = {name: [] for name in engines}
    wall: dict[str, list[float]] = {name: [] for name in engines}
    for fn in engines.values():
        fn()
        fn()
    for _ in range(args.runs):
        for name, fn in engines.items():
            c0, w0 = time.process_time(), time.perf_counter()
            fn()
            wall[name].append(time.perf_counter() - w0)
            cpu[name].append(time.process_time() - c0)
    for name in engines:
        print(f"{args.model} {name:11s} CPU min {min(cpu[name]) * 1e3:8.1f} median {statistics.median(cpu[name]) * 1e3:8.1f} ms; "
              f"wall min {min(wall[name]) * 1e3:8.1f} median {statistics.median(wall[name]) * 1e3:8.1f} ms")
    for other in ("onnxruntime", "openvino"):
        print(f"  irforge / {other}: CPU min {min(cpu['irforge']) / min(cpu[other]):.3f}, median "
              f"{statistics.median(cpu['irforge']) / statistics.median(cpu[other]):.3f}; wall median "
              f"{statistics.median(wall['irforge']) / statistics.median(wall[other]):.3f}")


if __name__ == "__main__":
    main()
