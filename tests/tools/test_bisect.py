"""ir-run MODEL --bisect ORIGINAL: the first layer that diverges from the framework's values."""

import subprocess
import sys

import numpy as np
import onnx
import pytest

from irforge.testing.onnx_models import resnet
from irforge.tools.bisect import Original, _first_true, relative_error
from irforge.tools.ir_convert import convert


def ir_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "irforge.tools.ir_run", *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """ORIGINAL (ONNX), MODEL converted from it, and a broken MODEL whose relu_16 leaks."""
    directory = tmp_path_factory.mktemp("bisect")
    onnx.save_model(resnet(blocks=(1,), width=8, size=16), str(directory / "net.onnx"))
    convert([str(directory / "net.onnx"), "--output_model", str(directory / "m.mlir")])
    text = (directory / "m.mlir").read_text()
    assert '{name = "relu_16"}' in text
    (directory / "bad.mlir").write_text(text.replace('{name = "relu_16"}', '{negative_slope = 0.5 : f32, name = "relu_16"}'))
    (directory / "bad.weights").write_bytes((directory / "m.weights").read_bytes())
    return directory


def test_bisection_finds_the_first_true():
    for first in range(7):
        calls = []
        assert _first_true(7, lambda k: calls.append(k) or k >= first) == first
        assert len(calls) <= 4
    assert _first_true(7, lambda k: False) is None


def test_relative_error_and_fused_layers_match_their_followers():
    assert relative_error(np.array([1.0, 2.0]), np.array([1.0, 4.0])) == 0.5
    assert relative_error(np.zeros(2), np.zeros(3)) == float("inf")
    original = Original("x", {"conv": np.zeros(2), "bn": np.ones(2)}, {"conv": ["bn"]})
    assert [n for n, _ in original.candidates("conv")] == ["conv", "bn"]


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_names_the_first_diverging_layer(models, device):
    result = ir_run(str(models / "bad.mlir"), "--bisect", str(models / "net.onnx"), "--device", device)
    assert result.returncode == 0, result.stderr
    assert "first diverging layer: nn.relu 'relu_16'" in result.stdout, result.stdout
    assert "last matching layer before it: nn.convolution 'conv_10'" in result.stdout


def test_a_faithful_model_has_no_diverging_layer(models):
    result = ir_run(str(models / "m.mlir"), "--bisect", str(models / "net.onnx"))
    assert result.returncode == 0 and "no layer diverges" in result.stdout, result.stdout + result.stderr


def test_original_from_an_unoptimised_import(models):
    result = ir_run(str(models / "bad.mlir"), "--bisect", str(models / "m.mlir"))
    assert "reference interpreter, unoptimised import" in result.stdout and "first diverging layer: nn.relu 'relu_16'" in result.stdout
    missing = ir_run(str(models / "m.mlir"), "--bisect", str(models / "absent.onnx"))
    assert missing.returncode == 2 and "error[E891]" in missing.stderr
