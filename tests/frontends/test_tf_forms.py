"""TensorFlow forms Keras 2/3 graphs use: Erfc and exact GELU, StridedSlice with every mask,
function calls, atrous convolution through SpaceToBatchND/BatchToSpaceND, Einsum."""

import math

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.frontends.tf import import_tf
from irforge.passes import apply_pipeline
from irforge.testing.tf_models import DualBuilder, tf_tensor
from tests.frontends.test_tf_import import i32, ops, single_op

X = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5) - 50
PIPELINE = "infer-shapes,canonicalize,replace-subgraph,convert-layout,fuse-linear-ops,canonicalize"


def erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf)(x.astype(np.float64))


def test_erfc_and_exact_gelu_become_one_gelu():
    b = DualBuilder()
    x, _ = b.placeholder("x", [2, 7])
    half, _ = b.const(np.array(0.5, np.float32), "half", onnx=False)
    c, _ = b.const(np.array(0.7071067811865476, np.float32), "c", onnx=False)
    b.tf_node("Mul", [half, x], "hx")
    b.tf_node("Neg", [x], "neg")
    b.tf_node("Mul", ["neg", c], "scaled")
    b.tf_node("Erfc", ["scaled"], "erfc", T=("type", 1))
    b.tf_node("Mul", ["hx", "erfc"], "gelu")
    feed = np.linspace(-6, 6, 14, dtype=np.float32).reshape(2, 7)
    want = 0.5 * feed * (1 + erf(feed / np.sqrt(2)))
    model = import_tf(b.graph)
    np.testing.assert_allclose(run(model, {"x": feed})["gelu"], want, rtol=1e-5, atol=1e-6)
    apply_pipeline(model.module, PIPELINE)
    assert [op.name for op in model.func.body.block.ops] == ["nn.activation", "func.return"]
    np.testing.assert_allclose(run(model, {"x": feed})["gelu"], want, rtol=1e-5, atol=1e-6)
    only = import_tf(b.graph, outputs=["erfc"])
    np.testing.assert_allclose(run(only, {"x": feed})["erfc"], 1 - erf(-feed * 0.7071067811865476), atol=1e-6)


@pytest.mark.parametrize(
    "consts, attrs, expected",
    [
        ([i32(0, 1), i32(0, 3), i32(1, 1)], {"ellipsis_mask": 1}, X[..., 1:3]),
        ([i32(1, 0, 1), i32(2, 0, 3), i32(1, 1, 1)], {"ellipsis_mask": 2, "shrink_axis_mask": 1}, X[1, ..., 1:3]),
        ([i32(1, 0, 0), i32(2, 0, 0), i32(1, 1, 1)], {"ellipsis_mask": 2, "new_axis_mask": 4, "shrink_axis_mask": 1}, X[1, ..., None]),
        ([i32(0, 0, 2), i32(0, 0, 3), i32(1, 1, 1)], {"new_axis_mask": 1, "ellipsis_mask": 2, "shrink_axis_mask": 4}, X[None, ..., 2]),
        ([i32(0, 0, -1), i32(0, 2, 0), i32(1, 1, -2)], {"begin_mask": 1, "end_mask": 5, "new_axis_mask": 1}, X[None, :2, ::-2]),
        ([i32(0, 1), i32(0, 2), i32(1, 1)], {"new_axis_mask": 1}, X[None, 1:2]),
        ([i32(-1), i32(0), i32(1)], {"shrink_axis_mask": 1}, X[-1]),
        ([i32(0), i32(0), i32(1)], {"ellipsis_mask": 1}, X),
    ],
    ids=["ellipsis_first", "shrink_ellipsis", "shrink_ellipsis_new", "new_ellipsis_shrink", "new_axis_reverse", "new_then_slice", "shrink_last", "all"],
)
def test_strided_slice_every_mask(consts, attrs, expected):
    got = single_op("StridedSlice", X, consts, **attrs)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
