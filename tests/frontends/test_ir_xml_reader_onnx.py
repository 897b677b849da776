"""ONNX models converted and saved by OpenVINO (`openvino.save_model(openvino.convert_model(
path), xml)`) that use the layers the reader learned late: Slice with steps, Pad with
negative pads, ConvTranspose with an output_shape. Read by irforge, the reference
interpreter computes what OpenVINO computes."""

from __future__ import annotations

import numpy as np
import onnx
import openvino as ov
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.reference import run
from irforge.frontends.ir_xml import read_ir_xml
from irforge.frontends.ir_xml.parse import parse_ir_xml
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import rand

X = rand(1, 3, 8, 9, seed=1, low=-2.0, high=2.0)
W = rand(3, 2, 3, 3, seed=2)


def i64(values: list[int]) -> np.ndarray:
    return np.array(values, np.int64)


def onnx_model(nodes: list[onnx.NodeProto], initializers: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in initializers.items()],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def slice_node(inp: str, out: str, prefix: str) -> tuple[onnx.NodeProto, dict[str, np.ndarray]]:
    names = [f"{prefix}_{part}" for part in ("starts", "ends", "axes", "steps")]
    values = [i64([1, -1, 0]), i64([100, 0, 2]), i64([2, 3, 1]), i64([2, -2, 1])]
    return helper.make_node("Slice", [inp, *names], [out]), dict(zip(names, values))


def pad_node(inp: str, out: str, mode: str, pads: list[int]) -> tuple[onnx.NodeProto, dict[str, np.ndarray]]:
    inputs, values = [inp, f"{out}_pads"], {f"{out}_pads": i64(pads)}
    if mode == "constant":
        inputs.append(f"{out}_value")
        values[f"{out}_value"] = np.array(0.75, np.float32)
    return helper.make_node("Pad", inputs, [out], mode=mode), values


def conv_transpose(inp: str, out: str, group: int, **attrs: object) -> tuple[onnx.NodeProto, dict[str, np.ndarray]]:
    weights = W if group == 1 else rand(3, 1, 3, 3, seed=3)
    return helper.make_node("ConvTranspose", [inp, f"{out}_w"], [out], strides=[2, 2], group=group, **attrs), {f"{out}_w": weights}


def converted(tmp_path, proto: onnx.ModelProto, compress: bool = True):  # type: ignore[no-untyped-def]
    onnx.save_model(proto, str(tmp_path / "m.onnx"))
    xml = tmp_path / "ov.xml"
    ov.save_model(ov.convert_model(str(tmp_path / "m.onnx")), str(xml), compress_to_fp16=compress)
    return xml


def assert_reads_like_openvino(xml) -> None:  # type: ignore[no-untyped-def]
    want = run_openvino(xml, {"x": X}, check_dims=False)
    assert_close(run(read_ir_xml(xml), {"x": X})["y"], want["y"], rtol=1e-5)


def layer_inputs(xml, layer_type: str) -> list[int]:  # type: ignore[no-untyped-def]
    """The input counts of the layers of `layer_type` OpenVINO wrote."""
    return [len(layer.inputs) for layer in parse_ir_xml(xml).layers.values() if layer.type == layer_type]


def test_slice_with_steps(tmp_path) -> None:
    node, values = slice_node("x", "y", "s")
    xml = converted(tmp_path, onnx_model([node], values))
    assert layer_inputs(xml, "Slice") == [5]
    assert_reads_like_openvino(xml)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
@pytest.mark.parametrize("pads", [[0, 0, -1, 2, 0, 0, 2, -3], [0, -1, -2, -1, 0, 0, -3, 0]], ids=["mixed", "crop-only"])
def test_pad_with_negative_pads(tmp_path, mode, pads) -> None:
    node, values = pad_node("x", "y", mode, pads)
    xml = converted(tmp_path, onnx_model([node], values))
    assert layer_inputs(xml, "Pad")
    assert_reads_like_openvino(xml)


@pytest.mark.parametrize(
    "attrs",
    [
        dict(output_shape=[17, 20]),
        dict(output_shape=[16, 18]),
        dict(output_shape=[16, 18], auto_pad="SAME_UPPER"),
        dict(output_shape=[16, 18], auto_pad="SAME_LOWER"),
        dict(output_shape=[18, 19], output_padding=[1, 0]),
    ],
)
@pytest.mark.parametrize("group", [1, 3])
def test_conv_transpose_with_output_shape(tmp_path, attrs, group) -> None:
    node, values = conv_transpose("x", "y", group, **attrs)
    xml = converted(tmp_path, onnx_model([node], values))
    assert layer_inputs(xml, "ConvolutionBackpropData" if group == 1 else "GroupConvolutionBackpropData") == [3]
    assert_reads_like_openvino(xml)


@pytest.mark.parametrize("compress", [False, True], ids=["fp32", "fp16"])
def test_a_model_of_all_three(tmp_path, compress) -> None:
    """ConvTranspose -> Pad (cropping) -> Relu -> Slice with steps, weights f32 or f16."""
    parts = [
        conv_transpose("x", "up", 1, output_shape=[17, 19]),
        pad_node("up", "cropped", "edge", [0, 0, -2, 1, 0, 0, 1, -3]),
        (helper.make_node("Relu", ["cropped"], ["act"]), {}),
        slice_node("act", "y", "s"),
    ]
    proto = onnx_model([node for node, _ in parts], {k: v for _, values in parts for k, v in values.items()})
    assert_reads_like_openvino(converted(tmp_path, proto, compress))
