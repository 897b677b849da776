"""ONNX RoiAlign against onnxruntime on ref and cpu: avg and max mode (onnxruntime's max of
the weighted corner terms of each sample), half_pixel and output_half_pixel, fixed and
adaptive sampling; OpenVINO through our IR for avg, and the IR writer's refusal of max (OpenVINO's
max mode computes other numbers)."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

RNG = np.random.default_rng(14)
FEEDS = {
    "x": RNG.standard_normal((2, 3, 8, 9)).astype(np.float32),
    # inside, partly outside (sample beyond one pixel out gives 0), and smaller than a pixel
    "rois": np.array([[0, 0, 10, 10], [2, 3, 15, 12], [-4, -3, 5, 20], [1, 1, 2, 3]], np.float32),
    "b": np.array([0, 1, 1, 0], np.int64),
}


def roi_align_model(**attrs):  # type: ignore[no-untyped-def]
    node = helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], output_height=3, output_width=2, spatial_scale=0.5, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 9]),
         helper.make_tensor_value_info("rois", TensorProto.FLOAT, [4, 4]), helper.make_tensor_value_info("b", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


CASES = [
    pytest.param(mode, transform, ratio, id=f"{mode}-{transform}-ratio{ratio}")
    for mode in ("avg", "max") for transform in ("half_pixel", "output_half_pixel") for ratio in (0, 2)
]  # fmt: skip


@pytest.mark.parametrize(("mode", "transform", "ratio"), CASES)
def test_roi_align_matches_onnxruntime_on_ref_and_cpu(mode, transform, ratio):
    proto = roi_align_model(mode=mode, coordinate_transformation_mode=transform, sampling_ratio=ratio)
    (want,) = ort_session_run(proto, FEEDS)
    model = import_onnx(proto)
    np.testing.assert_allclose(run(model, FEEDS)["y"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(compile_model(model)(FEEDS)["y"], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("transform", ["half_pixel", "output_half_pixel"])
def test_roi_align_avg_through_openvino_matches_onnxruntime(tmp_path, transform):
    from tests.backends.ir_xml_support import run_openvino

    proto = roi_align_model(mode="avg", coordinate_transformation_mode=transform, sampling_ratio=0)
    (want,) = ort_session_run(proto, FEEDS)
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    np.testing.assert_allclose(run_openvino(xml, FEEDS)["y"], want, rtol=1e-4, atol=1e-5)


def test_roi_align_max_is_refused_by_the_ir_writer(tmp_path):
    model = import_onnx(roi_align_model(mode="max", sampling_ratio=2))
    with pytest.raises(IrforgeError) as err:
        write_ir_xml(model, tmp_path / "m.xml")
    assert err.value.code == "E680" and "mode 'max'" in err.value.what
    assert not (tmp_path / "m.xml").exists()


def test_roi_align_unknown_mode_names_the_attribute():
    with pytest.raises(IrforgeError, match="mode='median'") as err:
        import_onnx(roi_align_model(mode="median"))
    assert err.value.code == "E180"
