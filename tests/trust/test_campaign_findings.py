"""Findings of the fuzz campaign (bench/fuzz_campaign.py over every format, flag and tool) and
the issue's named bad inputs: each is a one-line coded error now, run in process (fast)."""

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import irforge
from irforge.errors import IrforgeError
from irforge.testing.fuzz import run_tool_in_process
from irforge.testing.fuzz_flags import npy_bytes
from irforge.testing.onnx_models import resnet


def tool(name: str, *argv: object) -> tuple[int | None, str]:
    code, stderr, escaped = run_tool_in_process(name, [str(a) for a in argv], timeout=60)
    assert escaped == "", escaped
    return code, stderr.strip().splitlines()[-1] if stderr.strip() else ""


def assert_error(result: tuple[int | None, str], code: str, text: str = "") -> None:
    exit_code, line = result
    assert exit_code == 2 and line.startswith(f"irforge: error[{code}]: ") and text in line, result


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("onnx") / "m.onnx"
    path.write_bytes(resnet(blocks=(1,), width=4, size=8).SerializeToString())
    return path


def test_onnx_pad_without_its_pads_input(tmp_path):
    graph = helper.make_graph([helper.make_node("Pad", ["x"], ["y"], name="pad")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString())
    assert info.value.code == "E041" and "pads (input #1) is required" in info.value.what


def test_tf_concat_without_inputs(tmp_path):
    from irforge.testing.tf_models import keras_resnet

    graph, _ = keras_resnet(size=8, width=4)
    node = graph.node.add(name="cat", op="ConcatV2")
    node.attr["N"].i = 0
    graph.node.add(name="out", op="Identity", input=["cat"])
    path = tmp_path / "m.pb"
    path.write_bytes(graph.SerializeToString())
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(str(path), output="out")
    assert info.value.code == "E041" and "no inputs" in info.value.what


def test_pbtxt_with_an_invalid_escape_converts(tmp_path):
    from irforge.testing.fuzz_formats import pbtxt_seed
    from irforge.testing.tf_models import keras_resnet

    graph, _ = keras_resnet(size=8, width=4)
    text = pbtxt_seed(graph.SerializeToString()).replace(b'name: "prob"', b'name: "pr\\-ob"', 1)
    path = tmp_path / "m.pbtxt"
    path.write_bytes(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as under pytest's -W error: protobuf's DeprecationWarning was an internal error
        model = irforge.convert_model(str(path))
    assert model is not None


def test_onnx_input_dim_beyond_int64_sizes(tmp_path):
    model = resnet(blocks=(1,), width=4, size=8)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 2**63 - 1
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(model.SerializeToString())
    assert info.value.code == "E014"


def test_ir_run_refuses_a_huge_declared_input_before_allocating(tmp_path):
    model = resnet(blocks=(1,), width=4, size=8)
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 10**12
    path = tmp_path / "big.onnx"
    path.write_bytes(model.SerializeToString())
    assert_error(tool("ir-run", path), "E899", "[1, 3, 1000000000000, 8]")


@pytest.mark.parametrize("array, code", [
    (np.zeros((1, 3, 8, 8), np.float64), "E897"),
    (np.zeros((1, 3, 8, 8), np.int32), "E897"),
    (np.zeros((1, 3, 8, 8), np.complex64), "E897"),
    (np.zeros((1, 3, 8, 4), np.float32), "E896"),
    (np.zeros((3, 8, 8), np.float32), "E896"),
])
def test_ir_run_input_of_the_wrong_dtype_or_shape(tmp_path, onnx_path, array, code):
    (tmp_path / "a.npy").write_bytes(npy_bytes(array))
    assert_error(tool("ir-run", onnx_path, "--input", f"data={tmp_path / 'a.npy'}"), code)


def test_ir_run_object_array_is_not_unpickled(tmp_path, onnx_path):
    (tmp_path / "a.npy").write_bytes(npy_bytes(np.array([{"a": 1}], dtype=object), allow_pickle=True))
    assert_error(tool("ir-run", onnx_path, "--input", f"data={tmp_path / 'a.npy'}"), "E021", "allow_pickle")


def test_ir_run_compare_with_a_file_that_is_not_onnx(tmp_path, onnx_path):
    (tmp_path / "x.onnx").write_bytes(b"not a model")
    assert_error(tool("ir-run", onnx_path, "--compare-onnxruntime", tmp_path / "x.onnx"), "E895")


def test_ir_extgen_output_folder_that_is_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    assert_error(tool("ir-extgen", "new", "--op", "MyRelu", "--framework", "onnx", "-o", tmp_path / "f"), "E011")


def test_ir_extgen_op_name_too_long_for_a_file_name(tmp_path):
    assert_error(tool("ir-extgen", "new", "--op", "x" * 300, "--framework", "onnx", "-o", tmp_path / "e"), "E941")
    assert not (tmp_path / "e").exists()


def test_ir_conformance_regex_with_a_huge_repetition():
    assert_error(tool("ir-conformance", "--cases", "a{99999999999}"), "E058")


def test_ir_opt_refuses_an_xml_output(tmp_path, onnx_path):
    assert tool("ir-convert", "-m", onnx_path, "-o", tmp_path, "--emit", "mlir")[0] == 0
    assert_error(tool("ir-opt", tmp_path / "m.mlir", "-p", "canonicalize", "-o", tmp_path / "o.xml"), "E049")
    assert not (tmp_path / "o.xml").exists()


def test_ir_opt_input_of_an_unknown_suffix(tmp_path):
    (tmp_path / "t.json").write_text("[]")
    assert_error(tool("ir-opt", tmp_path / "t.json", "-p", "canonicalize"), "E048")


@pytest.mark.parametrize("declaration", ['encoding="UTF-99"', 'encoding="utf-16"', 'encoding=""'])
def test_ir_xml_with_a_bad_encoding_declaration(tmp_path, onnx_path, declaration):
    assert tool("ir-convert", "-m", onnx_path, "-o", tmp_path)[0] == 0
    xml = tmp_path / "m.xml"
    lines = xml.read_text().split("\n")
    xml.write_text("\n".join([f'<?xml version="1.0" {declaration}?>', *lines[1:]]) if lines[0].startswith("<?xml") else
                   f'<?xml version="1.0" {declaration}?>\n' + xml.read_text())
    assert_error(tool("ir-run", xml), "E699")


def test_prototxt_nested_500_deep(tmp_path):
    from irforge.testing.fuzz import _caffe_seed

    (tmp_path / "m.prototxt").write_text('name: "n"\n' + "layer { " * 500 + "}" * 500)
    (tmp_path / "m.caffemodel").write_bytes(_caffe_seed()["m.caffemodel"])
    assert_error(tool("ir-convert", "-m", tmp_path / "m.caffemodel", "-o", tmp_path / "out"), "E005")


def test_pbtxt_nested_deep(tmp_path):
    (tmp_path / "m.pbtxt").write_text('node { name: "a" op: "Const" attr { key: "value" value { ' + "list { " * 400 + "}" * 400 + " } } }")
    result = tool("ir-convert", "-m", tmp_path / "m.pbtxt", "-o", tmp_path / "out")
    assert result[0] == 2 and result[1].split("]")[0] in ("irforge: error[E005", "irforge: error[E395"), result


def test_caffe_input_dim_beyond_int32(tmp_path):
    from irforge.testing.fuzz import _caffe_seed

    (tmp_path / "m.prototxt").write_text('name: "n"\ninput: "data"\ninput_dim: 1\ninput_dim: 3\ninput_dim: 1000000000000\ninput_dim: 8\n')
    (tmp_path / "m.caffemodel").write_bytes(_caffe_seed()["m.caffemodel"])
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(str(tmp_path / "m.caffemodel"))
    assert info.value.code == "E299" and "out of range" in info.value.what


def test_onnx_raw_data_shorter_than_its_dims(tmp_path):
    model = resnet(blocks=(1,), width=4, size=8)
    init = next(i for i in model.graph.initializer if i.raw_data)
    init.raw_data = init.raw_data[:-4]
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(model.SerializeToString())
    assert info.value.code == "E114"


def test_tf_const_content_that_disagrees_with_its_shape(tmp_path):
    from irforge.testing.tf_models import keras_resnet

    graph, _ = keras_resnet(size=8, width=4)
    const = next(n for n in graph.node if n.op == "Const" and n.attr["value"].tensor.tensor_content)
    const.attr["value"].tensor.tensor_content = const.attr["value"].tensor.tensor_content[:-4]
    (tmp_path / "m.pb").write_bytes(graph.SerializeToString())
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(str(tmp_path / "m.pb"))
    assert info.value.code == "E394" and const.name in info.value.where


@pytest.mark.parametrize("cut", [10, 100, -5])
def test_mxnet_params_truncated(tmp_path, cut):
    from irforge.testing.fuzz_formats import mxnet_seed

    seed = mxnet_seed()
    (tmp_path / "m-symbol.json").write_bytes(seed["m-symbol.json"])
    (tmp_path / "m-0000.params").write_bytes(seed["m-0000.params"][:cut])
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(str(tmp_path / "m-0000.params"))
    assert info.value.code == "E401"



def test_tf_conv2d_filter_of_rank_1(tmp_path):
    from irforge.testing.tf_models import keras_resnet

    graph, _ = keras_resnet(size=8, width=4)
    conv = next(n for n in graph.node if n.op == "Conv2D")
    filt = next(n for n in graph.node if n.name == conv.input[1].split(":")[0])
    tensor = filt.attr["value"].tensor
    del tensor.tensor_shape.dim[1:]
    tensor.tensor_shape.dim[0].size = len(tensor.tensor_content) // 4
    (tmp_path / "m.pb").write_bytes(graph.SerializeToString())
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(str(tmp_path / "m.pb"))
    assert info.value.code == "E041" and "input #1 has rank 1" in info.value.what and conv.name in info.value.where


@pytest.mark.parametrize("flags", [
    ["--framework", "mxnet", "--input_symbol", "FIFO"],
    ["--input_proto", "FIFO"],
    ["-m", "FIFO"],
])
def test_fifo_inputs_do_not_block(tmp_path, flags):
    import os

    from irforge.testing.fuzz import _caffe_seed

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "m.caffemodel").write_bytes(_caffe_seed()["m.caffemodel"])
    argv = [str(fifo) if f == "FIFO" else f for f in flags]
    if "-m" not in argv:
        argv = ["-m", str(fifo if "mxnet" in argv else tmp_path / "m.caffemodel"), *argv]
    code, line = tool("ir-convert", *argv, "-o", tmp_path / "out")
    assert code == 2 and line.startswith("irforge: error[E"), line


def test_ir_run_weights_flag_for_an_ir_xml_is_refused(tmp_path, onnx_path):
    assert tool("ir-convert", "-m", onnx_path, "-o", tmp_path)[0] == 0
    assert_error(tool("ir-run", tmp_path / "m.xml", "--weights", tmp_path / "m.bin"), "E893")
