"""Attributes of the wrong type or missing are one coded error naming the attribute, the node
and the expected type, checked once per frontend where attributes are read: ONNX against
onnx's op schemas, TensorFlow against its attribute kinds, Caffe by caffe.proto's text parser,
MXNet by its typed attribute accessors."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import irforge
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.testing.fuzz_formats import mxnet_seed
from irforge.testing.tf_models import keras_resnet


def onnx_model(node: onnx.NodeProto, opset: int = 13) -> bytes:
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]).SerializeToString()


def onnx_error(node: onnx.NodeProto) -> IrforgeError:
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(onnx_model(node))
    return info.value


def test_onnx_attribute_of_the_wrong_type():
    error = onnx_error(helper.make_node("MaxPool", ["x"], ["y"], kernel_shape="abc", name="pool"))
    assert error.code == "E199"
    assert "'kernel_shape' is a string (STRING), expected a list of ints (INTS)" in error.what and "'pool' of type MaxPool" in error.where


def test_onnx_axis_as_a_float_tensor():
    axis = onnx.numpy_helper.from_array(np.array([1.0], np.float32))
    error = onnx_error(helper.make_node("Softmax", ["x"], ["y"], axis=axis, name="sm"))
    assert error.code == "E199" and "'axis' is a tensor (TENSOR), expected an int (INT)" in error.what


def test_onnx_attribute_without_a_type():
    node = helper.make_node("LeakyRelu", ["x"], ["y"], alpha=0.1, name="lr")
    node.attribute[0].type = onnx.AttributeProto.UNDEFINED
    error = onnx_error(node)
    assert error.code == "E199" and "'alpha' is of no type" in error.what


def test_onnx_missing_required_attribute():
    error = onnx_error(helper.make_node("MaxPool", ["x"], ["y"], name="pool"))
    assert error.code == "E198" and "required attribute 'kernel_shape'" in error.what and "'pool'" in error.where


def test_onnx_int_for_a_float_attribute_converts():
    model = irforge.convert_model(onnx_model(helper.make_node("LeakyRelu", ["x"], ["y"], alpha=1, name="lr")))
    x = np.linspace(-1, 1, 192, dtype=np.float32).reshape(1, 3, 8, 8)
    np.testing.assert_allclose(run(model, {"x": x})["y"], x)


def tf_error(tmp_path, mutate) -> IrforgeError:
    graph, _ = keras_resnet(size=8, width=4)
    conv = next(n for n in graph.node if n.op == "Conv2D")
    mutate(conv.attr)
    path = tmp_path / "m.pb"
    path.write_bytes(graph.SerializeToString())
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(str(path))
    assert conv.name in info.value.where and "Conv2D" in info.value.where
    return info.value


def _set(attr, key, **value):
    attr[key].Clear()
    for field, v in value.items():
        if field == "list_s":
            attr[key].list.s.extend(v)
        else:
            setattr(attr[key], field, v)


def test_tf_strides_as_a_string(tmp_path):
    error = tf_error(tmp_path, lambda a: _set(a, "strides", s=b"abc"))
    assert error.code == "E399" and "'strides' is a string, expected a list of ints" in error.what


def test_tf_padding_as_an_int(tmp_path):
    error = tf_error(tmp_path, lambda a: _set(a, "padding", i=3))
    assert error.code == "E399" and "'padding' is an int, expected a string" in error.what


def test_tf_strides_as_a_list_of_strings(tmp_path):
    error = tf_error(tmp_path, lambda a: _set(a, "strides", list_s=[b"1"]))
    assert error.code == "E399" and "a list of strings" in error.what


def test_tf_missing_required_strides(tmp_path):
    error = tf_error(tmp_path, lambda a: a.__delitem__("strides"))
    assert error.code == "E398" and "required attribute 'strides'" in error.what


CAFFE_NET = (
    'name: "n"\ninput: "data"\ninput_shape {{ dim: 1 dim: 3 dim: 8 dim: 8 }}\n'
    'layer {{ name: "conv" type: "Convolution" bottom: "data" top: "conv"\n  convolution_param {{ num_output: 4 {param} }} }}\n'
)


@pytest.mark.parametrize("param, message", [
    ('kernel_size: "abc"', 'parse integer: "abc"'),
    ("kernel_size: 3.5", "parse integer: 3.5"),
    ("kernel_size: 3 bias_term: 2", 'Expected "true" or "false"'),
    ("kernel_size: 3 engine: 9", "has no value with number 9"),
])
def test_caffe_param_of_the_wrong_type(tmp_path, param, message):
    from irforge.testing.fuzz import _caffe_seed

    (tmp_path / "m.prototxt").write_text(CAFFE_NET.format(param=param))
    (tmp_path / "m.caffemodel").write_bytes(_caffe_seed()["m.caffemodel"])
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(str(tmp_path / "m.caffemodel"))
    assert info.value.code == "E299" and message in info.value.what and info.value.where.endswith("m.prototxt:5")


@pytest.mark.parametrize("value, expected", [("(3,a)", "a tuple of integers"), ("x", "a tuple of integers")])
def test_mxnet_attribute_that_does_not_parse(tmp_path, value, expected):
    seed = mxnet_seed()
    (tmp_path / "m-symbol.json").write_bytes(seed["m-symbol.json"].replace(b'"kernel": "(3, 3)"', b'"kernel": "%s"' % value.encode()))
    (tmp_path / "m-0000.params").write_bytes(seed["m-0000.params"])
    with pytest.raises(IrforgeError) as info:
        irforge.convert_model(str(tmp_path / "m-0000.params"))
    assert info.value.code == "E411" and f"kernel='{value}' is not {expected}" in info.value.what and "'conv0' (Convolution)" in info.value.where
