"""ONNX GridSample (opset 16 and 20 names) against onnxruntime on ref and cpu, and through our
IR on OpenVINO's GridSample-9 (and OpenVINO-written IR read back): every mode x padding_mode x align_corners, with grids reaching
outside [-1, 1]; the extractor's refusals of unsupported attributes and of 5-D inputs."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

RNG = np.random.default_rng(16)
X = RNG.standard_normal((2, 3, 5, 7)).astype(np.float32)
GRID = RNG.uniform(-1.6, 1.6, (2, 4, 6, 2)).astype(np.float32)
# exact pixel centres and half-way points (nearest's ties round half to even), the borders
GRID[0, 0, :, 0] = [-1.0, 1.0, 0.0, -2 / 7, 1 / 7, 3.0]
GRID[0, 0, :, 1] = [-1.0, 1.0, -0.5, 0.25, -1.25, -3.0]
FEEDS = {"x": X, "grid": GRID}


def grid_sample_model(opset=16, x_shape=(2, 3, 5, 7), grid_shape=(2, 4, 6, 2), **attrs):  # type: ignore[no-untyped-def]
    node = helper.make_node("GridSample", ["x", "grid"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape)),
         helper.make_tensor_value_info("grid", TensorProto.FLOAT, list(grid_shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


MODES16 = {"bilinear": "linear", "nearest": "nearest", "bicubic": "cubic"}
CASES = [
    pytest.param(mode, padding, align, id=f"{mode}-{padding}-align{align}")
    for mode in MODES16 for padding in ("zeros", "border", "reflection") for align in (0, 1)
]  # fmt: skip


@pytest.mark.parametrize(("mode", "padding", "align"), CASES)
def test_grid_sample_matches_onnxruntime_on_ref_and_cpu(mode, padding, align):
    proto = grid_sample_model(mode=mode, padding_mode=padding, align_corners=align)
    (want,) = ort_session_run(proto, FEEDS)
    model = import_onnx(proto)
    np.testing.assert_allclose(run(model, FEEDS)["y"], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(compile_model(model)(FEEDS)["y"], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["linear", "nearest", "cubic"])
def test_grid_sample_opset20_names_match_onnxruntime(mode):
    proto = grid_sample_model(opset=20, mode=mode, padding_mode="reflection", align_corners=0)
    (want,) = ort_session_run(proto, FEEDS)
    np.testing.assert_allclose(run(import_onnx(proto), FEEDS)["y"], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("mode", "padding", "align"), CASES)
def test_grid_sample_through_openvino_matches_onnxruntime(tmp_path, mode, padding, align):
    from tests.backends.ir_xml_support import run_openvino

    proto = grid_sample_model(mode=mode, padding_mode=padding, align_corners=align)
    (want,) = ort_session_run(proto, FEEDS)
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    assert 'type="GridSample"' in xml.read_text()
    np.testing.assert_allclose(run_openvino(xml, FEEDS)["y"], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("attrs", "named"),
    [({"mode": "area"}, "mode='area'"), ({"padding_mode": "wrap"}, "padding_mode='wrap'"), ({"align_corners": 2}, "align_corners=2")],
)
def test_grid_sample_unsupported_attribute_names_it(attrs, named):
    with pytest.raises(IrforgeError) as err:
        import_onnx(grid_sample_model(**attrs))
    assert err.value.code == "E189" and named in err.value.what and "GridSample" in err.value.what


def test_grid_sample_of_rank_6_is_refused():
    proto = grid_sample_model(opset=20, x_shape=(1, 2, 3, 4, 5, 6), grid_shape=(1, 2, 3, 4, 5, 4), mode="linear")
    with pytest.raises(IrforgeError) as err:
        import_onnx(proto)
    assert err.value.code == "E189" and "rank-6" in err.value.what


def test_grid_sample_runs_on_opencl_through_the_hetero_fallback():
    from irforge.backends.opencl import compile_model as compile_opencl

    proto = grid_sample_model(mode="bilinear", padding_mode="border", align_corners=0)
    (want,) = ort_session_run(proto, FEEDS)
    compiled = compile_opencl(import_onnx(proto))
    assert [f.op.split()[0] for f in compiled.fallbacks] == ["nn.grid_sample"]
    np.testing.assert_allclose(compiled(FEEDS)["y"], want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("mode", "padding", "align"), [("bicubic", "reflection", 1), ("nearest", "border", 0), ("bilinear", "zeros", 0)])
def test_grid_sample_in_ir_written_by_openvino_reads_back(tmp_path, mode, padding, align):
    """OpenVINO's own ONNX conversion, saved as IR, read by irforge's GridSample reader."""
    import openvino as ov

    from irforge.frontends.ir_xml import read_ir_xml

    proto = grid_sample_model(mode=mode, padding_mode=padding, align_corners=align)
    (want,) = ort_session_run(proto, FEEDS)
    onnx_path, xml = tmp_path / "m.onnx", tmp_path / "m.xml"
    onnx_path.write_bytes(proto.SerializeToString())
    ov.save_model(ov.convert_model(str(onnx_path)), str(xml), compress_to_fp16=False)
    assert 'type="GridSample"' in xml.read_text()
    (got,) = run(read_ir_xml(xml), FEEDS).values()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
