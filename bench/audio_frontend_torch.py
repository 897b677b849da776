"""A Whisper-style log-mel front-end (reflect-padded torch.stft, n_fft 400, hop 160, Hann
window, power spectrum, an 80-bin mel matrix, log10) exported by torch's dynamo exporter
(ONNX STFT), converted by irforge and run on ref, cpu and OpenVINO (the IR irforge writes,
f32), each compared with onnxruntime; prints the max absolute error per backend. torch's
TorchScript exporter refuses complex STFT outputs, so only the dynamo export is tried. Needs
torch (the zoo venv), outside CI:

    PYTHONPATH=. /work/zoo-venv/bin/python bench/audio_frontend_torch.py [OUT_DIR]
"""

import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import torch

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.frontends.onnx.importer import import_onnx


class LogMel(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("window", torch.hann_window(400))
        self.register_buffer("mel", torch.rand(201, 80, generator=torch.Generator().manual_seed(0)))

    def forward(self, audio: torch.Tensor) -> torch.Tensor:
        spec = torch.stft(audio, 400, 160, window=self.window, center=True, return_complex=True)
        power = spec.abs() ** 2
        return (power.transpose(1, 2) @ self.mel).clamp(min=1e-10).log10()


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp())
    out.mkdir(parents=True, exist_ok=True)
    path = out / "logmel.onnx"
    torch.onnx.export(LogMel().eval(), (torch.randn(2, 16000),), str(path), opset_version=18, dynamo=True)
    proto = onnx.load(path)
    name = proto.graph.input[0].name
    feeds = {name: np.random.default_rng(0).normal(0, 1, (2, 16000)).astype(np.float32)}
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    model = import_onnx(proto)
    write_ir_xml(model, out / "logmel.xml")
    compiled = ov.Core().compile_model(str(out / "logmel.xml"), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    results = {
        "ref": next(iter(run(model, feeds).values())),
        "cpu": next(iter(compile_model(model)(feeds).values())),
        "openvino": np.asarray(compiled(feeds)[compiled.outputs[0]]),
    }
    ops = sorted({n.op_type for n in proto.graph.node})
    print(f"ops: {' '.join(ops)}; output {list(want.shape)}")
    for tag, got in results.items():
        print(f"{tag:9s} max |err| vs onnxruntime: {float(np.abs(got - want).max()):.2e}")


if __name__ == "__main__":
    main()
