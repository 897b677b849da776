"""Extensions: a custom op with a reference kernel, loaded by path and by entry point."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from irforge.errors import IrforgeError
from irforge.extensions import load_extension

EXTENSION = textwrap.dedent(
    '''
    """A custom layer: y = 2 * x."""
    from xdsl.dialects.builtin import TensorType
    from xdsl.ir import Dialect
    from xdsl.irdl import irdl_op_definition, operand_def, result_def

    from irforge.backends.reference import kernel
    from irforge.dialects.nn.base import NNOp
    from irforge.extensions import register_dialect


    @irdl_op_definition
    class Double(NNOp):
        name = "ext.double"
        input = operand_def(TensorType)
        output = result_def(TensorType)

        def infer_shapes(self):
            return [self.operand_type(0)]


    register_dialect(Dialect("ext", [Double], []))


    @kernel(Double)
    def double(op, x):
        return 2 * x
    '''
)

MODEL = textwrap.dedent(
    """
    func.func @main(%x: tensor<3xf32> {nn.name = "x"}) -> (tensor<3xf32> {nn.name = "y"}) {
      %y = ext.double %x : (tensor<3xf32>) -> tensor<3xf32>
      func.return %y : tensor<3xf32>
    }
    """
)


def tool(name: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    import os

    return subprocess.run(
        [sys.executable, "-m", f"irforge.tools.{name}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_custom_op_parses_optimises_and_runs(tmp_path):
    (tmp_path / "double_ext.py").write_text(EXTENSION)
    (tmp_path / "m.mlir").write_text(MODEL)
    ext = str(tmp_path / "double_ext.py")
    without = tool("ir_opt", str(tmp_path / "m.mlir"))
    assert without.returncode == 2 and "ext.double" in without.stderr
    opt = tool("ir_opt", str(tmp_path / "m.mlir"), "--extensions", ext, "-p", "infer-shapes,canonicalize")
    assert opt.returncode == 0, opt.stderr
    assert "ext.double %x" in opt.stdout
    np.save(tmp_path / "x.npy", np.array([1, 2, 3], np.float32))
    out = tmp_path / "o.npz"
    ran = tool("ir_run", str(tmp_path / "m.mlir"), "--extensions", ext,
               "--input", f"x={tmp_path / 'x.npy'}", "--output", str(out))
    assert ran.returncode == 0, ran.stderr
    np.testing.assert_array_equal(np.load(out)["y"], [2, 4, 6])


def test_entry_point_extensions_are_found(tmp_path):
    (tmp_path / "double_ep.py").write_text(EXTENSION)
    dist = tmp_path / "double_ep-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: double-ep\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[irforge.extensions]\ndouble = double_ep\n")
    (tmp_path / "m.mlir").write_text(MODEL)
    result = tool("ir_opt", str(tmp_path / "m.mlir"), env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert "ext.double" in result.stdout


def test_broken_extension_is_a_one_line_error(tmp_path):
    bad = tmp_path / "bad_ext.py"
    bad.write_text("raise RuntimeError('boom')\n")
    with pytest.raises(IrforgeError, match="failed to load: RuntimeError: boom"):
        load_extension(str(bad))
    (tmp_path / "pkg").mkdir()
    with pytest.raises(IrforgeError, match="has no __init__.py"):
        load_extension(str(tmp_path / "pkg"))
