"""A QuantizeLinear/DequantizeLinear pair (FakeQuantize in irforge) gives onnxruntime's
numbers exactly on ref and cpu, also for values within a rounding error of a half step
(the specification's formula put some of them on the other integer: one-step errors that
an INT8 network carries to its outputs)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def qdq_model(scale: np.ndarray, zero: np.ndarray, axis: int = 1):  # type: ignore[no-untyped-def]
    inits = [numpy_helper.from_array(scale, "s"), numpy_helper.from_array(zero, "z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=axis), helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=axis)]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3, 500])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3, 500])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_qdq_matches_onnxruntime_exactly_near_half_steps(per_channel, dtype, device):
    rng = np.random.default_rng(5)
    scale = (rng.uniform(0.003, 0.05, 3) if per_channel else np.array(0.0173)).astype(np.float32)
    zero = (rng.integers(90, 140, 3) if per_channel else np.array(128)).astype(np.uint8)
    if dtype == np.int8:
        zero = (zero.astype(np.int16) - 128).astype(np.int8)
    s = scale.reshape(1, 3, 1) if per_channel else scale
    half_steps = rng.integers(-140, 140, (4, 3, 500)) + 0.5
    x = (half_steps * s * (1 + rng.uniform(-3e-7, 3e-7, half_steps.shape))).astype(np.float32)  # at and near the ties
    proto = qdq_model(scale, zero)
    (want,) = ort_session_run(proto, {"x": x})
    model = import_onnx(proto)
    if device == "ref":
        got = next(iter(run(model, {"x": x}).values()))
    else:
        from irforge.backends.cpu import compile_model

        got = next(iter(compile_model(model)({"x": x}).values()))
    np.testing.assert_array_equal(got, want)
