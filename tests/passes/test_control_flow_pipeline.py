"""The ir-convert pass pipeline on a model with nn.loop and nn.if: the passes work inside the
bodies (a Mul folded into the body's Convolution) without crossing them, and --layout nhwc
converts at the model's boundary only, the bodies staying in their layout. Numbers checked
against onnxruntime on ref and in OpenVINO, for zero and three iterations."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.dialects.nn import Eltwise
from irforge.dialects.nn.control_flow import Loop
from irforge.model import load_model
from irforge.tools.ir_convert import convert
from tests.backends.ir_xml_support import run_openvino
from tests.helpers import ort_session_run


def conv_loop_model() -> onnx.ModelProto:
    """Conv -> Loop(n) {Conv, Mul, Relu, Transpose + ReduceMean scanned} -> If(sum > 0)
    {Conv} else {Sigmoid} -> MaxPool."""
    rng = np.random.default_rng(0)
    w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.2
    w2 = rng.standard_normal((4, 4, 3, 3)).astype(np.float32) * 0.2
    b2 = rng.standard_normal((4,)).astype(np.float32)
    scale = rng.standard_normal((1, 4, 1, 1)).astype(np.float32)
    vi = helper.make_tensor_value_info
    body = helper.make_graph([
        helper.make_node("Conv", ["h", "w2", "b2"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Mul", ["c", "scale"], ["cs"]),
        helper.make_node("Relu", ["cs"], ["h2"]),
        helper.make_node("Transpose", ["h2"], ["t"], perm=[0, 2, 3, 1]),
        helper.make_node("ReduceMean", ["t"], ["m"], axes=[1, 2], keepdims=0),
        helper.make_node("Identity", ["cond"], ["cond2"]),
    ], "body", [vi("i", TensorProto.INT64, []), vi("cond", TensorProto.BOOL, []), vi("h", TensorProto.FLOAT, [1, 4, 8, 8])],
       [vi("cond2", TensorProto.BOOL, []), vi("h2", TensorProto.FLOAT, [1, 4, 8, 8]), vi("m", TensorProto.FLOAT, [1, 4])],
       [numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2"), numpy_helper.from_array(scale, "scale")])
    then = helper.make_graph([helper.make_node("Conv", ["y", "w2"], ["ty"], pads=[1, 1, 1, 1])], "then", [], [vi("ty", TensorProto.FLOAT, [1, 4, 8, 8])])
    other = helper.make_graph([helper.make_node("Sigmoid", ["y"], ["ey"])], "else", [], [vi("ey", TensorProto.FLOAT, [1, 4, 8, 8])])
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["h0"], pads=[1, 1, 1, 1]),
        helper.make_node("Loop", ["n", "", "h0"], ["y", "ms"], body=body),
        helper.make_node("ReduceSum", ["y"], ["s"], keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"]),
        helper.make_node("If", ["c"], ["z0"], then_branch=then, else_branch=other),
        helper.make_node("MaxPool", ["z0"], ["z"], kernel_shape=[2, 2], strides=[2, 2]),
    ]
    g = helper.make_graph(nodes, "g", [vi("x", TensorProto.FLOAT, [1, 3, 8, 8]), vi("n", TensorProto.INT64, [])],
                          [vi("z", TensorProto.FLOAT, [1, 4, 4, 4]), vi("ms", TensorProto.FLOAT, None)],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.array(0, np.float32), "zero")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    return m


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_pipeline_keeps_if_and_loop_right(tmp_path, layout):
    path = tmp_path / "m.onnx"
    onnx.save(conv_loop_model(), path)
    convert([str(path), "-o", str(tmp_path / "out"), "--layout", layout, "--emit", "mlir"])
    model = load_model(tmp_path / "out" / "m.mlir")
    (loop,) = [op for op in model.func.body.block.ops if isinstance(op, Loop)]
    assert not [op for op in loop.body.blocks[0].ops if isinstance(op, Eltwise)]  # the Mul went into the Conv
    xml, _ = write_ir_xml(model, tmp_path / "m.xml")
    x = np.random.default_rng(1).standard_normal((1, 3, 8, 8)).astype(np.float32)
    for n in (0, 3):
        want = ort_session_run(conv_loop_model(), {"x": x, "n": np.array(n)})
        feeds = {"x": x if layout == "nchw" else x.transpose(0, 2, 3, 1), "n": np.array(n)}
        for backend, got in (("ref", run(model, feeds)), ("openvino", run_openvino(xml, feeds, check_dims=False))):
            z = got["z"] if layout == "nchw" else got["z"].transpose(0, 3, 1, 2)
            np.testing.assert_allclose(z, want[0], rtol=1e-5, atol=1e-5, err_msg=f"{backend} n={n}")
            assert got["ms"].shape == want[1].shape
            np.testing.assert_allclose(got["ms"], want[1], rtol=1e-5, atol=1e-5, err_msg=f"{backend} n={n}")
