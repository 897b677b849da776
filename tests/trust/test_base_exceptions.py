"""BaseExceptions (xDSL's ArgSpecParseError, an extension's sys.exit or BaseException) end in
one-line errors with exit code 2, never a traceback or a silent exit."""

import subprocess
import sys

import pytest

MLIR = 'func.func @main(%x: tensor<2xf32> {nn.name = "x"}) -> tensor<2xf32> {\n  func.return %x : tensor<2xf32>\n}\n'


def run_tool(tool: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", f"irforge.tools.{tool}", *args], capture_output=True, text=True, timeout=120)


def assert_one_line_error(result: subprocess.CompletedProcess[str], code: str) -> None:
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"irforge: error[{code}]: "), result.stderr


@pytest.mark.parametrize("pipeline", [",,", "replace-subgraph{config=x.json}", "infer-shapes{", "nope"])
@pytest.mark.parametrize("tool", ["ir_opt", "ir_convert"])
def test_bad_pipelines_are_one_line_errors(tmp_path, tool, pipeline):
    path = tmp_path / "m.mlir"
    path.write_text(MLIR)
    args = [str(path), "-p", pipeline] if tool == "ir_opt" else ["-m", str(path), "-o", str(tmp_path / "o"), "--pipeline", pipeline]
    assert_one_line_error(run_tool(tool, *args), "E701")


PASS_EXT = (
    "import sys\n"
    "from dataclasses import dataclass\n"
    "from xdsl.passes import ModulePass\n"
    "from irforge.extensions import register_pass\n\n"
    "@register_pass\n@dataclass(frozen=True)\n"
    "class Quit(ModulePass):\n"
    "    name = 'quit'\n"
    "    def apply(self, ctx, op):\n        {body}\n"
)


@pytest.mark.parametrize("body,code", [("sys.exit(0)", "E711"), ("raise BaseException('boom')", "E712")])
def test_extension_pass_ending_the_process_is_an_error(tmp_path, body, code):
    ext = tmp_path / "ext.py"
    ext.write_text(PASS_EXT.replace("{body}", body))
    path = tmp_path / "m.mlir"
    path.write_text(MLIR)
    out = tmp_path / "o.mlir"
    result = run_tool("ir_opt", str(path), "--extensions", str(ext), "-p", "quit", "-o", str(out))
    assert_one_line_error(result, code)
    assert not out.exists()


@pytest.mark.parametrize("body", ["import sys; sys.exit(3)", "raise BaseException('x')", "raise SystemExit"])
def test_extension_ending_the_process_at_load_is_an_error(tmp_path, body):
    ext = tmp_path / "ext.py"
    ext.write_text(body + "\n")
    path = tmp_path / "m.mlir"
    path.write_text(MLIR)
    assert_one_line_error(run_tool("ir_opt", str(path), "--extensions", str(ext)), "E710")
    assert_one_line_error(run_tool("ir_convert", "-m", str(path), "-o", str(tmp_path / "o"), "--extensions", str(ext)), "E710")


def test_help_still_exits_zero():
    assert run_tool("ir_opt", "--help").returncode == 0
    assert run_tool("ir_convert", "--help").returncode == 0
