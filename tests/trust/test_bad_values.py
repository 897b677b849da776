"""Inputs that used to end in `internal error` (exit 1) are user errors with a code."""

import json
import struct

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx
from irforge.tools.convert_args import parse_per_input_values, parse_shapes
from irforge.weights.store import MAGIC, WeightStore


@pytest.mark.parametrize("text", ["[1,3,99999999999999999999,4]", "[1,-99999999999999999999]"])
def test_huge_input_shape_is_refused(text):
    with pytest.raises(IrforgeError) as info:
        parse_shapes(text)
    assert info.value.code == "E030"


@pytest.mark.parametrize("text", ["input[nan,inf,1]", "[1,-inf,2]", "[nan]"])
def test_non_finite_mean_values_are_refused(text):
    with pytest.raises(IrforgeError, match="finite") as info:
        parse_per_input_values(text, "--mean_values")
    assert info.value.code == "E030"


def weights_file(path, header):
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<8sQ", MAGIC, len(text)) + text + bytes(256))
    return path


@pytest.mark.parametrize("header", [
    {"alignment": 0, "entries": {}},
    {"alignment": 64, "entries": {"w": {"shape": [1], "offset": 0, "nbytes": 4}}},
    {"alignment": 64, "entries": {"w": {"dtype": "f32", "shape": [-1], "offset": 0, "nbytes": 4}}},
    {"alignment": 64, "entries": {"w": {"dtype": "f32", "shape": [1], "offset": -64, "nbytes": 4}}},
    {"alignment": 64, "entries": {"w": {"dtype": ["f32"], "shape": "x", "offset": 0, "nbytes": 4}}},
    {"alignment": 64, "entries": [1, 2]},
])
def test_corrupt_weights_index_is_a_clean_error(tmp_path, header):
    with pytest.raises(IrforgeError, match="corrupt"):
        WeightStore.open(weights_file(tmp_path / "m.weights", header))


@pytest.mark.parametrize("elem_type", [0, 999])
def test_unknown_onnx_element_type_is_a_clean_error(tmp_path, elem_type):
    w = TensorProto(name="w", data_type=elem_type, dims=[2], raw_data=bytes(8))
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [w],
    )
    path = tmp_path / "m.onnx"
    path.write_bytes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    with pytest.raises(IrforgeError) as info:
        import_onnx(path)
    assert info.value.code in ("E113", "E114") or "element type" in str(info.value)


def test_quoted_names_keep_errors_on_one_line():
    e = IrforgeError("node 'a\nb' is bad", where="x\ty", fix="fix it\n")
    assert "\n" not in e.render() and "\t" not in e.render()
    long = IrforgeError("x" * 2000, fix="f" * 1000)
    assert len(long.render()) <= 400


def test_onnx_node_name_not_utf8_is_a_clean_error(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="NODENAME")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    path = tmp_path / "m.onnx"
    path.write_bytes(data.replace(b"NODENAME", b"NODE\xff\xfeME"))
    with pytest.raises(IrforgeError) as info:
        import_onnx(path)
    assert info.value.code in ("E115", "E140", "E141", "E142", "E159", "E197"), info.value


def test_ir_xml_integer_attribute_past_int64_is_a_clean_error(tmp_path):
    import subprocess
    import sys

    from irforge.testing.fuzz import seed_files

    seeds = seed_files(tmp_path / "s")
    (tmp_path / "m.xml").write_bytes(seeds["xml"]["m.xml"].replace(b'strides="1, 1"', b'strides="99999999999999999999, 1"'))
    (tmp_path / "m.bin").write_bytes(seeds["xml"]["m.bin"])
    result = subprocess.run([sys.executable, "-m", "irforge.tools.ir_convert", "-m", str(tmp_path / "m.xml"), "-o",
                             str(tmp_path / "o"), "--emit", "mlir"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "64-bit integers" in result.stderr, result.stderr[-400:]
