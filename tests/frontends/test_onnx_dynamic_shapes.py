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
from irforge.dialects.nn.base import DYN
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


def test_a_small_static_step_between_host_segments_runs_on_the_host():
    """Sigmoid of the gathered sum is static, but a native program of its own for one
    scalar is not worth it: it joins the host segments around it (segments.absorb_small)."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("NonZero", ["r"], ["nz"]),
        helper.make_node("Transpose", ["nz"], ["idx"], perm=[1, 0]),
        helper.make_node("GatherND", ["x", "idx"], ["g"]),
        helper.make_node("ReduceSum", ["g"], ["total"], keepdims=0),
        helper.make_node("Sigmoid", ["total"], ["gate"]),
        helper.make_node("Mul", ["g", "gate"], ["y"]),
    ]
    x = np.random.default_rng(8).standard_normal((4, 5)).astype(np.float32)
    model = check(make(nodes, [("x", FLOAT, [4, 5])], [("y", FLOAT)]), {"x": x})
    compiled = compile_model(model, threads=1)
    assert [(s.host, [op.name for op in s.ops]) for s in compiled.segments] == [
        (False, ["nn.relu"]),
        (True, ["nn.non_zero", "nn.permute", "nn.gather_nd", "nn.reduce", "nn.activation", "nn.eltwise"]),
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


def top_k_model(k_from: str):  # type: ignore[no-untyped-def]
    """TopK whose k is computed at run time: the number of positive scores ("data"), or a
    graph input ("input"); the chosen values scaled after (a host op on the dynamic size)."""
    nodes = [helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=1),
             helper.make_node("Mul", ["values", "two"], ["scaled"])]  # fmt: skip
    inputs = [("x", FLOAT, [3, 6])]
    if k_from == "data":
        nodes[:0] = [
            helper.make_node("Greater", ["x", "zero"], ["positive"]),
            helper.make_node("Cast", ["positive"], ["ones"], to=INT64),
            helper.make_node("ReduceSum", ["ones", "axes"], ["per_row"], keepdims=0),
            helper.make_node("ReduceMin", ["per_row"], ["fewest"], keepdims=1),
            helper.make_node("Reshape", ["fewest", "one"], ["k"]),
        ]
    else:
        inputs.append(("k", INT64, [1]))
    initializers = [("two", np.float32(2))]
    if k_from == "data":
        initializers += [("zero", np.float32(0)), ("axes", np.array([1], np.int64)), ("one", np.array([1], np.int64))]
    return make(nodes, inputs, [("scaled", FLOAT), ("indices", INT64)], initializers)


def test_top_k_with_a_k_computed_from_the_data_runs_on_ref_and_cpu():
    x = np.random.default_rng(4).standard_normal((3, 6)).astype(np.float32)
    model = check(top_k_model("data"), {"x": x})
    top_k = next(op for op in model.func.body.block.ops if op.name == "nn.top_k")
    assert [list(r.type.get_shape()) for r in top_k.results] == [[3, DYN], [3, DYN]]


def test_top_k_with_a_run_time_k_of_zero_gives_empty_results():
    feeds = {"x": np.random.default_rng(5).standard_normal((3, 6)).astype(np.float32), "k": np.array([0], np.int64)}
    check(top_k_model("input"), feeds)  # OpenVINO's CPU plugin refuses k = 0 ("K (0) must be greater or equal to 1")


@pytest.mark.parametrize("k", [2, 6])
def test_top_k_with_a_k_input_matches_onnxruntime_and_openvino(tmp_path, k):
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.frontends.ir_xml import read_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    feeds = {"x": np.random.default_rng(5).standard_normal((3, 6)).astype(np.float32), "k": np.array([k], np.int64)}
    proto = top_k_model("input")
    model = check(proto, feeds)
    want = ort_session_run(proto, feeds)
    write_ir_xml(model, tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", feeds)
    np.testing.assert_allclose(got["scaled"], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got["indices"], want[1])
    again = run(read_ir_xml(tmp_path / "m.xml"), feeds)
    np.testing.assert_array_equal(again["indices"], want[1])


def test_top_k_with_a_k_beyond_its_axis_is_a_one_line_error():
    from irforge.errors import IrforgeError

    model = import_onnx(top_k_model("input"))
    feeds = {"x": np.zeros((3, 6), np.float32), "k": np.array([7], np.int64)}
    with pytest.raises(IrforgeError, match="k 7 is outside") as info:
        compile_model(model, threads=1)(feeds)
    assert info.value.code == "E886"


def detection_tail_model():  # type: ignore[no-untyped-def]
    """torchvision's SSD post-processing in miniature: scores above a threshold (NonZero),
    k = min(3, count) from their Shape (det_utils._topk_min), TopK with that k, labels by
    ConstantOfShape of the Shape of the chosen scores, an Expand to the run-time count, and
    NMS selections' count as a Shape with start/end."""
    nodes = [
        helper.make_node("Greater", ["s", "thr"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["nz"]),
        helper.make_node("Squeeze", ["nz", "zero"], ["where"]),
        helper.make_node("Gather", ["s", "where"], ["kept"], axis=0),
        helper.make_node("Shape", ["kept"], ["count"]),
        helper.make_node("Concat", ["three", "count"], ["both"], axis=0),
        helper.make_node("ReduceMin", ["both"], ["k"], keepdims=1),
        helper.make_node("TopK", ["kept", "k"], ["top", "idx"]),
        helper.make_node("Shape", ["top"], ["top_shape"]),
        helper.make_node("ConstantOfShape", ["top_shape"], ["labels"], value=numpy_helper.from_array(np.array([7], np.int64))),
        helper.make_node("Unsqueeze", ["top", "one"], ["col"]),
        helper.make_node("Concat", ["count", "two"], ["grid"], axis=0),
        helper.make_node("Expand", ["row", "grid"], ["tiled"]),
        helper.make_node("Shape", ["nz"], ["nz_count"], start=-1),
    ]
    initializers = [("thr", np.float32(0.2)), ("zero", np.array([0], np.int64)), ("three", np.array([3], np.int64)),
                    ("one", np.array([1], np.int64)), ("two", np.array([2], np.int64)), ("row", np.array([[1.5, -2.0]], np.float32))]  # fmt: skip
    outputs = [("top", FLOAT), ("idx", INT64), ("labels", INT64), ("col", FLOAT), ("tiled", FLOAT), ("nz_count", INT64)]
    return make(nodes, [("s", FLOAT, [8])], outputs, initializers)


@pytest.mark.parametrize("seed", [0, 6])
def test_shape_constant_of_shape_and_expand_of_run_time_sizes_on_ref_and_cpu(seed):
    s = np.random.default_rng(seed).standard_normal(8).astype(np.float32)
    model = check(detection_tail_model(), {"s": s})
    names = {op.name for op in model.func.body.block.ops}
    assert {"nn.shape_of", "nn.broadcast_to"} <= names


def test_run_time_shapes_run_in_openvino_like_onnxruntime(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    feeds = {"s": np.random.default_rng(0).standard_normal(8).astype(np.float32)}
    proto = detection_tail_model()
    want = ort_session_run(proto, feeds)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", feeds)
    for output, w in zip(proto.graph.output, want):
        np.testing.assert_allclose(got[output.name], w, rtol=1e-6, err_msg=output.name)


def test_nms_without_a_limit_reads_back_from_ir_xml_and_runs_on_cpu(tmp_path, capsys):
    """torchvision writes max_output_boxes_per_class = sys.maxsize: read as an integer (as a
    float it rounds past i64) by the ONNX importer and the IR XML reader; ir-run compares the
    run-time sizes with onnxruntime's."""
    import sys

    from irforge.backends.ir_xml import write_ir_xml
    from irforge.frontends.ir_xml import read_ir_xml
    from irforge.tools.ir_run import compare_onnxruntime

    proto = nms_model()
    proto.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.array([sys.maxsize], np.int64), "limit"))
    feeds = boxes_and_scores(7)
    want = ort_session_run(proto, feeds)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = compile_model(read_ir_xml(tmp_path / "m.xml"), threads=1)(feeds)
    assert len(want[1]) > 5  # more than the former limit: none was imposed
    np.testing.assert_array_equal(got["sel"], want[1])
    np.testing.assert_allclose(got["out"], want[0], rtol=1e-6)
    (tmp_path / "m.onnx").write_bytes(proto.SerializeToString())
    compare_onnxruntime(str(tmp_path / "m.onnx"), feeds, {"out": got["out"][:1], "sel": got["sel"]})
    printed = capsys.readouterr().out
    assert f"out: vs onnxruntime shape [1, 4] differs from onnxruntime's {list(want[0].shape)}" in printed
    assert "sel: vs onnxruntime max_abs_error=0.000e+00" in printed


def test_expand_to_a_run_time_shape_that_does_not_broadcast_is_a_one_line_error():
    from irforge.errors import IrforgeError

    proto = make([helper.make_node("Expand", ["x", "shape"], ["y"])], [("x", FLOAT, [2]), ("shape", INT64, [2])], [("y", FLOAT)])
    feeds = {"x": np.ones(2, np.float32), "shape": np.array([1, 3], np.int64)}
    with pytest.raises(IrforgeError, match=r"shape \[2\] does not broadcast to \[1, 3\]") as info:
        run(import_onnx(proto), feeds)
    assert info.value.code == "E887"
    feeds["shape"] = np.array([4, 1], np.int64)
    np.testing.assert_array_equal(compile_model(import_onnx(proto), threads=1)(feeds)["y"], ort_session_run(proto, feeds)[0])


@pytest.mark.parametrize("positives", [1, 4])
def test_expand_of_a_run_time_dim_to_a_constant_shape_on_ref_and_cpu(positives):
    """JetMoE (dynamo): the routed tokens' count, a run-time dim, Expanded to a constant shape
    (it is 1 or the target's dim; only the run knows which). Once refused ("expanding a
    dynamic dim"), now nn.broadcast_to."""
    nodes = [
        helper.make_node("Greater", ["s", "thr"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["nz"]),  # [1, count]
        helper.make_node("Cast", ["nz"], ["nzf"], to=FLOAT),
        helper.make_node("Expand", ["nzf", "shape"], ["y"]),
    ]
    initializers = [("thr", np.float32(0.0)), ("shape", np.array([3, 4], np.int64))]
    proto = make(nodes, [("s", FLOAT, [8])], [("y", FLOAT)], initializers)
    s = -np.ones(8, np.float32)
    s[[2, 3, 5, 7][:positives]] = 1.0
    model = check(proto, {"s": s})
    assert "nn.broadcast_to" in {op.name for op in model.func.body.block.ops}
