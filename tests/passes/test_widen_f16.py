"""widen-f16: a half-precision model compiled for the CPU backend computes in f32 and takes
and gives f16 arrays; against onnxruntime (which runs such a model's convolutions and MatMuls
in f32 as well) and the reference interpreter (f16 arithmetic); the pass leaves f32 models
and models whose control-flow bodies carry f16 values alone."""

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.passes.widen_f16 import has_f16
from tests.helpers import ort_session_run

RNG = np.random.default_rng(16)


def half_model() -> onnx.ModelProto:
    """Conv -> Relu -> GlobalAveragePool -> Flatten -> MatMul + bias -> Softmax, all f16, with a
    Cast to f16 of an f32 side input added in the middle."""
    w = numpy_helper.from_array((RNG.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float16), "w")
    fc = numpy_helper.from_array((RNG.standard_normal((8, 5)) * 0.3).astype(np.float16), "fc")
    bias = numpy_helper.from_array(RNG.standard_normal(5).astype(np.float16), "bias")
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("MatMul", ["f", "fc"], ["m"]),
        helper.make_node("Cast", ["side"], ["side16"], to=TensorProto.FLOAT16),
        helper.make_node("Add", ["m", "bias"], ["a"]),
        helper.make_node("Add", ["a", "side16"], ["s"]),
        helper.make_node("Softmax", ["s"], ["y"], axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "half",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 3, 9, 9]), helper.make_tensor_value_info("side", TensorProto.FLOAT, [2, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)], [w, fc, bias],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


FEEDS = {"x": RNG.standard_normal((2, 3, 9, 9)).astype(np.float16), "side": RNG.standard_normal((2, 5)).astype(np.float32)}


def test_half_model_runs_on_cpu_in_f32_with_f16_in_and_out() -> None:
    proto = half_model()
    (want,) = ort_session_run(proto, FEEDS)
    model = import_onnx(proto)
    got = compile_model(model, cache_dir=False)(FEEDS)["y"]
    assert got.dtype == np.float16
    # one f16 rounding of the f32 result apart at most (onnxruntime rounds between ops too)
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3, atol=1e-3)
    reference = run(model, FEEDS)["y"]
    np.testing.assert_allclose(got.astype(np.float32), reference.astype(np.float32), rtol=5e-3, atol=2e-3)


def test_the_pass_removes_every_f16_value_inside() -> None:
    model = import_onnx(half_model())
    apply_pipeline(model.module, "widen-f16")
    types = [str(v.type) for op in model.func.body.walk() for v in op.results]
    # only the narrowing Convert before the return (and the Cast's own f16 result, none) stay f16
    assert sum("f16" in t for t in types) == 1
    assert has_f16(model.func)  # the signature still takes and gives f16


def test_f32_models_are_left_alone() -> None:
    proto = half_model()
    f32 = onnx.helper.make_model(
        helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]), opset_imports=proto.opset_import)
    model = import_onnx(f32)
    before = str(model.module)
    apply_pipeline(model.module, "widen-f16")
    assert str(model.module) == before


def test_f16_region_arguments_leave_the_model_alone() -> None:
    """An f16 Loop body (its carried value is a region argument) is not rewritten."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]), helper.make_node("Add", ["acc", "acc"], ["acc_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", TensorProto.FLOAT16, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("acc_out", TensorProto.FLOAT16, [2])],
    )  # fmt: skip
    graph = helper.make_graph(
        [helper.make_node("Loop", ["n", "", "x"], ["y"], body=body)], "g",
        [helper.make_tensor_value_info("n", TensorProto.INT64, []), helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2])],
    )  # fmt: skip
    model = import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    before = str(model.module)
    apply_pipeline(model.module, "widen-f16")
    assert str(model.module) == before
