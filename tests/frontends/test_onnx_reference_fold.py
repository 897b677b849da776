"""Nodes of ops without an extractor fold through ONNX's reference when their inputs are all
constant at the given shapes (positions, masks); otherwise they are reported with the others."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from irforge.frontends.onnx import reference_fold
from tests.helpers import ort_session_run


def mask_model(dims):  # type: ignore[no-untyped-def]
    """x + ArrayFeatureExtractor(ConstantOfShape(Shape(x)[1:]), [0]) as a [5, 1] mask +
    Binarizer(the sum of its first 5 columns): a mask built from the input's shape by ops
    irforge has no extractor for (ai.onnx.ml ops; EyeLike, Hardmax, CenterCropPad, Det,
    Compress and the training losses, used here before, now import)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=1),
        helper.make_node("ConstantOfShape", ["s"], ["zeros"], value=numpy_helper.from_array(np.array([0.0], np.float32))),
        helper.make_node("Slice", ["zeros", "zero", "five", "one"], ["square"]),
        helper.make_node("ReduceSum", ["square"], ["total"], keepdims=0),
        helper.make_node("Binarizer", ["total"], ["det"], domain="ai.onnx.ml", threshold=-1.0),
        helper.make_node("ArrayFeatureExtractor", ["zeros", "zero"], ["loss"], domain="ai.onnx.ml"),
        helper.make_node("Add", ["x", "loss"], ["masked"]),
        helper.make_node("Add", ["masked", "det"], ["y"]),
    ]
    ints = [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("zero", 0), ("five", 5), ("one", 1))]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], ints,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("ai.onnx.ml", 3)])


def test_constant_subgraph_of_unsupported_ops_folds_and_matches_onnxruntime():
    proto = mask_model([2, 5, 6])
    model = import_onnx(proto)
    ops = {op.name for op in model.func.body.block.ops}
    assert ops == {"nn.constant", "nn.eltwise", "func.return"}, ops
    x = np.random.default_rng(0).standard_normal((2, 5, 6)).astype(np.float32)
    (want,) = ort_session_run(proto, {"x": x})
    np.testing.assert_allclose(run(model, {"x": x})["y"], want, rtol=0, atol=0)


def test_unsupported_ops_on_run_time_values_are_all_listed():
    proto = mask_model([2, "n", 6])  # a dynamic dim: the mask is not constant
    with pytest.raises(IrforgeError, match=r"unsupported ONNX ops: ai.onnx.ml::ArrayFeatureExtractor x1 \(loss\); ai.onnx.ml::Binarizer x1 \(det\)"):
        import_onnx(proto)


def test_fold_over_the_size_budget_is_reported(monkeypatch):
    monkeypatch.setattr(reference_fold, "FOLD_LIMIT_BYTES", 16)
    # the binarized sum (a scalar, 4 bytes) fits the budget and folds; the [5, 1] column (20) does not
    with pytest.raises(IrforgeError, match=r"unsupported ONNX ops: ai.onnx.ml::ArrayFeatureExtractor x1 \(loss\); make"):
        import_onnx(mask_model([2, 5, 6]))



def test_random_ops_are_never_folded():
    node = helper.make_node("RandomNormal", [], ["r"], shape=[2, 5, 6])
    add = helper.make_node("Add", ["x", "r"], ["y"])
    graph = helper.make_graph(
        [node, add], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    with pytest.raises(IrforgeError, match="unsupported ONNX ops: RandomNormal x1"):
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_random_ops_are_refused_saying_why():
    """RandomUniformLike of a constant is never folded (one sample would become a weight), and
    the error says why no extension can make it match onnxruntime."""
    nodes = [helper.make_node("RandomUniformLike", ["x"], ["r"], seed=1.0), helper.make_node("Add", ["x", "r"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])  # fmt: skip
    with pytest.raises(IrforgeError, match="RandomUniformLike x1") as info:
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)]))
    assert info.value.code == "E196" and "Philox" in str(info.value) and "feed the random tensor as an input" in str(info.value)
