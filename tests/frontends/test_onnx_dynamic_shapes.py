"""Data-dependent shapes (NonZero, NonMaxSuppression, TopK with a run-time k) on ref, cpu and
OpenCL: the compiling backends run such models as compiled segments and host segments
(`irforge/backends/segments.py`); each model is checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.backends.segments import SegmentedModel
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64


def make(nodes, inputs, outputs, initializers=(), opset=17):  # type: ignore[no-untyped-def]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs],
        [numpy_helper.from_array(np.asarray(a), n) for n, a in initializers],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(proto, feeds, devices=("ref", "cpu")):  # type: ignore[no-untyped-def]
    """Run on every device; each output must equal onnxruntime's (shape and values)."""
    model = import_onnx(proto)
    want = ort_session_run(proto, feeds)
    names = [o.name for o in proto.graph.output]
    runners = {"ref": lambda: run(model, feeds), "cpu": lambda: compile_model(model, threads=2)(feeds)}
    if "gpu" in devices:
        from irforge.backends.opencl import compile_model as compile_opencl

        runners["gpu"] = lambda: compile_opencl(model)(feeds)
    for device in devices:
        got = runners[device]()
        for name, w in zip(names, want):
            assert got[name].shape == w.shape, (device, name)
            np.testing.assert_allclose(got[name], w, rtol=1e-5, atol=1e-6, err_msg=f"{device} {name}")
    return model


def nonzero_model():  # type: ignore[no-untyped-def]
    """NonZero -> Transpose -> GatherND of the input -> Mul (dynamic), ReduceSum (static
    again) -> Add/Sigmoid compiled after the host segment."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("NonZero", ["r"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "idx"], ["g"]),
        helper.make_node("Mul", ["g", "two"], ["y"]),
        helper.make_node("ReduceSum", ["y"], ["total"], keepdims=0),
        helper.make_node("Add", ["x", "total"], ["z"]),
        helper.make_node("Sigmoid", ["z"], ["w"]),
    ]
    return make(nodes, [("x", FLOAT, [4, 5])], [("y", FLOAT), ("w", FLOAT), ("nz", INT64)], [("two", np.float32(2))])


@pytest.mark.parametrize("seed", [0, 1])
def test_nonzero_and_what_follows_run_on_cpu_in_segments(seed):
    x = np.random.default_rng(seed).standard_normal((4, 5)).astype(np.float32)
    model = check(nonzero_model(), {"x": x})
    compiled = compile_model(model, threads=1)
    assert isinstance(compiled, SegmentedModel)
    kinds = [(s.host, [op.name for op in s.ops]) for s in compiled.segments]
    assert kinds == [
        (False, ["nn.relu"]),
        (True, ["nn.non_zero", "nn.permute", "nn.gather_nd", "nn.eltwise", "nn.reduce"]),
        (False, ["nn.eltwise", "nn.activation"]),
    ]


def test_nonzero_with_no_nonzero_element_gives_empty_outputs():
    x = -np.abs(np.random.default_rng(2).standard_normal((4, 5))).astype(np.float32)
    check(nonzero_model(), {"x": x})


def test_nonzero_model_on_opencl_lists_the_host_ops_as_fallbacks():
    pytest.importorskip("pyopencl")
    from irforge.backends.opencl import compile_model as compile_opencl
    from irforge.backends.opencl.device import _all_devices

    if not _all_devices():
        pytest.skip("no OpenCL device")
    x = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    model = check(nonzero_model(), {"x": x}, devices=("gpu",))
    reasons = {f.op: f.reason for f in compile_opencl(model).fallbacks}
    assert reasons["nn.non_zero 'NonZero_nz'"] == "data-dependent shape"


def nms_model(boxes: int = 12):  # type: ignore[no-untyped-def]
    """Box and score heads, NonMaxSuppression, the selected boxes gathered (torchvision's
    nms export: column 2 of the selection) and scaled after."""
    nodes = [
        helper.make_node("Sigmoid", ["s"], ["scores"]),
        helper.make_node("NonMaxSuppression", ["b", "scores", "limit", "iou", "thr"], ["sel"]),
        helper.make_node("Gather", ["sel", "two"], ["col"], axis=1),
        helper.make_node("Squeeze", ["b", "zero"], ["b0"]),
        helper.make_node("Gather", ["b0", "col"], ["kept"], axis=0),
        helper.make_node("Mul", ["kept", "scale"], ["out"]),
    ]
    return make(
        nodes, [("b", FLOAT, [1, boxes, 4]), ("s", FLOAT, [1, 2, boxes])], [("out", FLOAT), ("sel", INT64)],
        [("limit", np.array([5], np.int64)), ("iou", np.array([0.4], np.float32)), ("thr", np.array([0.3], np.float32)),
         ("two", np.array(2, np.int64)), ("zero", np.array([0], np.int64)), ("scale", np.float32(10))],
    )  # fmt: skip


def boxes_and_scores(seed: int, count: int = 12) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    corner = rng.uniform(0, 8, (1, count, 2))
    b = np.concatenate([corner, corner + rng.uniform(1, 4, (1, count, 2))], axis=-1).astype(np.float32)
    return {"b": b, "s": rng.standard_normal((1, 2, count)).astype(np.float32)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_non_max_suppression_selection_feeds_a_gather_on_cpu(seed):
    check(nms_model(), boxes_and_scores(seed))
