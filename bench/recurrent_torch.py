"""torch's nn.LSTM / GRU / RNN (2 layers, bidirectional, batch first, then a Linear on the last
step) exported by torch.onnx (TorchScript and dynamo), converted by irforge and run on ref, cpu
and OpenVINO (the IR irforge writes, f32), each compared with onnxruntime; prints the max
absolute error per backend. Needs torch (the zoo venv), outside CI:

    PYTHONPATH=. /work/zoo-venv/bin/python bench/recurrent_torch.py [OUT_DIR]
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
from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx

KINDS = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU, "rnn": torch.nn.RNN}


class Net(torch.nn.Module):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.rnn = KINDS[kind](8, 16, num_layers=2, bidirectional=True, batch_first=True)
        self.fc = torch.nn.Linear(32, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


def errors(path: Path, out: Path, feeds: dict[str, np.ndarray]) -> str:
    """Max absolute error against onnxruntime of ref, cpu and OpenVINO on irforge's IR."""
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    model = import_onnx(path)
    ref = run(model, feeds)["y"]
    compiled = compile_model(model, threads=1)
    try:
        cpu = compiled(feeds)["y"]
    finally:
        compiled.close()
    xml, _ = write_ir_xml(model, out / f"{path.stem}.xml")
    core = ov.Core()
    runner = core.compile_model(core.read_model(str(xml)), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    openvino = runner(feeds)[runner.outputs[0]]
    ops = sorted({op.name for op in model.func.body.block.ops if op.name.endswith("_sequence")}) or ["(decomposed by the exporter)"]
    diffs = (float(np.abs(a - want).max()) for a in (ref, cpu, openvino))
    return f"{' '.join(ops)}: ref %.1e, cpu %.1e, openvino %.1e" % tuple(diffs)


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(3, 7, 8)
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    for kind in KINDS:
        for dynamo in (False, True):
            label = f"{kind} {'dynamo' if dynamo else 'torchscript'}"
            path = out / f"{kind}_{'dynamo' if dynamo else 'torchscript'}.onnx"
            try:
                torch.onnx.export(Net(kind).eval(), (x,), str(path), input_names=["x"], output_names=["y"], dynamo=dynamo)
            except Exception as e:  # noqa: BLE001  (an exporter failure is reported, not ours)
                print(f"{label}: export failed: {str(e)[:100]}")
                continue
            try:
                print(f"{label}: {errors(path, out, {'x': x.numpy()})}")
            except IrforgeError as e:
                print(f"{label}: irforge: {e}")


if __name__ == "__main__":
    main()
