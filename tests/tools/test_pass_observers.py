"""ir-convert --verify-numerics and --print-ir-after."""

import subprocess
import sys

import onnx
import pytest

from irforge.tools.convert_run import pass_count

from irforge.errors import IrforgeError
from irforge.testing.onnx_models import resnet
from irforge.tools.ir_convert import convert

BREAKING_PASS = '''
from dataclasses import dataclass
from xdsl.dialects.builtin import FloatAttr, f32
from xdsl.passes import ModulePass
from irforge.dialects.nn.activation import ReLU
from irforge.extensions import register_pass

@register_pass
@dataclass(frozen=True)
class LeakRelu(ModulePass):
    """leak-relu: a wrong rewrite, ReLU made leaky."""
    name = "leak-relu"
    def apply(self, ctx, op):
        for relu in [o for o in op.walk() if isinstance(o, ReLU)]:
            relu.properties["negative_slope"] = FloatAttr(0.5, f32)
'''


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "net.onnx"
    onnx.save_model(resnet(blocks=(1,), width=8, size=16), str(path))
    return path


def test_all_passes_keep_the_numbers(tmp_path, onnx_path, capsys):
    args = [str(onnx_path), "-o", str(tmp_path), "--mean_values", "[1,2,3]"]
    convert([*args, "--pipeline"])
    passes = pass_count(capsys.readouterr().out.split(" -> ")[1])
    convert([*args, "--verify-numerics"])
    out = capsys.readouterr().out
    # every pass is checked but preprocess, which starts a new baseline
    assert f"verify-numerics: all {passes - 1} passes kept the numbers" in out and "preprocess (mean/scale values: new baseline)" in out


def test_the_first_pass_that_changes_the_numbers_is_named(tmp_path, onnx_path):
    extension = tmp_path / "leak.py"
    extension.write_text(BREAKING_PASS)
    result = subprocess.run([sys.executable, "-m", "irforge.tools.ir_convert", str(onnx_path), "-o", str(tmp_path),
                             "--extensions", str(extension), "--pipeline", "infer-shapes,canonicalize,leak-relu,fuse-linear-ops",
                             "--verify-numerics"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "error[E790]: --verify-numerics: pass 'leak-relu' changes output 'prob" in result.stderr, result.stderr
    assert not list(tmp_path.glob("*.xml"))  # nothing written


def test_print_ir_after_one_pass_or_all(tmp_path, onnx_path, capsys):
    convert([str(onnx_path), "-o", str(tmp_path), "--print-ir-after", "fuse-linear-ops"])
    err = capsys.readouterr().err
    assert err.count("IR Dump After") == 1 and "// -----// IR Dump After fuse-linear-ops //----- //\nbuiltin.module" in err
    assert "nn.batch_norm" not in err.split("IR Dump After")[1]
    convert([str(onnx_path), "-o", str(tmp_path), "--pipeline"])
    passes = pass_count(capsys.readouterr().out.split(" -> ")[1])
    convert([str(onnx_path), "-o", str(tmp_path), "--print-ir-after", "all", "--print-ir-format", "xml"])
    err = capsys.readouterr().err
    assert err.count("<!-- IR Dump After") == passes and '<net name="main" version="11">' in err
    with pytest.raises(IrforgeError, match="not in the pipeline; use all or one of: infer-shapes"):
        convert([str(onnx_path), "-o", str(tmp_path), "--print-ir-after", "compress-fp16"])
