"""ONNX Pad whose pads are computed at run time (Ultralytics YOLO exported with nms=True pads
its kept detections to a fixed count by Shape/Sub/Concat of a data-dependent size):
nn.pad_by, run on ref and cpu (a host step in the segmented model) and in OpenVINO (Pad-12
with pads_begin / pads_end sliced from the run-time vector); constant pads stay nn.pad."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.frontends.test_onnx_dynamic_shapes import FLOAT, check, make
from tests.helpers import ort_session_run


def run_time_pad_model(columns: int = 3, crop: bool = True):  # type: ignore[no-untyped-def]
    """count = kept scores (NonZero); the first count rows of a [8, 3] table padded back to 8
    rows with 0.5 (YOLO's nms=True tail), the table padded by 8 - count edge rows after it
    and min(count, 2) edge columns before it, by min(count, 2) reflected rows and columns
    before it and a column after it, and cropped by min(count, 3) leading rows
    (a negative pad); opset 18's axes pad the columns only."""
    nodes = [
        helper.make_node("Greater", ["s", "zero_f"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["nz"]),
        helper.make_node("Shape", ["nz"], ["nz_dims"]),
        helper.make_node("Gather", ["nz_dims", "one"], ["count"], axis=0),
        helper.make_node("Slice", ["table", "zero", "count", "zero"], ["kept"]),
        helper.make_node("Shape", ["kept"], ["kept_dims"]),
        helper.make_node("Gather", ["kept_dims", "zero"], ["rows"], axis=0),
        helper.make_node("Sub", ["eight", "rows"], ["rest"]),
        helper.make_node("Concat", ["zero", "zero", "rest", "zero"], ["fill_pads"], axis=0),
        helper.make_node("Pad", ["kept", "fill_pads", "half"], ["filled"], mode="constant"),
        helper.make_node("Min", ["count", "two"], ["two_at_most"]),
        helper.make_node("Concat", ["zero", "two_at_most", "rest", "zero"], ["edge_pads"], axis=0),
        helper.make_node("Pad", ["table", "edge_pads"], ["edged"], mode="edge"),
        helper.make_node("Concat", ["two_at_most", "two_at_most", "zero", "one"], ["reflect_pads"], axis=0),
        helper.make_node("Pad", ["table", "reflect_pads"], ["reflected"], mode="reflect"),
        helper.make_node("Min", ["count", "three"], ["three_at_most"]),
        helper.make_node("Neg", ["three_at_most"], ["crop"]),
        helper.make_node("Concat", ["crop", "zero", "zero", "one"], ["crop_pads"], axis=0),
        helper.make_node("Pad", ["table", "crop_pads"], ["cropped"], mode="constant"),
        helper.make_node("Concat", ["two_at_most", "one"], ["column_pads"], axis=0),
        helper.make_node("Pad", ["table", "column_pads", "", "axis_one"], ["columns"], mode="reflect"),
    ]
    initializers = [("zero_f", np.float32(0.0)), ("half", np.float32(0.5)), ("zero", np.array([0], np.int64)),
                    ("one", np.array([1], np.int64)), ("two", np.array([2], np.int64)), ("three", np.array([3], np.int64)),
                    ("eight", np.array([8], np.int64)), ("axis_one", np.array([-1], np.int64))]  # fmt: skip
    inputs = [("s", FLOAT, [8]), ("table", FLOAT, [8, columns])]
    outputs = [(name, FLOAT) for name in ("filled", "edged", "reflected", "cropped", "columns")]
    if not crop:  # OpenVINO finds no bounds for a Neg's output: it leaves every dim of that Pad dynamic
        nodes = [n for n in nodes if n.output[0] not in ("three_at_most", "crop", "crop_pads", "cropped")]
        outputs = [o for o in outputs if o[0] != "cropped"]
    return make(nodes, inputs, outputs, initializers, opset=18)


def feeds(seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"s": rng.standard_normal(8).astype(np.float32), "table": rng.standard_normal((8, 3)).astype(np.float32)}


@pytest.mark.parametrize("seed", [0, 5])
def test_pad_by_run_time_pads_runs_on_ref_and_cpu(seed):
    model = check(run_time_pad_model(), feeds(seed))
    names = [op.name for op in model.func.body.block.ops]
    assert names.count("nn.pad_by") == 5 and "nn.pad" not in names


def test_pad_by_nothing_kept_pads_all_rows():
    inputs = feeds(1)
    inputs["s"] = -np.abs(inputs["s"])  # count 0: an empty table padded to 8 rows, no crop
    check(run_time_pad_model(), inputs)


@pytest.mark.parametrize("crop", [False, True])
def test_pad_by_runs_in_openvino(tmp_path, crop):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto, inputs = run_time_pad_model(crop=crop), feeds(2)
    want = ort_session_run(proto, inputs)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    # the written dims equal OpenVINO's but for the crop's (nn.pad_by keeps the dims whose
    # pads are known; OpenVINO evaluates no bounds through Neg, so drops them all)
    got = run_openvino(tmp_path / "m.xml", inputs, check_dims=not crop)
    for output, w in zip(proto.graph.output, want):
        assert got[output.name].shape == w.shape, output.name
        np.testing.assert_allclose(got[output.name], w, rtol=1e-6, err_msg=output.name)


def test_pad_by_reads_back_from_ir_xml(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.frontends.ir_xml import read_ir_xml

    proto, inputs = run_time_pad_model(), feeds(3)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    model = read_ir_xml(tmp_path / "m.xml")
    assert [op.name for op in model.func.body.block.ops].count("nn.pad_by") == 5
    got = run(model, inputs)
    for output, w in zip(proto.graph.output, ort_session_run(proto, inputs)):
        np.testing.assert_allclose(got[output.name], w, rtol=1e-6, err_msg=output.name)


def test_pad_by_reflect_past_the_dim_is_a_coded_error():
    from irforge.backends.reference import run

    inputs = feeds(4)
    inputs["s"] = np.abs(inputs["s"])  # count 8: 2 reflected columns of a 2-column table
    inputs["table"] = inputs["table"][:, :2].copy()
    with pytest.raises(IrforgeError, match="reflect padding of 2 does not fit dim 1 of size 2") as caught:
        run(import_onnx(run_time_pad_model(columns=2)), inputs)
    assert caught.value.code == "E152"


def test_pad_by_wrap_mode_is_refused_by_name():
    proto = run_time_pad_model()
    edged = next(n for n in proto.graph.node if n.output[0] == "edged")
    edged.attribute[0].s = b"wrap"
    with pytest.raises(IrforgeError, match="pads .* must be known at conversion time for Pad mode 'wrap'") as caught:
        import_onnx(proto)
    assert caught.value.code == "E142"


def test_pad_by_on_opencl_falls_back_to_the_host():
    pytest.importorskip("pyopencl")
    from irforge.backends.opencl import compile_model as compile_opencl
    from irforge.backends.opencl.device import _all_devices

    if not _all_devices():
        pytest.skip("no OpenCL device")
    model = check(run_time_pad_model(), feeds(6), devices=("gpu",))
    reasons = [f.reason for f in compile_opencl(model).fallbacks if f.op.startswith("nn.pad_by")]
    assert len(reasons) == 5 and all(r == "data-dependent shape" for r in reasons), reasons


def test_openvino_pad_with_run_time_halves_reads_as_pad_by(tmp_path):
    """A Pad-12 as OpenVINO writes one: i32 pads_begin / pads_end built apart from a NonZero
    count (not cut from one vector): read as a Concat (+ Convert to i64) -> nn.pad_by."""
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset3 as o3
    import openvino.opset8 as o8
    import openvino.opset12 as o12

    from irforge.backends.reference import run
    from irforge.frontends.ir_xml import read_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    x = np.random.default_rng(9).standard_normal((2, 3, 5)).astype(np.float32)
    param = o1.parameter(list(x.shape), np.float32, name="x")
    param.output(0).get_tensor().set_names({"x"})
    count = o8.gather(o3.shape_of(o3.non_zero(o1.greater(param, o1.constant(np.float32(0.0))), "i32"), "i32"),
                      o1.constant(np.array([1], np.int32)), o1.constant(np.int32(0)))
    two = o1.minimum(count, o1.constant(np.array([2], np.int32)))
    zero, one = o1.constant(np.array([0], np.int32)), o1.constant(np.array([1], np.int32))
    begin = o1.concat([zero, two, one], 0)
    end = o1.concat([one, zero, o1.negative(two)], 0)  # crops up to 2 trailing columns
    pad = o12.pad(param, begin, end, "constant", o1.constant(np.float32(0.25)))
    pad.output(0).get_tensor().set_names({"y"})
    ov.save_model(ov.Model([o1.result(pad)], [param], "m"), str(tmp_path / "ov.xml"))
    model = read_ir_xml(tmp_path / "ov.xml")
    assert [op.name for op in model.func.body.block.ops].count("nn.pad_by") == 1
    want = run_openvino(tmp_path / "ov.xml", {"x": x}, check_dims=False)["y"]
    got = run(model, {"x": x})["y"]
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_pad_by_axes_named_twice_are_refused_by_name():
    nodes = [helper.make_node("Shape", ["x"], ["dims"]), helper.make_node("Concat", ["dims", "dims"], ["pads"], axis=0),
             helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"])]
    proto = make(nodes, [("x", FLOAT, ["n", 2])], [("y", FLOAT)], [("axes", np.array([1, -1], np.int64))], opset=18)
    with pytest.raises(IrforgeError, match=r"axes \[1, -1\] name an axis twice"):
        import_onnx(proto)
