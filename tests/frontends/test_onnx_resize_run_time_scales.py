"""ONNX Resize (and Upsample-9) whose scales are computed at run time (F.interpolate with a
scale_factor computed from data or shapes): nn.resample_by, run on ref and cpu (a host
step) and in OpenVINO (Interpolate-11 with shape_calculation_mode "scales" and a
non-constant scales input), read back from IR XML; every mode against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.frontends.test_onnx_dynamic_shapes import FLOAT, check, make
from tests.helpers import ort_session_run


def run_time_scales_model(attrs: dict, rank: int = 4, axes: list[int] | None = None, op: str = "Resize"):  # type: ignore[type-arg, no-untyped-def]
    """x [1, 2, 5, 7] (or [1, 2, 3, 5, 7]) resized by scales Concat([1, 1], 0.5 + s) where s
    is an input; with `axes` only the scales of those axes are given."""
    shape = [1, 2, 5, 7] if rank == 4 else [1, 2, 3, 5, 7]
    spatial = rank - 2
    nodes = [helper.make_node("Add", ["s", "half"], ["grown"])]
    if axes is None:
        nodes.append(helper.make_node("Concat", ["ones", "grown"], ["scales"], axis=0))
    else:
        nodes.append(helper.make_node("Identity", ["grown"], ["scales"]))
        attrs = {**attrs, "axes": axes}
    inputs_of = ["x", "scales"] if op == "Upsample" else ["x", "", "scales"]
    nodes.append(helper.make_node(op, inputs_of, ["y"], **attrs))
    inits = [("half", np.full(spatial, 0.5, np.float32)), ("ones", np.ones(2, np.float32))]
    opset = 9 if op == "Upsample" else (18 if axes else 13)
    return make(nodes, [("x", FLOAT, shape), ("s", FLOAT, [spatial])], [("y", FLOAT)], inits, opset=opset)


def feeds(scales: tuple[float, ...], rank: int = 4) -> dict[str, np.ndarray]:
    shape = (1, 2, 5, 7) if rank == 4 else (1, 2, 3, 5, 7)
    x = np.random.default_rng(len(scales) + int(10 * scales[0])).standard_normal(shape).astype(np.float32)
    return {"x": x, "s": np.asarray(scales, np.float32) - np.float32(0.5)}


NEAREST = [{"mode": "nearest", "nearest_mode": n, "coordinate_transformation_mode": c}
           for n in ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
           for c in ("half_pixel", "asymmetric", "tf_half_pixel_for_nn")]  # fmt: skip
LINEAR = [{"mode": "linear", "coordinate_transformation_mode": c}
          for c in ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel")]  # fmt: skip
CUBIC = [{"mode": "cubic", "coordinate_transformation_mode": c, "cubic_coeff_a": a}
         for c, a in (("half_pixel", -0.75), ("align_corners", -0.5), ("asymmetric", -0.75), ("pytorch_half_pixel", -0.5))]  # fmt: skip
MODES = NEAREST + LINEAR + CUBIC
SCALES = [(2.0, 1.5), (0.6, 2.25)]


def ident(attrs: dict) -> str:  # type: ignore[type-arg]
    return "-".join(str(v) for v in attrs.values())


@pytest.mark.parametrize("attrs", MODES, ids=ident)
def test_resample_by_run_time_scales_on_ref_and_cpu(attrs):
    for scales in SCALES:
        model = check(run_time_scales_model(attrs), feeds(scales))
    ops = [op for op in model.func.body.block.ops if op.name == "nn.resample_by"]
    # the constant scales of N and C are known: those dims stay static
    assert len(ops) == 1 and str(ops[0].results[0].type) == "tensor<1x2x?x?xf32>"


@pytest.mark.parametrize("attrs", NEAREST[:3] + LINEAR + CUBIC[:2], ids=ident)
def test_resample_by_runs_in_openvino(tmp_path, attrs):
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    for i, scales in enumerate(SCALES):
        proto, inputs = run_time_scales_model(attrs), feeds(scales)
        want = ort_session_run(proto, inputs)
        write_ir_xml(import_onnx(proto), tmp_path / f"m{i}.xml")
        got = run_openvino(tmp_path / f"m{i}.xml", inputs)
        np.testing.assert_allclose(got["y"], want[0], rtol=1e-5, atol=1e-5, err_msg=str(scales))


def test_resample_by_with_axes_and_upsample():
    check(run_time_scales_model({"mode": "linear"}, axes=[2, 3]), feeds((1.5, 0.8)))
    check(run_time_scales_model({"mode": "nearest"}, op="Upsample"), feeds((2.0, 3.0)))
    check(run_time_scales_model({"mode": "linear"}, op="Upsample"), feeds((2.0, 1.5)))


@pytest.mark.parametrize("attrs", [{"mode": "nearest"}, {"mode": "linear"}, {"mode": "linear", "coordinate_transformation_mode": "align_corners"}], ids=ident)
def test_resample_by_volumetric(tmp_path, attrs):
    """5-D (trilinear, as 3-D UNets' upsampling) by run-time scales, ref, cpu and OpenVINO."""
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto, inputs = run_time_scales_model(attrs, rank=5), feeds((2.0, 1.5, 0.6), rank=5)
    check(proto, inputs)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    np.testing.assert_allclose(run_openvino(tmp_path / "m.xml", inputs)["y"], ort_session_run(proto, inputs)[0], rtol=1e-5, atol=1e-5)


def test_resample_by_reads_back_from_ir_xml(tmp_path):
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from irforge.frontends.ir_xml import read_ir_xml

    proto, inputs = run_time_scales_model(LINEAR[0]), feeds((1.5, 2.5))
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    model = read_ir_xml(tmp_path / "m.xml")
    assert "nn.resample_by" in [op.name for op in model.func.body.block.ops]
    np.testing.assert_allclose(run(model, inputs)["y"], ort_session_run(proto, inputs)[0], rtol=1e-5, atol=1e-6)


def test_resample_by_non_positive_scale_is_e889():
    from irforge.backends.reference import run

    model = import_onnx(run_time_scales_model(LINEAR[0]))
    with pytest.raises(IrforgeError) as e:
        run(model, feeds((0.0, 2.0)))
    assert e.value.code == "E889" and "not > 0" in e.value.what


@pytest.mark.parametrize("attrs", [{"mode": "nearest"}, {"mode": "linear"}, {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
                                   {"mode": "nearest", "nearest_mode": "floor", "coordinate_transformation_mode": "asymmetric"}], ids=ident)  # fmt: skip
@pytest.mark.parametrize("by", ["scales", "sizes"])
def test_resample_volumetric_constant(tmp_path, attrs, by):
    """5-D Resize with constant scales or sizes (3-D UNets' trilinear upsampling): nn.resample
    on ref, cpu and OpenVINO (onnxruntime has no 5-D cubic: not compared)."""
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    target = (np.array([1, 1, 2, 1.5, 0.6], np.float32) if by == "scales" else np.array([1, 2, 6, 7, 4], np.int64))
    inputs_of = ["x", "", "target"] if by == "scales" else ["x", "", "", "target"]
    proto = make([helper.make_node("Resize", inputs_of, ["y"], **attrs)], [("x", FLOAT, [1, 2, 3, 5, 7])], [("y", FLOAT)], [("target", target)], opset=13)
    inputs = {"x": np.random.default_rng(5).standard_normal((1, 2, 3, 5, 7)).astype(np.float32)}
    check(proto, inputs)
    write_ir_xml(import_onnx(proto), tmp_path / "m.xml")
    np.testing.assert_allclose(run_openvino(tmp_path / "m.xml", inputs)["y"], ort_session_run(proto, inputs)[0], rtol=1e-5, atol=1e-5)


def test_resample_by_runs_on_opencl_through_the_hetero_fallback():
    from irforge.backends.opencl import compile_model as compile_opencl

    proto, inputs = run_time_scales_model(LINEAR[0]), feeds((1.5, 2.5))
    compiled = compile_opencl(import_onnx(proto))
    assert "nn.resample_by" in [f.op.split()[0] for f in compiled.fallbacks]
    np.testing.assert_allclose(compiled(inputs)["y"], ort_session_run(proto, inputs)[0], rtol=1e-5, atol=1e-5)
