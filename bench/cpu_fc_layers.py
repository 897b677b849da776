"""Transformer FC layers one at a time (x[M, K] @ W[K, N] + bias, optionally GELU), irforge's
phases against onnxruntime on one thread, and variants compiled with module settings changed.

Outside CI (the zoo venv):

    PYTHONPATH=$PWD /work/zoo-venv/bin/python bench/cpu_fc_layers.py [--rounds 30] [--only whisper] \
        [--ab irforge.backends.cpu.ops.linear.FC_KC=256]

Each `--ab` (repeatable, MODULE.ATTR=VALUE) is one variant holding all of them; the three
(irforge, onnxruntime, variant) alternate in one process, min of `--rounds`. GFLOP/s of 2 M N K.
`--flush` evicts the weights from the caches before every call (a whole model's weights do
not stay in L3 from one run to the next). The shapes are BERT-base / ViT-B/16 / T5-small / Whisper-base's projections and FFN GEMMs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from cpu_conv_layers import layer_engines, parse_ab, report_line  # noqa: E402

# name, M, K, N, GELU after, occurrences per model
LAYERS = [
    ("bert_qkv", 128, 768, 768, False, 48),
    ("bert_ffn1", 128, 768, 3072, True, 12),
    ("bert_ffn2", 128, 3072, 768, False, 12),
    ("vit_qkv", 197, 768, 768, False, 48),
    ("vit_ffn1", 197, 768, 3072, True, 12),
    ("vit_ffn2", 197, 3072, 768, False, 12),
    ("t5_qkv", 128, 512, 512, False, 24),
    ("t5_ffn1", 128, 512, 2048, False, 6),
    ("t5_ffn2", 128, 2048, 512, False, 6),
    ("whisper_qkv", 1500, 512, 512, False, 24),
    ("whisper_ffn1", 1500, 512, 2048, True, 6),
    ("whisper_ffn2", 1500, 2048, 512, False, 6),
]


def fc_model(m: int, k: int, n: int, gelu: bool):  # type: ignore[no-untyped-def]
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = (rng.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
    b = (rng.standard_normal(n) * 0.1).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["p"]), helper.make_node("Add", ["p", "b"], ["s" if gelu else "y"])]
    if gelu:
        nodes.append(helper.make_node("Gelu", ["s"], ["y"], domain="com.microsoft"))
    graph = helper.make_graph(
        nodes, "fc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, m, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    return proto, {"x": rng.standard_normal((1, m, k)).astype(np.float32)}, 2 * m * n * k


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--only", default="", help="substring of the layer names to run")
    ap.add_argument("--flush", action="store_true", help="write 64 MiB before each call: the weights come from memory, as in a whole model")
    ap.add_argument("--ab", action="append", default=[], help="MODULE.ATTR=VALUE (repeatable): a variant compiled with these")
    args = ap.parse_args()
    import os

    import onnxruntime as ort

    change = parse_ab(args.ab)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    flush = np.zeros(16 << 20, np.float32) if args.flush else None
    totals = {"irforge": 0.0, "ort": 0.0, "variant": 0.0}
    print(f"{'layer':14} {'x':>2} {'ir ms':>7} {'GF/s':>5} {'ort ms':>7} {'GF/s':>5} {'ir/ort':>6}" + ("  variant ms  var/ir" if change else ""))
    with tempfile.TemporaryDirectory() as tmp:
        for name, m, k, n, gelu, count in LAYERS:
            if args.only not in name:
                continue
            proto, feeds, flops = fc_model(m, k, n, gelu)
            engines, calls = layer_engines(proto, feeds, Path(tmp) / "fc.onnx", change, opts)
            times: dict[str, list[float]] = {label: [] for label in calls}
            for r in range(args.rounds):
                for label, call in (calls.items() if r % 2 == 0 else reversed(calls.items())):
                    if flush is not None:
                        flush += 1.0
                    t0 = time.perf_counter()
                    call()
                    times[label].append(time.perf_counter() - t0)
            print(report_line(name, 14, count, flops, times, totals, change), flush=True)
            for compiled in engines.values():
                compiled.close()
    print(f"weighted by occurrences (min times): irforge {totals['irforge'] * 1e3:.1f} ms, onnxruntime {totals['ort'] * 1e3:.1f} ms"
          + (f", variant {totals['variant'] * 1e3:.1f} ms" if change else "") + f" (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
