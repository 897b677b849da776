"""TorchScript control flow (torch.jit.script: a `for i in range(n)` with n an input, an `if`
on data, a `while` on data) exported by torch.onnx's TorchScript exporter as ONNX Loop / If,
converted by irforge to nn.loop / nn.if and run on ref, cpu and OpenVINO (the IR irforge
writes, f32), each against onnxruntime for several trip counts; prints the max absolute
error per backend. Needs torch (the zoo venv), outside CI:

    PYTHONPATH=. /work/zoo-venv/bin/python bench/control_flow_torch.py [OUT_DIR]
"""

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import openvino as ov
import torch

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn.control_flow import If, Loop
from irforge.frontends.onnx.importer import import_onnx


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        h = x
        for i in range(n):
            h = torch.tanh(self.lin(h)) + i
        if h.sum() > 0:
            h = h * 2
        else:
            h = h - 1
        while h.abs().max() > 1.0:
            h = h * 0.5
        return h


def main(out: Path) -> None:
    path = out / "scripted.onnx"
    torch.manual_seed(0)
    torch.onnx.export(torch.jit.script(Net()), (torch.randn(2, 4), 3), str(path), input_names=["x", "n"], output_names=["y"], opset_version=17, dynamo=False)
    model = import_onnx(str(path))
    kinds = sorted({type(op).__name__ for op in model.func.body.block.ops if isinstance(op, If | Loop)})
    xml, _ = write_ir_xml(model, out / "scripted.xml")
    core = ov.Core()
    ov_model = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    cpu = compile_model(model, threads=1, cache_dir=out / "cache")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    print(f"scripted model: {', '.join(kinds)}")
    for n in (0, 1, 3, 7):
        x = np.random.default_rng(n).standard_normal((2, 4)).astype(np.float32) * 3
        feeds = {"x": x, "n": np.array(n, np.int64)}
        want = session.run(None, feeds)[0]
        got = {"ref": run(model, feeds)["y"], "cpu": cpu(feeds)["y"], "openvino": ov_model(feeds)[ov_model.outputs[0]]}
        print(f"n={n}: " + ", ".join(f"{k} {float(np.abs(v - want).max()):.1e}" for k, v in got.items()))
    cpu.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()))
