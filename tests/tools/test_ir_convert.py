"""ir-convert as a user runs it: conversion, mo.py-style flags, and one-line errors."""

import re
import subprocess
import sys

import numpy as np
import onnx
import pytest

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.model import load_model
from irforge.testing.onnx_models import resnet
from irforge.tools.convert_args import parse_per_input_values, parse_shapes
from tests.helpers import ort_session_run

IR_CONVERT = [sys.executable, "-m", "irforge.tools.ir_convert", "--emit", "mlir"]  # these tests read the .mlir


def ir_convert(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*IR_CONVERT, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "net.onnx"
    onnx.save_model(resnet(blocks=(1,), width=8, size=16), str(path))
    return path


def test_converts_to_mlir_that_runs_like_onnxruntime(tmp_path, onnx_path):
    result = ir_convert("--input_model", str(onnx_path), "--output_dir", str(tmp_path), "--model_name", "m")
    assert result.returncode == 0, result.stderr
    model = load_model(tmp_path / "m.mlir")
    x = np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)
    (want,) = ort_session_run(onnx.load(str(onnx_path)), {"data": x})
    got = next(iter(run(model, {"data": x}).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    opt = subprocess.run([sys.executable, "-m", "irforge.tools.ir_opt", str(tmp_path / "m.mlir")], capture_output=True, text=True)
    assert opt.returncode == 0, opt.stderr


def test_input_shape_and_batch(tmp_path, onnx_path):
    result = ir_convert("--input_model", str(onnx_path), "-o", str(tmp_path), "--input_shape", "[2,3,16,16]", "--input", "data")
    assert result.returncode == 0, result.stderr
    assert "tensor<2x3x16x16xf32>" in (tmp_path / "net.mlir").read_text()
    result = ir_convert("--input_model", str(onnx_path), "-o", str(tmp_path), "--batch", "4", "-n", "b4")
    assert result.returncode == 0, result.stderr
    assert "tensor<4x3x16x16xf32>" in (tmp_path / "b4.mlir").read_text()


def test_pipeline_is_printed_and_replaceable(tmp_path, onnx_path):
    shown = ir_convert("--input_model", str(onnx_path), "--pipeline")
    assert shown.returncode == 0 and "infer-shapes,canonicalize" in shown.stdout
    result = ir_convert("--input_model", str(onnx_path), "-o", str(tmp_path), "--pipeline", "infer-shapes", "--log_level", "INFO")
    assert result.returncode == 0, result.stderr
    assert "[ir-convert] import" in result.stderr and "[ir-convert] passes" in result.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--input_model", "/nonexistent.onnx"], "not found"),
        (["--input_shape", "[1,3,x]"], "not a list of integers"),
        (["--input_shape", "1,3,224"], "--input_shape"),
        (["--input_shape", "[1,3,16,16],[1,2]"], "2 shapes for 1 inputs"),
        (["--input", "nope", "--input_shape", "[1,3,16,16]"], "does not have"),
        (["--mean_values", "data[1,2"], "--mean_values"),
        (["--mean_values", "nope[1,2,3]"], "mean names input 'nope'"),
        (["--output", "nope"], "names no layer"),
        (["--data_type", "FP8"], "invalid choice"),
        (["--batch", "0"], "--batch"),
        (["--pipeline", "no-such-pass"], "bad pass pipeline"),
        (["--framework", "caffe"], "no prototxt given"),
    ],
)
def test_bad_flags_give_one_line_errors(tmp_path, onnx_path, args, message):
    base = [] if "--input_model" in args else ["--input_model", str(onnx_path)]
    result = ir_convert(*base, "-o", str(tmp_path), *args)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and re.match(r"irforge: error\[E\d{3}\]: ", lines[0]) and message in lines[0], result.stderr
    assert not list(tmp_path.glob("*.mlir"))


def test_unknown_extension(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"x")
    result = ir_convert("--input_model", str(path))
    assert result.returncode == 2 and "cannot tell the framework" in result.stderr


def test_value_parsers():
    assert parse_shapes("[1,3,224,224]") == [[1, 3, 224, 224]]
    assert parse_shapes("(1,3,?,?),[1, 10]") == [[1, 3, -1, -1], [1, 10]]
    assert parse_per_input_values("data[123,117,104]", "--mean_values") == {"data": [123.0, 117.0, 104.0]}
    assert parse_per_input_values("[1.5,2]", "--mean_values") == {"": [1.5, 2.0]}
    assert parse_per_input_values("a[1],b[2,3]", "--scale_values") == {"a": [1.0], "b": [2.0, 3.0]}
    with pytest.raises(IrforgeError):
        parse_shapes("[0,3]")


def _broken_models(onnx_path):
    from onnx import TensorProto, helper

    data = onnx_path.read_bytes()
    io = ([helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    unknown = helper.make_model(helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"], name="f1")], "g", *io))
    cycle = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["y"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["y"], name="n2")], "g", *io
        )
    )
    return {
        "truncated": (data[: len(data) // 3], "not a valid ONNX model"),
        "garbage": (b"\x00\x01garbage" * 10, "not a valid ONNX model"),
        "unknown_op": (unknown.SerializeToString(), "unsupported ONNX ops: Frobnicate x1 (f1)"),
        "cycle": (cycle.SerializeToString(), "cycle through nodes"),
    }


@pytest.mark.parametrize("kind", ["truncated", "garbage", "unknown_op", "cycle"])
def test_broken_models_give_one_line_errors_and_no_output(tmp_path, onnx_path, kind):
    content, message = _broken_models(onnx_path)[kind]
    model = tmp_path / f"{kind}.onnx"
    model.write_bytes(content)
    out = tmp_path / "out"
    result = ir_convert("--input_model", str(model), "-o", str(out))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not out.exists() or not any(out.iterdir())
