"""The demo behind `make demo`: build a small conv-bn-relu classifier in the `nn` dialect,
optimise it with `ir-opt -p infer-shapes,canonicalize`, run both versions on the reference
interpreter with `ir-run`, and show that the outputs agree.

Run from the repository root: `python examples/demo.py [OUT_DIR]` (default: out/demo).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import (
    BatchNormalization,
    Convolution,
    Eltwise,
    Flatten,
    FullyConnected,
    Identity,
    Pooling,
    ReLU,
    Reshape,
    SoftMax,
)
from irforge.model import Model, load_model, save_model


def conv_bn_relu(b: ModelBuilder, x, cin: int, cout: int, name: str, rng: np.random.Generator):  # type: ignore[no-untyped-def]
    w = b.constant(rng.standard_normal((cout, cin, 3, 3)).astype(np.float32) * 0.2, f"{name}.w")
    conv = b.add(Convolution, [x, w], pads_begin=[1, 1], pads_end=[1, 1], name=name)
    stats = [
        rng.uniform(0.5, 1.5, cout),  # gamma
        rng.uniform(-0.1, 0.1, cout),  # beta
        rng.uniform(-0.1, 0.1, cout),  # mean
        rng.uniform(0.5, 1.5, cout),  # variance
    ]
    consts = [b.constant(s.astype(np.float32), f"{name}.bn{i}") for i, s in enumerate(stats)]
    bn = b.add(BatchNormalization, [conv.output, *consts], epsilon=1e-5, name=f"{name}.bn")
    return b.add(ReLU, [bn.output], name=f"{name}.relu").output


def build_model(seed: int = 0) -> Model:
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.input("data", [1, 3, 32, 32])
    y = conv_bn_relu(b, x, 3, 16, "conv1", rng)
    y = b.add(Pooling, [y], method="max", kernel=[2, 2], strides=[2, 2], name="pool1").output
    y = conv_bn_relu(b, y, 16, 32, "conv2", rng)
    y = b.add(Pooling, [y], method="avg", global_pool=True, name="gap").output
    y = b.add(Identity, [y], name="dropout").output  # what a Dropout layer imports as
    y = b.add(Flatten, [y], axis=1, name="flatten").output
    y = b.add(Reshape, [y], shape=[1, 32], name="reshape").output  # exporters add these
    # the classifier's weights are computed from constants: canonicalize folds them
    base = b.constant(rng.standard_normal((10, 32)).astype(np.float32), "fc.w_raw")
    scale = b.constant(np.full((10, 1), 0.1, np.float32), "fc.scale")
    w = b.add(Eltwise, [base, scale], operation="mul", name="fc.w").output
    y = b.add(FullyConnected, [y, w], name="fc").output
    b.output(b.add(SoftMax, [y], axis=1, name="prob").output, "prob")
    return b.finish()


def tool(name: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", f"irforge.tools.{name}", *args], capture_output=True, text=True
    )
    if result.returncode != 0:
        sys.exit(result.stderr.strip())
    return result.stdout


def count_ops(model: Model) -> int:
    return sum(1 for op in model.func.body.block.ops if op.name != "func.return")


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "out/demo")
    out.mkdir(parents=True, exist_ok=True)
    model_path, opt_path = out / "model.mlir", out / "model.opt.mlir"
    save_model(build_model(), model_path)
    print(f"built {model_path} ({count_ops(load_model(model_path))} ops) + {model_path.with_suffix('.weights')}")

    print("$ ir-opt model.mlir -p infer-shapes,canonicalize -o model.opt.mlir")
    tool("ir_opt", str(model_path), "-p", "infer-shapes,canonicalize", "-o", str(opt_path))
    print(f"optimised: {count_ops(load_model(opt_path))} ops (Identity, the reshape chain and the")
    print("  constant weight computation are gone)")

    print("$ ir-run model.opt.mlir --seed 0")
    print(tool("ir_run", str(opt_path), "--seed", "0"), end="")

    data = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    before = run(load_model(model_path), {"data": data})["prob"]
    after = run(load_model(opt_path), {"data": data})["prob"]
    print(f"output shape {list(after.shape)}, checksum {after.sum():.6f}, "
          f"max |before - after| = {np.abs(before - after).max():.2e}")


if __name__ == "__main__":
    main()
