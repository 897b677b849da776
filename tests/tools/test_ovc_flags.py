"""ir-convert with ovc's spellings next to mo.py's, no abbreviations, --version everywhere."""

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.ir_xml import read_ir_xml
from irforge.model import input_names, load_model, output_names
from irforge.tools.convert_options import InputSpec, parse_input_specs
from irforge.tools.ir_convert import convert


@pytest.fixture(scope="module")
def two_inputs(tmp_path_factory):
    """a + b -> relu -> sigmoid, with tensor names that differ from the node names."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 3, 4, 4])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 3, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [
        helper.make_node("Add", ["a", "b"], ["sum_t"], name="add"),
        helper.make_node("Relu", ["sum_t"], ["relu_t"], name="relu"),
        helper.make_node("Sigmoid", ["relu_t"], ["y"], name="sig"),
    ]
    path = tmp_path_factory.mktemp("models") / "two.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [a, b], [y]), opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def test_parse_input_specs():
    assert parse_input_specs("data") == [InputSpec("data")]
    assert parse_input_specs("a[1,3,224,224]{f32},b{i64}[1,10], c") == [
        InputSpec("a", [1, 3, 224, 224], "f32"), InputSpec("b", [1, 10], "i64"), InputSpec("c")]
    assert parse_input_specs("[1,3,?,?]") == [InputSpec("", [1, 3, -1, -1])]
    for bad in ("a[1,2", "a{complex}", "a->3", "a[1][2]"):
        with pytest.raises(IrforgeError):
            parse_input_specs(bad)


def test_positional_model_output_model_and_shapes_in_input(tmp_path, two_inputs, capsys):
    convert([str(two_inputs), "--output_model", str(tmp_path / "sub" / "m.xml"),
             "--input", "a[2,3,4,4]{f32},b[2,3,4,4]", "--compress_to_fp16=False"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2:] == [f"[ SUCCESS ] XML file: {tmp_path / 'sub' / 'm.xml'}", f"[ SUCCESS ] BIN file: {tmp_path / 'sub' / 'm.bin'}"]
    model = read_ir_xml(tmp_path / "sub" / "m.xml")
    assert [tuple(a.type.get_shape()) for a in model.func.args] == [(2, 3, 4, 4)] * 2
    with pytest.raises(IrforgeError, match=r"model's input is \{f32\}"):
        convert([str(two_inputs), "-o", str(tmp_path), "--input", "a{i32}"])
    with pytest.raises(IrforgeError, match="two models"):
        convert([str(two_inputs), "--input_model", "other.onnx"])
    with pytest.raises(IrforgeError, match="no model given"):
        convert(["-o", str(tmp_path)])


def test_compress_to_fp16_spellings(tmp_path, two_inputs, capsys):
    convert([str(two_inputs), "--output_model", str(tmp_path / "h.mlir"), "--compress_to_fp16"])
    convert([str(two_inputs), "--output_model", str(tmp_path / "f.mlir"), "--compress_to_fp16=False"])
    capsys.readouterr()
    with pytest.raises(IrforgeError, match="contradicts"):
        convert([str(two_inputs), "-o", str(tmp_path), "--compress_to_fp16=False", "--data_type", "FP16"])


def test_cut_at_tensor_names_keeps_them(tmp_path, two_inputs, capsys):
    convert([str(two_inputs), "--output_model", str(tmp_path / "c.mlir"), "--input", "sum_t", "--output", "relu_t"])
    model = load_model(tmp_path / "c.mlir")
    assert input_names(model.func) == ["sum_t"] and output_names(model.func) == ["relu_t"]
    x = np.linspace(-1, 1, 48, dtype=np.float32).reshape(1, 3, 4, 4)
    np.testing.assert_array_equal(run(model, {"sum_t": x})["relu_t"], np.maximum(x, 0))
    convert([str(two_inputs), "--output_model", str(tmp_path / "l.mlir"), "--input", "relu", "--output", "relu"])  # layer names still work
    assert input_names(load_model(tmp_path / "l.mlir").func) == ["relu"]
    capsys.readouterr()


def test_scale_is_mo_single_value(tmp_path, two_inputs, capsys):
    convert([str(two_inputs), "--output_model", str(tmp_path / "s.mlir"), "--scale", "255"])
    model = load_model(tmp_path / "s.mlir")
    a = np.full((1, 3, 4, 4), 255.0, np.float32)
    got = run(model, {"a": a, "b": a})["y"]
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-2.0)), rtol=1e-6)
    with pytest.raises(IrforgeError, match="--scale and --scale_values"):
        convert([str(two_inputs), "-o", str(tmp_path), "--scale", "2", "--scale_values", "[1,2,3]"])
    capsys.readouterr()


@pytest.mark.parametrize("tool,argv", [
    ("ir_convert", ["x.onnx", "--scale_v", "[1]"]),
    ("ir_run", ["x.mlir", "--see", "1"]),
    ("ir_opt", ["--print-ir-after-al"]),
    ("ir_extgen", ["new", "--op", "X", "--frame", "onnx", "-o", "d"]),
])
def test_no_abbreviations_and_version_everywhere(tool, argv):
    result = subprocess.run([sys.executable, "-m", f"irforge.tools.{tool}", *argv], capture_output=True, text=True, timeout=120)
    refused = "unrecognized arguments" in result.stderr or "required: --framework" in result.stderr  # not taken for a flag
    assert result.returncode == 2 and refused, result.stderr
    import irforge

    version = subprocess.run([sys.executable, "-m", f"irforge.tools.{tool}", "--version"], capture_output=True, text=True, timeout=120)
    assert version.returncode == 0 and f"(irforge) {irforge.__version__}" in version.stdout
