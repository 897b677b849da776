"""replace-subgraph on decomposed attention: the exporters' forms become one
nn.scaled_dot_product_attention that computes what the decomposition did (reference
interpreter before and after, and onnxruntime on the ONNX graph)."""

import math

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.model import Model
from irforge.passes import apply_pipeline
from irforge.testing import onnx_models
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.attention_support import attention_feeds, decomposed_attention
from tests.helpers import ort_session_run

SDPA = "nn.scaled_dot_product_attention"


def op_names(model: Model) -> list[str]:
    return [op.name for op in model.func.body.block.ops if op.name not in ("nn.constant", "func.return")]


def assert_same_after(model: Model, feeds: dict[str, np.ndarray], pipeline: str) -> Model:
    """`model` after `pipeline`, checked to compute what it computed before (within 1e-5)."""
    before = run(model, feeds)
    after = Model(model.module.clone(), model.store)
    apply_pipeline(after.module, pipeline)
    got = run(after, feeds)
    for name, want in before.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-6, err_msg=name)
    return after


SELF = ((1, 4, 8, 16), (1, 4, 8, 16), (1, 4, 8, 16))
CROSS = ((2, 3, 5, 8), (2, 3, 7, 8), (2, 3, 7, 4))


@pytest.mark.parametrize(
    "shapes, factor, form, mask, mask_as_input",
    [
        (SELF, 1 / math.sqrt(16), "mul", None, True),
        (SELF, 0.3, "div", None, True),
        (CROSS, 1 / math.sqrt(8), "mul", np.random.default_rng(1).uniform(-3, 0, (5, 7)).astype(np.float32), True),
        (CROSS, 0.2, "div", np.random.default_rng(2).uniform(-3, 0, (2, 1, 5, 7)).astype(np.float32), False),
    ],
    ids=["default-scale", "div-scale", "mask-input", "mask-constant"],
)
def test_decomposed_attention_becomes_one_op(shapes, factor, form, mask, mask_as_input):
    proto = decomposed_attention(shapes, factor, form, mask, mask_as_input)
    feeds = attention_feeds(shapes, mask if mask_as_input else None)
    model = import_onnx(proto)
    after = assert_same_after(model, feeds, "infer-shapes,canonicalize,replace-subgraph,canonicalize")
    assert op_names(after) == [SDPA]
    (want,) = ort_session_run(proto, feeds)
    np.testing.assert_allclose(next(iter(run(after, feeds).values())), want, rtol=1e-5, atol=1e-6)


def test_softmax_over_another_axis_is_left_alone():
    proto = decomposed_attention(SELF, 0.25, softmax_axis=2)
    after = assert_same_after(import_onnx(proto), attention_feeds(SELF), "infer-shapes,canonicalize,replace-subgraph")
    assert SDPA not in op_names(after)


def test_transformer_encoder_attention_is_fused():
    proto = onnx_models.transformer_encoder()
    feeds = {"tokens": np.random.default_rng(0).standard_normal((1, 8, 32)).astype(np.float32)}
    after = assert_same_after(import_onnx(proto), feeds, DEFAULT_PIPELINE)
    names = op_names(after)
    assert names.count(SDPA) == 1 and "nn.softmax" not in names and "nn.matmul" not in names
    (want,) = ort_session_run(proto, feeds)
    np.testing.assert_allclose(next(iter(run(after, feeds).values())), want, rtol=1e-4, atol=1e-5)
