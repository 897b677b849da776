"""ir-run: seeded inputs, given inputs, saved outputs, and one-line errors."""

import subprocess
import sys

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Eltwise, ReLU
from irforge.model import load_model, save_model

IR_RUN = [sys.executable, "-m", "irforge.tools.ir_run"]


def ir_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*IR_RUN, *args], capture_output=True, text=True, timeout=120)


@pytest.fixture
def model_path(tmp_path):
    b = ModelBuilder()
    x = b.input("x", [2, 3])
    bias = b.constant(np.arange(30, dtype=np.float32).reshape(10, 3)[:2], "bias")
    s = b.add(Eltwise, [x, bias], operation="sum")
    b.output(b.add(ReLU, [s.output]).output, "y")
    path = tmp_path / "m.mlir"
    save_model(b.finish(), path)
    return path


def test_given_input_and_saved_output(tmp_path, model_path):
    x = np.array([[-10, 1, 2], [3, -40, 5]], np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "out.npz"
    result = ir_run(str(model_path), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("y: shape=[2, 3] dtype=float32")
    expected = np.maximum(x + np.arange(6, dtype=np.float32).reshape(2, 3), 0)
    np.testing.assert_array_equal(np.load(out)["y"], expected)


def test_seeded_inputs_are_reproducible(model_path):
    first, second = ir_run(str(model_path), "--seed", "7"), ir_run(str(model_path), "--seed", "7")
    assert first.returncode == 0 and first.stdout == second.stdout
    assert ir_run(str(model_path), "--seed", "8").stdout != first.stdout


def test_outputs_equal_the_interpreter(tmp_path, model_path):
    x = np.ones((2, 3), np.float32)
    np.save(tmp_path / "x.npy", x)
    out = tmp_path / "o.npz"
    ir_run(str(model_path), "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out))
    expected = run(load_model(model_path), {"x": x})["y"]
    np.testing.assert_array_equal(np.load(out)["y"], expected)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--device", "tpu"], "unknown device 'tpu'"),
        (["--input", "nonsense"], "write --input NAME=FILE.npy"),
        (["--input", "z=/nonexistent.npy"], "cannot read input 'z'"),
        (["--bogus"], "unrecognized arguments"),
    ],
)
def test_bad_flags(model_path, extra, message):
    result = ir_run(str(model_path), *extra)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_unknown_input_name_and_wrong_shape(tmp_path, model_path):
    np.save(tmp_path / "x.npy", np.ones((5,), np.float32))
    result = ir_run(str(model_path), "--input", f"q={tmp_path / 'x.npy'}")
    assert result.returncode == 2 and "no input named q" in result.stderr
    result = ir_run(str(model_path), "--input", f"x={tmp_path / 'x.npy'}")
    assert result.returncode == 2 and "has shape [5]" in result.stderr


def test_unsupported_format_and_missing_file(tmp_path):
    (tmp_path / "m.bin").write_bytes(b"\x00" * 16)
    result = ir_run(str(tmp_path / "m.bin"))
    assert result.returncode == 2 and "cannot tell the framework" in result.stderr
    (tmp_path / "m.pb").write_bytes(b"")  # a framework model is imported as ir-convert would
    result = ir_run(str(tmp_path / "m.pb"))
    assert result.returncode == 2 and "holds no graph nodes" in result.stderr
    result = ir_run(str(tmp_path / "none.mlir"))
    assert result.returncode == 2 and "not found" in result.stderr


def test_compare_onnxruntime_on_onnx_and_on_converted_models(tmp_path):
    import re

    import onnx

    from irforge.frontends.onnx import import_onnx
    from irforge.testing.onnx_models import resnet

    onnx_path = tmp_path / "net.onnx"
    onnx.save_model(resnet(blocks=(1,), width=8, size=16), str(onnx_path))
    save_model(import_onnx(onnx_path), tmp_path / "net.mlir")
    for model, extra in ((onnx_path, []), (tmp_path / "net.mlir", [str(onnx_path)])):
        result = ir_run(str(model), "--compare-onnxruntime", *extra)
        assert result.returncode == 0, result.stderr
        errors = [float(e) for e in re.findall(r"max_rel_error=(\S+)", result.stdout)]
        assert len(errors) == 1 and errors[0] < 1e-4, result.stdout


def test_compare_onnxruntime_needs_the_onnx_model(model_path, tmp_path):
    result = ir_run(str(model_path), "--compare-onnxruntime")
    assert result.returncode == 2 and "--compare-onnxruntime ORIGINAL.onnx" in result.stderr
    result = ir_run(str(model_path), "--compare-onnxruntime", str(tmp_path / "none.onnx"))
    assert result.returncode == 2 and "not found" in result.stderr


def test_cpu_verbose_reports_memory_and_the_program_cache(tmp_path, model_path, monkeypatch):
    import re

    monkeypatch.setenv("IRFORGE_CACHE_DIR", str(tmp_path / "cache"))
    lines = []
    for _ in range(2):
        result = ir_run(str(model_path), "--device", "cpu", "--verbose", "--no-progress")
        assert result.returncode == 0, result.stderr
        lines.append(result.stderr.strip().splitlines()[-1])
    pattern = r"cpu: compiled in \S+ s \((.+?);.*weights 0.0 MiB, packed constants 0.0 MiB, arena \S+ MiB .*peak RSS ([\d.]+) MiB"
    first, second = (re.match(pattern, line) for line in lines)
    assert first and second, lines
    assert "compiled modules" in first[1] and second[1] == "program from the cache"
    assert float(second[2]) > 10
