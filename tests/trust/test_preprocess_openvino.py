"""--reverse_input_channels, --mean_values and --scale_values give OpenVINO's numbers.

The reference is OpenVINO's own preprocessing (PrePostProcessor with the Model Optimizer's
order: reverse channels, then mean, then scale, values in the model's channel order) on the
original ONNX model; irforge's converted IR, read and run by OpenVINO, must match it for every
combination of the three flags.
"""

import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from irforge.tools.ir_convert import convert

ov = pytest.importorskip("openvino")
from openvino.preprocess import PrePostProcessor  # noqa: E402

MEAN = [123.7, 11.3, 50.5]
SCALE = [58.4, 2.0, 0.5]


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["data", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])],
        "g",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.ravel()), helper.make_tensor("b", TensorProto.FLOAT, [4], b)],
    )
    path = tmp_path_factory.mktemp("pre") / "net.onnx"
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), str(path))
    return path


def openvino_reference(onnx_path, x, reverse, mean, scale):
    core = ov.Core()
    model = core.read_model(str(onnx_path))
    ppp = PrePostProcessor(model)
    ppp.input().tensor().set_layout(ov.Layout("NCHW"))
    ppp.input().model().set_layout(ov.Layout("NCHW"))
    steps = ppp.input().preprocess()
    if reverse:
        steps.reverse_channels()
    if mean:
        steps.mean(MEAN)
    if scale:
        steps.scale(SCALE)
    compiled = core.compile_model(ppp.build(), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    return compiled([x])[0]


@pytest.mark.parametrize("reverse,mean,scale", list(itertools.product([False, True], repeat=3)))
def test_preprocessing_matches_openvino(tmp_path, onnx_path, reverse, mean, scale):
    flags = ["--input_model", str(onnx_path), "--output_dir", str(tmp_path), "--model_name", "m"]
    flags += ["--reverse_input_channels"] if reverse else []
    flags += ["--mean_values", f"data[{','.join(map(str, MEAN))}]"] if mean else []
    flags += ["--scale_values", f"data[{','.join(map(str, SCALE))}]"] if scale else []
    convert(flags)
    x = np.random.default_rng(1).uniform(0, 255, (1, 3, 6, 6)).astype(np.float32)
    core = ov.Core()
    ours = core.compile_model(core.read_model(str(tmp_path / "m.xml")), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})([x])[0]
    want = openvino_reference(onnx_path, x, reverse, mean, scale)
    np.testing.assert_allclose(ours, want, rtol=1e-4, atol=1e-3)
