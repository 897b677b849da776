"""ir-opt as a user runs it: passes, weights in and out, and one-line errors with exit code 2."""

import re
import subprocess
import sys

import numpy as np
import pytest

from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, Convolution
from irforge.model import load_model, save_model
from irforge.weights import WeightStore

IR_OPT = [sys.executable, "-m", "irforge.tools.ir_opt"]


def ir_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*IR_OPT, *args], input=stdin, capture_output=True, text=True, timeout=120)


def conv_model(tmp_path):
    b = ModelBuilder()
    x = b.input("data", [1, 3, 8, 8])
    w = b.constant(np.random.default_rng(0).standard_normal((4, 3, 3, 3)).astype(np.float32), "conv1.w")
    c = b.add(Convolution, [x, w], name="conv1")
    y = b.add(Activation, [c.output], kind="tanh", name="act")
    b.output(y.output, "out")
    path = tmp_path / "m.mlir"
    save_model(b.finish(), path)
    return path


def test_help_lists_passes():
    result = ir_opt("--help")
    assert result.returncode == 0
    assert "infer-shapes" in result.stdout and "canonicalize" in result.stdout


def test_reads_weights_beside_the_input_and_writes_them_beside_the_output(tmp_path):
    path = conv_model(tmp_path)
    out = tmp_path / "out.mlir"
    result = ir_opt(str(path), "-p", "infer-shapes,canonicalize", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "nn.constant @conv1.w : tensor<4x3x3x3xf32>" in out.read_text()
    before, after = load_model(path), load_model(out)
    np.testing.assert_array_equal(before.store["conv1.w"], after.store["conv1.w"])


def test_weights_flag_and_stdin(tmp_path):
    path = conv_model(tmp_path)
    result = ir_opt("--weights", str(tmp_path / "m.weights"), stdin=path.read_text())
    assert result.returncode == 0, result.stderr
    assert "nn.convolution" in result.stdout


def test_print_ir_after_all(tmp_path):
    path = conv_model(tmp_path)
    result = ir_opt(str(path), "-p", "infer-shapes,canonicalize", "--print-ir-after-all")
    assert result.returncode == 0, result.stderr
    assert "IR Dump After infer-shapes" in result.stderr
    assert "IR Dump After canonicalize" in result.stderr


def errors(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert re.match(r"irforge: error\[E\d{3}\]: ", lines[0]), lines[0]
    assert "Traceback" not in result.stderr
    return lines[0]


def test_parse_error_names_line_and_column(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %y = nn.relu %x : (tensor<2xf32> -> tensor<2xf32>\n}\n")
    assert f"{bad}:2:" in errors(ir_opt(str(bad)))


def test_verifier_error_is_one_line(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        "func.func @f(%x: tensor<2xf32>) -> tensor<3xf32> {\n"
        "  %y = nn.relu %x : (tensor<2xf32>) -> tensor<3xf32>\n"
        "  func.return %y : tensor<3xf32>\n}\n"
    )
    assert "result #0 has type tensor<3xf32> but the operands imply tensor<2xf32>" in errors(ir_opt(str(bad)))


@pytest.mark.parametrize(
    "args, message",
    [
        (["/nonexistent/model.mlir"], "not found"),
        (["-p", "no-such-pass"], "no-such-pass"),
        (["--no-such-flag"], "unrecognized arguments"),
        (["--extensions", "/nonexistent/ext.py"], "not found"),
    ],
)
def test_bad_invocations(args, message):
    assert message in errors(ir_opt(*args, stdin=""))


def test_missing_weights_file(tmp_path):
    path = conv_model(tmp_path)
    (tmp_path / "m.weights").unlink()
    assert "no weights file" in errors(ir_opt(str(path)))


def test_weights_that_do_not_match_the_ir(tmp_path):
    path = conv_model(tmp_path)
    other = WeightStore()
    other.add(np.zeros((2, 2), np.float32), "conv1.w")
    other.save(tmp_path / "m.weights")
    assert "the IR declares tensor<4x3x3x3xf32>" in errors(ir_opt(str(path)))


def test_failed_run_leaves_no_output_file(tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(")
    out = tmp_path / "out.mlir"
    errors(ir_opt(str(bad), "-o", str(out)))
    assert not out.exists()


def test_extension_adds_a_pass(tmp_path):
    ext = tmp_path / "my_ext.py"
    ext.write_text(
        "from dataclasses import dataclass\n"
        "from xdsl.passes import ModulePass\n"
        "from irforge.extensions import register_pass\n\n"
        "@register_pass\n@dataclass(frozen=True)\n"
        "class Nothing(ModulePass):\n"
        "    '''nothing: a pass that changes nothing.'''\n"
        "    name = 'nothing'\n"
        "    def apply(self, ctx, op):\n        pass\n"
    )
    path = conv_model(tmp_path)
    result = ir_opt(str(path), "--extensions", str(ext), "-p", "nothing")
    assert result.returncode == 0, result.stderr
    assert "nothing" in ir_opt("--extensions", str(ext), "--help").stdout
