"""A transformer MLP's first layer, `x @ W + b -> GELU`, with GELU fused into the GEMM's
epilogue (`epilogue.GELU_KINDS` added to `FUSED_KINDS` for that compile; off by default)
against GELU as its own phase: both compiled in one process and called
alternately, medians and minima; one thread. The shapes are BERT-base's at 128 tokens, ViT-B/16's (197)
and Whisper-base's encoder (1500 x 512 -> 2048).

Outside CI; the machine may be shared (record `uptime`, read the ratio):

    PYTHONPATH=$PWD python bench/cpu_gelu_ab.py [--rounds 30]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from irforge.backends.cpu import compile_model
from irforge.backends.cpu.ops import fusion
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, FullyConnected

SHAPES = {"bert_base_seq128": (128, 768, 3072), "vit_b16": (197, 768, 3072), "whisper_base_encoder": (1500, 512, 2048)}


def mlp(m: int, k: int, n: int, kind: str):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    b = ModelBuilder()
    x = b.input("x", (1, m, k))
    w = b.constant((rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32))
    bias = b.constant((rng.standard_normal(n) * 0.1).astype(np.float32))
    y = b.add(FullyConnected, [x, w, bias]).output
    b.output(b.add(Activation, [y], kind=kind).output, "y")
    return b.finish(), {"x": rng.standard_normal((1, m, k)).astype(np.float32)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=30)
    args = ap.parse_args()
    from irforge.backends.cpu.codegen.epilogue import GELU_KINDS

    fused_kinds = fusion.FUSED_KINDS
    for name, (m, k, n) in SHAPES.items():
        for kind in ("gelu", "gelu_tanh"):
            model, feeds = mlp(m, k, n, kind)
            separate = compile_model(model, threads=1, cache_dir=False)
            fusion.FUSED_KINDS = fused_kinds | GELU_KINDS
            fused = compile_model(model, threads=1, cache_dir=False)
            fusion.FUSED_KINDS = fused_kinds
            assert separate.stats.phases == fused.stats.phases + 1
            np.testing.assert_allclose(fused(feeds)["y"], separate(feeds)["y"], rtol=1e-5, atol=1e-5)
            times: dict[str, list[float]] = {"separate": [], "fused": []}
            for _ in range(args.rounds):
                for label, compiled in (("separate", separate), ("fused", fused)):
                    t0 = time.perf_counter()
                    compiled(feeds)
                    times[label].append(time.perf_counter() - t0)
            a, b = (statistics.median(times[label]) * 1e3 for label in ("separate", "fused"))
            lo_a, lo_b = (min(times[label]) * 1e3 for label in ("separate", "fused"))
            print(f"{name} {m}x{k}->{n} {kind}: median separate {a:.2f} ms, fused {b:.2f} ms, ratio {b / a:.3f}; "
                  f"min {lo_a:.2f} -> {lo_b:.2f} ms, ratio {lo_b / lo_a:.3f}", flush=True)
            separate.close()
            fused.close()


if __name__ == "__main__":
    main()
