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
    """x + Compress(ConstantOfShape(Shape(x)[1:]), keep, axis=0) + Det(its first 5 columns): a
    mask built from the input's shape by ops irforge has no extractor for (Det, Compress;
    EyeLike, Hardmax and CenterCropPad, used here before, now import)."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], start=1),
        helper.make_node("ConstantOfShape", ["s"], ["zeros"], value=numpy_helper.from_array(np.array([0.0], np.float32))),
        helper.make_node("Slice", ["zeros", "zero", "five", "one"], ["square"]),
        helper.make_node("Det", ["square"], ["det"]),
        helper.make_node("Compress", ["zeros", "keep"], ["mask"], axis=0),
        helper.make_node("Add", ["x", "mask"], ["masked"]),
        helper.make_node("Add", ["masked", "det"], ["y"]),
    ]
    keep = numpy_helper.from_array(np.array([True, True, True, True, True]), "keep")
    ints = [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("zero", 0), ("five", 5), ("one", 1))]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [keep, *ints],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


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
    with pytest.raises(IrforgeError, match=r"unsupported ONNX ops: Compress x1 \(mask\); Det x1 \(det\)"):
        import_onnx(proto)


def test_fold_over_the_size_budget_is_reported(monkeypatch):
    monkeypatch.setattr(reference_fold, "FOLD_LIMIT_BYTES", 16)
    # Det's scalar (4 bytes) fits the budget and folds; Compress's [5, 6] mask does not
    with pytest.raises(IrforgeError, match=r"unsupported ONNX ops: Compress x1 \(mask\); make"):
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
