"""Writes the example ONNX models shipped in examples/models (run from the repository root).

    python examples/make_models.py

small_resnet.onnx: a ResNet-style classifier (conv + BatchNormalization + ReLU, residual
adds, global pooling, Gemm, Softmax) with seeded random weights, about 100 KB.
"""

from pathlib import Path

import onnx

from irforge.testing.onnx_models import resnet


def main() -> None:
    out = Path(__file__).parent / "models"
    out.mkdir(exist_ok=True)
    model = resnet(blocks=(1, 1), width=8, size=32, classes=10, seed=42)
    onnx.save_model(model, str(out / "small_resnet.onnx"))
    print(f"wrote {out / 'small_resnet.onnx'}")


if __name__ == "__main__":
    main()
