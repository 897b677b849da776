"""ONNX Slice (and Split) whose starts or ends (lengths) are computed at run time (torchvision's Faster R-CNN
slices the first Shape(boxes)[0] rows of its class scores, a data-dependent count):
nn.slice_to, run on ref and cpu (a host step in the segmented model) and in OpenVINO (Slice-8
with non-constant start/stop inputs); constant bounds stay nn.slice."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from irforge.frontends.onnx import import_onnx
from tests.frontends.test_onnx_dynamic_shapes import FLOAT, INT64, check, make
from tests.helpers import ort_session_run


def run_time_slice_model(index_type: int = INT64):  # type: ignore[no-untyped-def]
    """Scores above 0 (NonZero) count the kept boxes; rows [0, count) of a [8, 3] table are
    sliced (ends at run time), then its columns [count - 8, -1) step 1 (starts at run time,
    negative: count from the end) and the rows backwards from count to the start (step -1)."""
    np_type = np.int64 if index_type == INT64 else np.int32
    nodes = [
        helper.make_node("Greater", ["s", "zero_f"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["nz"]),
        helper.make_node("Shape", ["nz"], ["nz_dims"]),
        helper.make_node("Gather", ["nz_dims", "one"], ["count64"], axis=0),
        helper.make_node("Cast", ["count64"], ["count"], to=index_type),
        helper.make_node("Slice", ["table", "zero", "count", "zero"], ["rows"]),
        helper.make_node("Sub", ["count", "eight"], ["from_end"]),
        helper.make_node("Slice", ["table", "from_end", "minus_one", "one"], ["cols"]),
        helper.make_node("Slice", ["table", "count", "lowest", "zero", "minus_one"], ["back"]),
    ]
    initializers = [("zero_f", np.float32(0.0)), ("zero", np.array([0], np_type)), ("one", np.array([1], np_type)),
                    ("eight", np.array([8], np_type)), ("minus_one", np.array([-1], np_type)),
                    ("lowest", np.array([np.iinfo(np_type).min], np_type))]  # fmt: skip
    inputs = [("s", FLOAT, [8]), ("table", FLOAT, [8, 3])]
    return make(nodes, inputs, [("rows", FLOAT), ("cols", FLOAT), ("back", FLOAT)], initializers, opset=17)


def feeds(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"s": rng.standard_normal(8).astype(np.float32), "table": rng.standard_normal((8, 3)).astype(np.float32)}


@pytest.mark.parametrize("seed", [0, 5])
def test_slice_to_run_time_bounds_runs_on_ref_and_cpu(seed):
    model = check(run_time_slice_model(), feeds(seed))
    assert [op.name for op in model.func.body.block.ops].count("nn.slice_to") == 3


def test_slice_to_with_i32_bounds_and_no_kept_rows():
    inputs = feeds(1)
    inputs["s"] = -np.abs(inputs["s"])  # nothing kept: empty slices
    check(run_time_slice_model(helper.TensorProto.INT32), inputs)


@pytest.mark.parametrize("index_type", [INT64, helper.TensorProto.INT32])
def test_slice_to_runs_in_openvino(tmp_path, index_type):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto, inputs = run_time_slice_model(index_type), feeds(2)
    want = ort_session_run(proto, inputs)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", inputs)
    for output, w in zip(proto.graph.output, want):
        np.testing.assert_allclose(got[output.name], w, rtol=1e-6, err_msg=output.name)


def test_slice_to_reads_back_from_ir_xml(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.frontends.ir_xml import read_ir_xml

    proto, inputs = run_time_slice_model(), feeds(3)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    model = read_ir_xml(tmp_path / "m.xml")
    assert [op.name for op in model.func.body.block.ops].count("nn.slice_to") == 3
    got = run(model, inputs)
    for output, w in zip(proto.graph.output, ort_session_run(proto, inputs)):
        np.testing.assert_allclose(got[output.name], w, rtol=1e-6, err_msg=output.name)


def run_time_split_model(outputs: int):  # type: ignore[no-untyped-def]
    """Split of a [8, 3] table along axis 0 by lengths computed at run time: [count, 8 - count]
    (count = kept scores, NonZero) or [8] for one output."""
    nodes = [
        helper.make_node("Greater", ["s", "zero_f"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["nz"]),
        helper.make_node("Shape", ["nz"], ["nz_dims"]),
        helper.make_node("Gather", ["nz_dims", "one"], ["count"], axis=0),
        helper.make_node("Sub", ["eight", "count"], ["rest"]),
        helper.make_node("Concat", ["count", "rest"], ["both"], axis=0),
    ]
    if outputs == 1:
        nodes.append(helper.make_node("ReduceSum", ["both"], ["total"], keepdims=1))
    nodes.append(helper.make_node("Split", ["table", "both" if outputs == 2 else "total"], [f"part{i}" for i in range(outputs)], axis=0))
    initializers = [("zero_f", np.float32(0.0)), ("one", np.array([1], np.int64)), ("eight", np.array([8], np.int64))]
    inputs = [("s", FLOAT, [8]), ("table", FLOAT, [8, 3])]
    return make(nodes, inputs, [(f"part{i}", FLOAT) for i in range(outputs)], initializers, opset=17)


@pytest.mark.parametrize("outputs", [1, 2])
def test_split_by_run_time_lengths_runs_on_ref_and_cpu(outputs):
    check(run_time_split_model(outputs), feeds(7))


def test_split_by_run_time_lengths_runs_in_openvino(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto, inputs = run_time_split_model(2), feeds(8)
    want = ort_session_run(proto, inputs)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", inputs)
    for output, w in zip(proto.graph.output, want):
        np.testing.assert_allclose(got[output.name], w, rtol=1e-6, err_msg=output.name)
