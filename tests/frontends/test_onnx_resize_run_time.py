"""ONNX Resize whose sizes are computed at run time (torchvision's Mask R-CNN pastes each
mask resized to its box's size, Keypoint R-CNN resizes each heatmap so, inside a Loop):
nn.resample_to, run on ref and cpu (a host step) and in OpenVINO (Interpolate-11 by sizes,
a non-constant sizes input); the static sizes among the run-time ones stay static dims."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from irforge.frontends.onnx import import_onnx
from tests.frontends.test_onnx_dynamic_shapes import FLOAT, check, make
from tests.helpers import ort_session_run

INT64 = helper.TensorProto.INT64


def run_time_resize_model(mode: str, coordinates: str, axes: list[int] | None = None):  # type: ignore[no-untyped-def]
    """A [1, 2, 5, 7] map resized to [1, 2, 1 + h, 1 + w] where h, w are inputs (as a box's
    integer size); with `axes` only those (the last two) are given."""
    attrs = {"mode": mode, "coordinate_transformation_mode": coordinates}
    if mode == "nearest":
        attrs["nearest_mode"] = "floor"
    if axes is not None:
        attrs["axes"] = axes
    nodes = [
        helper.make_node("Add", ["hw", "one"], ["grown"]),
        helper.make_node("Shape", ["x"], ["dims"], end=2),
        helper.make_node("Concat", ["grown"] if axes else ["dims", "grown"], ["sizes"], axis=0),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs),
    ]
    inputs = [("x", FLOAT, [1, 2, 5, 7]), ("hw", INT64, [2])]
    return make(nodes, inputs, [("y", FLOAT)], [("one", np.array([1], np.int64))], opset=18 if axes else 17)


def feeds(h: int, w: int) -> dict[str, np.ndarray]:
    x = np.random.default_rng(h * 10 + w).standard_normal((1, 2, 5, 7)).astype(np.float32)
    return {"x": x, "hw": np.array([h, w], np.int64)}


CASES = [("linear", "half_pixel"), ("linear", "align_corners"), ("nearest", "asymmetric"), ("cubic", "pytorch_half_pixel")]


@pytest.mark.parametrize("mode,coordinates", CASES)
@pytest.mark.parametrize("hw", [(2, 11), (9, 3)])
def test_resample_to_run_time_sizes_runs_on_ref_and_cpu(mode, coordinates, hw):
    model = check(run_time_resize_model(mode, coordinates), feeds(*hw))
    op = [op for op in model.func.body.block.ops if op.name == "nn.resample_to"]
    assert len(op) == 1 and str(op[0].results[0].type) == "tensor<1x2x?x?xf32>" and op[0].ints("axes") == (2, 3)


def test_resample_to_with_axes():
    check(run_time_resize_model("linear", "half_pixel", axes=[2, 3]), feeds(4, 6))


@pytest.mark.parametrize("mode,coordinates", CASES[:3])
def test_resample_to_runs_in_openvino(tmp_path, mode, coordinates):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto, inputs = run_time_resize_model(mode, coordinates), feeds(6, 13)
    want = ort_session_run(proto, inputs)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", inputs)
    np.testing.assert_allclose(got["y"], want[0], rtol=1e-5, atol=1e-6)


def test_resample_to_reads_back_from_ir_xml(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.frontends.ir_xml import read_ir_xml

    proto, inputs = run_time_resize_model("linear", "half_pixel"), feeds(3, 4)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    model = read_ir_xml(tmp_path / "m.xml")
    assert "nn.resample_to" in [op.name for op in model.func.body.block.ops]
    np.testing.assert_allclose(run(model, inputs)["y"], ort_session_run(proto, inputs)[0], rtol=1e-5, atol=1e-6)
