"""compress-fp16: weights stored as f16 give exactly what f32 weights rounded to f16 give."""

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.dialects.nn import Constant
from irforge.frontends.onnx import import_onnx
from irforge.model import Model
from irforge.passes import apply_pipeline
from irforge.testing import onnx_models


def rounded_copy(model: Model) -> Model:
    """The model with every stored f32 weight replaced by its f16 rounding (still f32)."""
    clone = Model(model.module.clone(), model.store)
    for op in clone.func.body.block.ops:
        if isinstance(op, Constant) and op.weight_name is not None and model.store[op.weight_name].dtype == np.float32:
            rounded = model.store[op.weight_name].astype(np.float16).astype(np.float32)
            op.weight = type(op.weight)(model.store.add(rounded, op.weight_name + "/rounded"))
    return clone


@pytest.mark.parametrize("build", [onnx_models.resnet, onnx_models.mobilenet_v2, onnx_models.vgg])
def test_f16_weights_compute_like_rounded_f32_weights(build):
    model = import_onnx(build())
    apply_pipeline(model.module, "infer-shapes,canonicalize,fuse-linear-ops,canonicalize")
    compressed = Model(model.module.clone(), model.store)
    apply_pipeline(compressed.module, "compress-fp16")
    stored = [op for op in compressed.func.body.block.ops if isinstance(op, Constant) and op.weight_name]
    assert stored and all(compressed.store[op.weight_name].dtype == np.float16 for op in stored)
    feed = {"data": np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    want = run(rounded_copy(model), feed)
    got = run(compressed, feed)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-7)
    original = run(model, feed)
    for name in want:  # and f16 rounding is a small change
        np.testing.assert_allclose(got[name], original[name], rtol=0.05, atol=0.01)
