"""Benchmark: importing a ResNet-50-size ONNX model (25.6 M parameters, ~102 MB of weights).

Each measurement runs in a fresh process so peak memory (max RSS) is its own:
  - irforge: load + import into the nn dialect (weights into the store), then canonicalize;
  - ir-convert --emit mlir: the whole conversion, weights written to disk;
  - onnxruntime: creating an InferenceSession from the same file (for scale).
Prints wall time, peak RSS, and ratios to the weight bytes and to onnxruntime.

    python bench/onnx_import.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, time

def status_mb(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024

def rss_mb():
    return status_mb("VmRSS")

kind, path = sys.argv[1], sys.argv[2]
if kind == "irforge":
    from irforge.frontends.onnx import import_onnx
    from irforge.passes import apply_pipeline
    import irforge.frontends.onnx.extractors
    base = rss_mb()
    t_start = time.perf_counter()
    model = import_onnx(path)
    t_import = time.perf_counter() - t_start
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    ops = sum(1 for _ in model.func.body.block.ops)
elif kind == "ir-convert":
    import tempfile
    from irforge.tools.ir_convert import convert
    base = rss_mb()
    t_start = time.perf_counter()
    convert(["--input_model", path, "--output_dir", tempfile.mkdtemp(), "--emit", "mlir"])
    t_import = time.perf_counter() - t_start
    ops = 0
else:
    import onnxruntime as ort
    base = rss_mb()
    t_start = time.perf_counter()
    ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    t_import = time.perf_counter() - t_start
    ops = 0
total = time.perf_counter() - t_start
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec from the parent that built the model
peak = status_mb("VmHWM")
print(json.dumps({"import_s": t_import, "total_s": total, "ops": ops, "peak_rss_mb": peak,
                  "model_mb": peak - base}))
"""


def measure(kind: str, path: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, kind, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="write the model into this folder and keep it")
    args = parser.parse_args()
    import onnx

    from irforge.testing.onnx_models import resnet

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "resnet50.onnx"
    model = resnet((3, 4, 6, 3), 64, 224, 1000, bottleneck=True)
    weight_bytes = sum(t.ByteSize() for t in model.graph.initializer)
    onnx.save_model(model, str(path))
    del model
    ours, ort = measure("irforge", path), measure("onnxruntime", path)
    whole = measure("ir-convert", path)
    mb = weight_bytes / 2**20
    print(f"model: ResNet-50 shapes, {weight_bytes / 1e6:.1f} MB of weights, file {path.stat().st_size / 1e6:.1f} MB")
    print(f"irforge import:      {ours['import_s']:.2f} s (with canonicalize {ours['total_s']:.2f} s), {ours['ops']} ops; "
          f"peak RSS {ours['peak_rss_mb']:.0f} MB, of which {ours['model_mb']:.0f} MB above the loaded libraries "
          f"= {ours['model_mb'] / mb:.2f}x the weights")
    print(f"ir-convert --emit mlir (import, passes, writing .mlir + .weights): {whole['total_s']:.2f} s; "
          f"peak RSS {whole['peak_rss_mb']:.0f} MB, {whole['model_mb']:.0f} MB above the libraries "
          f"= {whole['model_mb'] / mb:.2f}x the weights")
    print(f"onnxruntime session: {ort['import_s']:.2f} s; peak RSS {ort['peak_rss_mb']:.0f} MB, "
          f"of which {ort['model_mb']:.0f} MB above the loaded libraries")
    print(f"ratio irforge/onnxruntime: time {ours['total_s'] / ort['import_s']:.2f}x, "
          f"memory above libraries {ours['model_mb'] / ort['model_mb']:.2f}x")


if __name__ == "__main__":
    main()
