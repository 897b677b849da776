"""ONNX Pad with negative pads (cropping; timm's NASNet stem cells export `pad[:, :, 1:, 1:]`
after a ZeroPad2d as one Pad with -1s): a Pad of the positive parts and a Slice per cropped
axis, checked against onnxruntime on ref and cpu."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.backends.ir_xml_support import assert_close
from tests.helpers import ort_session_run


def model(pads: list[int], mode: str = "constant") -> object:  # type: ignore[no-untyped-def]
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x", "p", "v"], ["y"], mode=mode)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 6])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.array(pads, np.int64), "p"), numpy_helper.from_array(np.array(0.5, np.float32), "v")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("pads", [
    [0, 0, -1, -1, 0, 0, 0, 0],   # NASNet: crop the first row and column
    [0, 0, 1, -2, 0, 0, -1, 2],   # pad and crop on one axis's two sides
    [0, -1, 0, 0, 0, 0, 0, -3],   # channels and the last axis
])  # fmt: skip
def test_negative_pads_crop_like_onnxruntime(pads):
    proto = model(pads)
    feeds = {"x": np.random.default_rng(2).standard_normal((1, 2, 5, 6)).astype(np.float32)}
    (want,) = ort_session_run(proto, feeds)
    ir = import_onnx(proto)
    assert_close(np.asarray(run(ir, feeds)["y"]), want, what="ref vs onnxruntime")
    assert_close(np.asarray(compile_model(ir)(feeds)["y"]), want, what="cpu vs onnxruntime")


def test_negative_pads_in_reflect_mode_are_refused():
    with pytest.raises(IrforgeError, match="mode 'reflect'"):
        import_onnx(model([0, 0, -1, 0, 0, 0, 0, 0], "reflect"))
