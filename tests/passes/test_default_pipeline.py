"""ir-convert's default pipeline on the test networks: nothing fusable is left, outputs
do not change; its flags add the passes they stand for."""

import subprocess
import sys

import numpy as np
import onnx
import pytest

from irforge.backends.reference import run
from irforge.dialects.nn import BatchNormalization, ScaleShift
from irforge.frontends.onnx import import_onnx
from irforge.model import Model, load_model
from irforge.passes import apply_pipeline
from irforge.passes.patterns.affine import linear_step
from irforge.testing import onnx_models
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

MODELS = {"resnet": onnx_models.resnet, "mobilenet_v2": onnx_models.mobilenet_v2, "vgg": onnx_models.vgg}


def linear_ops(model: Model) -> list[str]:
    """BatchNormalization, ScaleShift, and Mul/Add by constants left in the model."""
    return [
        op.name
        for op in model.func.body.block.ops
        if isinstance(op, (BatchNormalization, ScaleShift)) or linear_step(op) is not None
    ]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_default_pipeline_fuses_every_linear_op_and_keeps_outputs(name):
    proto = MODELS[name]()
    unfused = import_onnx(proto)
    apply_pipeline(unfused.module, "infer-shapes,canonicalize")
    assert "nn.batch_norm" in linear_ops(unfused) or name == "vgg"
    fused = import_onnx(proto)
    apply_pipeline(fused.module, DEFAULT_PIPELINE)
    assert linear_ops(fused) == []
    feed = {"data": np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    want, got = run(unfused, feed), run(fused, feed)
    for key in want:
        err = float(np.abs(got[key] - want[key]).max()) / float(np.abs(want[key]).max())
        assert err <= 1e-5, f"{key}: relative error {err:.2e}"


def test_ir_convert_flags_add_their_passes(tmp_path):
    path = tmp_path / "net.onnx"
    onnx.save_model(onnx_models.resnet(blocks=(1,), width=8, size=16), str(path))
    command = [sys.executable, "-m", "irforge.tools.ir_convert", "--emit", "mlir", "--input_model", str(path), "-o", str(tmp_path)]
    flags = ["--scale_values", "[58.4,57.1,57.4]", "--reverse_input_channels", "--data_type", "FP16"]
    shown = subprocess.run([*command, *flags, "--disable_fusing", "--pipeline"], capture_output=True, text=True, check=True)
    assert "preprocess{" in shown.stdout and "compress-fp16" in shown.stdout and "fuse-linear-ops" not in shown.stdout
    result = subprocess.run([*command, *flags, "-n", "pre"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    plain = subprocess.run([*command, "-n", "plain"], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
    pre, ref = load_model(tmp_path / "pre.mlir"), load_model(tmp_path / "plain.mlir")
    ops = [op.name for op in pre.func.body.block.ops if op.name not in ("nn.constant", "nn.convert")]
    assert ops == [op.name for op in ref.func.body.block.ops if op.name != "nn.constant"]
    x = np.random.default_rng(0).uniform(0, 255, (1, 3, 16, 16)).astype(np.float32)
    scaled = (x / np.array([58.4, 57.1, 57.4], np.float32).reshape(1, 3, 1, 1))[:, ::-1]
    (want,) = run(ref, {"data": np.ascontiguousarray(scaled)}).values()
    (got,) = run(pre, {"data": x}).values()
    np.testing.assert_allclose(got, want, rtol=0.05, atol=0.02)  # f16 weights
