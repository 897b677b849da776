"""OpenVINO 2026.4.1's CPU plugin folds a Multiply / Divide of a Convolution's data input by
a constant into the convolution's weights whenever the constant's shape broadcasts to the
weights', also when it varies over the spatial axes (a kernel as large as the map), where
folding is wrong: timm's CSATv2 (an adaptive average pool to 7x7, whose dynamo export divides
by a [7, 7] count, then a 7x7 convolution with padding 3) came out 3.6e-3 off. The IR writer
puts a Maximum(x, x) between them for that form; a per-channel scale, which OpenVINO folds
right, is written as before. ref and cpu are checked on the same graphs."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import ort_session_run


def model(op: str, scale_shape: tuple[int, ...], kernel: int, group: int = 1) -> object:  # type: ignore[no-untyped-def]
    """x [1, 4, 7, 7] -> `op` by a constant of `scale_shape` -> a kernel x kernel Conv (same padding)."""
    rng = np.random.default_rng(5)
    scale = rng.uniform(1.0, 4.0, scale_shape).astype(np.float32)
    w = rng.standard_normal((2 * group, 4 // group, kernel, kernel)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node(op, ["x", "s"], ["t"]), helper.make_node("Conv", ["t", "w"], ["y"], pads=[kernel // 2] * 4, group=group)],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 7, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(w, "w")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def check(tmp_path, proto) -> str:  # type: ignore[no-untyped-def]
    feeds = {"x": np.random.default_rng(0).standard_normal((1, 4, 7, 7)).astype(np.float32)}
    (want,) = ort_session_run(proto, feeds)
    ir = import_onnx(proto)
    assert_close(np.asarray(run(ir, feeds)["y"]), want, what="ref vs onnxruntime")
    assert_close(np.asarray(compile_model(ir)(feeds)["y"]), want, what="cpu vs onnxruntime")
    write_ir_xml(ir, tmp_path / "m.xml")
    assert_close(run_openvino(tmp_path / "m.xml", feeds)["y"], want, what="OpenVINO vs onnxruntime")
    return (tmp_path / "m.xml").read_text()


@pytest.mark.parametrize(("op", "scale_shape", "group"), [
    ("Div", (7, 7), 1),        # CSATv2's adaptive-pool divisor
    ("Mul", (1, 1, 7, 7), 1),
    ("Mul", (4, 7, 7), 1),
    ("Mul", (7, 7), 2),        # grouped
])  # fmt: skip
def test_spatial_scale_into_a_map_sized_kernel_runs_right_in_openvino(tmp_path, op, scale_shape, group):
    assert 'type="Maximum"' in check(tmp_path, model(op, scale_shape, 7, group))  # the barrier


@pytest.mark.parametrize(("scale_shape", "kernel"), [((4, 1, 1), 7), ((1,), 7)])
def test_per_channel_scales_are_written_as_before(tmp_path, scale_shape, kernel):
    assert 'type="Maximum"' not in check(tmp_path, model("Mul", scale_shape, kernel))
