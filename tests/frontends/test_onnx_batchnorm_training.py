"""ONNX BatchNormalization with training_mode=1 whose running statistics are not read (HF BiT's
weight standardisation, `F.batch_norm(w, None, None, training=True)`): normalised by the
batch's own statistics, as onnxruntime computes it; reading the running statistics is E1xx."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.helpers import ort_session_run


def batch_norm_training(outputs: int = 1):
    rng = np.random.default_rng(0)
    inits = [numpy_helper.from_array(rng.uniform(0.5, 1.5, 4).astype(np.float32), "scale"),
             numpy_helper.from_array(rng.normal(0, 0.1, 4).astype(np.float32), "bias"),
             numpy_helper.from_array(np.zeros(4, np.float32), "mean"),
             numpy_helper.from_array(np.ones(4, np.float32), "var")]
    names = ["y", "running_mean", "running_var"]
    node = helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], names, epsilon=1e-3, momentum=1.0, training_mode=1)
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 3, 5])]
    outs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in names[1:outputs]]
    graph = helper.make_graph([node], "bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 3, 5])], outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])


def test_batch_statistics_match_onnxruntime():
    proto = batch_norm_training()
    x = np.random.default_rng(1).normal(2.0, 3.0, (2, 4, 3, 5)).astype(np.float32)
    (want,) = ort_session_run(proto, {"x": x})
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    for got in (run(model, {"x": x}), compile_model(model)({"x": x})):
        np.testing.assert_allclose(next(iter(got.values())), want, rtol=0, atol=2e-5)
    # the running statistics (zeros, ones) are not what normalises: the batch's are
    assert np.abs(want).max() < 5


def test_running_statistics_outputs_are_refused():
    with pytest.raises(IrforgeError, match="training mode"):
        import_onnx(batch_norm_training(outputs=3))
