"""The demo behind `make demo`: irforge's main job on the bundled example model.

1. `ir-convert` converts examples/models/small_resnet.onnx (a ResNet-style classifier with
   BatchNormalization, residual adds, Gemm and Softmax; made by examples/make_models.py) to
   OpenVINO IR (small_resnet.xml + .bin) and, for reading, to irforge's own IR (.mlir);
2. `ir-run` runs the converted model on the reference interpreter and on the native CPU
   backend and compares each with onnxruntime running the original ONNX file;
3. the op histograms before and after the pipeline show what the passes did.

Run from the repository root: `python examples/demo.py [OUT_DIR]` (default: out/demo).
"""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

from irforge.frontends.onnx import import_onnx
from irforge.model import Model, load_model

EXAMPLE = Path(__file__).parent / "models" / "small_resnet.onnx"


def tool(name: str, *args: str) -> str:
    print(f"$ {name.replace('_', '-')} {' '.join(args)}")
    result = subprocess.run([sys.executable, "-m", f"irforge.tools.{name}", *args], capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(result.stderr.strip())
    if result.stderr.strip():
        print(result.stderr.rstrip())
    return result.stdout


def histogram(model: Model) -> str:
    counts = Counter(op.name.removeprefix("nn.") for op in model.func.body.block.ops if op.name != "func.return")
    return ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out/demo")
    out.mkdir(parents=True, exist_ok=True)
    print(f"imported as is: {histogram(import_onnx(EXAMPLE))}")

    tool("ir_convert", "--input_model", str(EXAMPLE), "--output_dir", str(out), "--log_level", "INFO")
    tool("ir_convert", "--input_model", str(EXAMPLE), "--output_dir", str(out), "--emit", "mlir")
    print(f"after the pipeline: {histogram(load_model(out / 'small_resnet.mlir'))}")

    for device in ("ref", "cpu"):
        print(tool("ir_run", str(out / "small_resnet.xml"), "--device", device, "--seed", "0", "--compare-onnxruntime", str(EXAMPLE)), end="")


if __name__ == "__main__":
    main()
