"""Textual IR with a string that is never closed is refused at once (xDSL's lexer would
backtrack exponentially on it), in every tool that reads .mlir."""

import subprocess
import sys

import pytest

from irforge.errors import IrforgeError
from irforge.mlir_text import check_mlir_text

UNTERMINATED = 'func.func @main() {\n  %0 = "test.op"() {a = "' + "a" * 40 + '} : () -> ()\n}\n'


@pytest.mark.parametrize("tool,args", [("ir_opt", []), ("ir_run", []), ("ir_convert", ["-o", "OUT"])])
def test_unterminated_string_is_a_quick_clean_error(tmp_path, tool, args):
    path = tmp_path / "bad.mlir"
    path.write_text(UNTERMINATED)
    argv = [str(path)] if tool != "ir_convert" else ["-m", str(path)]
    argv += [str(tmp_path / "out") if a == "OUT" else a for a in args]
    result = subprocess.run([sys.executable, "-m", f"irforge.tools.{tool}", *argv], capture_output=True, text=True, timeout=30)
    assert result.returncode == 2, result.stderr
    assert "error[E602]" in result.stderr and "bad.mlir:2:25" in result.stderr


@pytest.mark.parametrize(
    "text",
    ['"abc"', '// "open\n"x"', '"a\\n\\t\\\\\\"\\41"', '"" "//"', 'x = "\\0A"'],
)
def test_well_formed_strings_pass(text):
    assert check_mlir_text(text, "t") == text


@pytest.mark.parametrize("text", ['"abc', '"a\nb"', '"\\q"', '"ok" "open', '"' + "x\\" * 30])
def test_bad_strings_are_refused(text):
    with pytest.raises(IrforgeError) as info:
        check_mlir_text(text, "t")
    assert info.value.code == "E602"


def test_non_utf8_is_refused():
    with pytest.raises(IrforgeError, match="not UTF-8") as info:
        check_mlir_text(b"func.func @\xff", "t")
    assert info.value.code == "E601"


def test_deeply_nested_input_is_a_clean_error(tmp_path):
    path = tmp_path / "deep.mlir"
    path.write_text("func.func @main(%x: tensor<2xf32> {nn.name = " + "[" * 5000 + "]" * 5000 + "}) {\n  func.return\n}\n")
    result = subprocess.run([sys.executable, "-m", "irforge.tools.ir_opt", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "error[E005]" in result.stderr, result.stderr[-500:]


@pytest.mark.parametrize("tool", ["ir_opt", "ir_run"])
def test_integer_type_xdsl_cannot_hold_is_a_clean_error(tmp_path, tool):
    path = tmp_path / "wide.mlir"
    path.write_text('func.func @main(%x: tensor<2xf32> {nn.name = "x"}) -> tensor<2xi4294967296> {\n'
                    "  %c = nn.constant dense<1> : tensor<2xi4294967296>\n  func.return %c : tensor<2xi4294967296>\n}\n")
    result = subprocess.run([sys.executable, "-m", f"irforge.tools.{tool}", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "error[E644]" in result.stderr, result.stderr[-500:]
