"""ONNX DeformConv-19 against onnxruntime on ref and cpu, and through our IR on OpenVINO's
DeformableConvolution-8 (and OpenVINO-written IR read back): with and without mask and bias,
offset_group 1 and 2, groups 2, stride 2, pads, dilation 2, offsets reaching outside the
input; the extractor's refusals."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run


def _out(size: int, k: int, s: int, d: int, pads: int) -> int:
    return (size + pads - d * (k - 1) - 1) // s + 1


def deform_model(c=4, o=6, k=(3, 3), hw=(7, 8), group=1, offset_group=1, mask=True, bias=True, strides=(1, 1),
                 pads=(1, 1, 1, 1), dilations=(1, 1), seed=0, **extra):  # type: ignore[no-untyped-def]
    """A DeformConv with constant weights (and bias) and x / offset / mask as graph inputs; its feeds."""
    rng = np.random.default_rng(seed)
    ho = _out(hw[0], k[0], strides[0], dilations[0], pads[0] + pads[2])
    wo = _out(hw[1], k[1], strides[1], dilations[1], pads[1] + pads[3])
    taps = offset_group * k[0] * k[1]
    feeds = {"x": rng.standard_normal((2, c, *hw)).astype(np.float32),
             # offsets up to 2.5 pixels: taps reach outside the input and across pixel borders
             "offset": rng.uniform(-2.5, 2.5, (2, 2 * taps, ho, wo)).astype(np.float32)}
    inputs = ["x", "w", "offset", "b" if bias else "", "mask" if mask else ""]
    while inputs[-1] == "":
        inputs.pop()
    inits = [numpy_helper.from_array(rng.standard_normal((o, c // group, *k)).astype(np.float32), "w")]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(o).astype(np.float32), "b"))
    if mask:
        feeds["mask"] = rng.uniform(0, 1, (2, taps, ho, wo)).astype(np.float32)
    node = helper.make_node("DeformConv", inputs, ["y"], group=group, offset_group=offset_group, strides=list(strides),
                            pads=list(pads), dilations=list(dilations), **extra)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape)) for n, v in feeds.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), feeds


CASES = {
    "v2-mask-bias": {},
    "v1-no-mask": {"mask": False},
    "no-bias": {"bias": False},
    "v1-no-mask-no-bias": {"mask": False, "bias": False},
    "offset-group-2": {"offset_group": 2},
    "groups-2": {"group": 2},
    "groups-2-offset-group-2": {"group": 2, "offset_group": 2, "mask": False},
    "stride-2": {"strides": (2, 2)},
    "pads-asymmetric": {"pads": (0, 2, 1, 0)},
    "dilation-2": {"dilations": (2, 2), "pads": (2, 2, 2, 2)},
    "kernel-2x3-stride-2-1": {"k": (2, 3), "strides": (2, 1), "pads": (0, 0, 0, 0), "kernel_shape": [2, 3]},
}


@pytest.mark.parametrize("name", list(CASES))
def test_deform_conv_matches_onnxruntime_on_ref_and_cpu(name):
    proto, feeds = deform_model(**CASES[name])
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(compile_model(model)(feeds)["y"], want, rtol=1e-4, atol=1e-4)


def test_deform_conv_with_zero_offsets_is_a_convolution():
    """Zero offsets and a mask of ones: exactly Conv (an independent check of the layout)."""
    proto, feeds = deform_model(group=2, strides=(2, 1), dilations=(2, 1), pads=(2, 1, 1, 1))
    feeds["offset"][:] = 0
    feeds["mask"][:] = 1
    (want,) = ort_session_run(proto, feeds)
    conv = helper.make_node("Conv", ["x", "w", "b"], ["y"], group=2, strides=[2, 1], pads=[2, 1, 1, 1], dilations=[2, 1])
    g = proto.graph
    conv_graph = helper.make_graph([conv], "c", [g.input[0]], list(g.output), list(g.initializer))
    (conv_want,) = ort_session_run(helper.make_model(conv_graph, opset_imports=[helper.make_opsetid("", 19)]), {"x": feeds["x"]})
    np.testing.assert_allclose(want, conv_want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run(import_onnx(proto), feeds)["y"], conv_want, rtol=1e-5, atol=1e-5)


OV_CASES = ["v2-mask-bias", "v1-no-mask-no-bias", "groups-2-offset-group-2", "stride-2", "dilation-2", "pads-asymmetric"]


@pytest.mark.parametrize("name", OV_CASES)
def test_deform_conv_through_openvino_matches_onnxruntime(tmp_path, name):
    """Our IR (DeformableConvolution-8 with bilinear_interpolation_pad true) on OpenVINO, and read back on ref."""
    from irforge.frontends.ir_xml import read_ir_xml
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = deform_model(**CASES[name])
    (want,) = ort_session_run(proto, feeds)
    xml = tmp_path / "m.xml"
    write_ir_xml(import_onnx(proto), xml)
    text = xml.read_text()
    assert 'type="DeformableConvolution"' in text and 'version="opset8"' in text and 'bilinear_interpolation_pad="true"' in text
    np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, rtol=1e-4, atol=1e-4)
    (got,) = run(read_ir_xml(xml), feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("version", "pad"), [("opset8", False), ("opset8", True), ("opset1", False)])
def test_deformable_convolution_written_by_openvino_reads_back(tmp_path, pad, version):
    """OpenVINO's own DeformableConvolution (-8 with either bilinear_interpolation_pad, -1
    without a mask), saved as IR, read by irforge: ref and cpu against OpenVINO's CPU plugin."""
    import openvino as ov
    import openvino.opset1 as o1
    import openvino.opset8 as o8

    from irforge.frontends.ir_xml import read_ir_xml

    proto, feeds = deform_model(group=2, offset_group=2, strides=(2, 1), dilations=(1, 2), pads=(1, 2, 0, 2), mask=version == "opset8", bias=False)
    w = numpy_helper.to_array(proto.graph.initializer[0])
    params = [o8.parameter(v.shape, np.float32, name=n) for n, v in feeds.items()]
    window = ([2, 1], [1, 2], [0, 2], [1, 2])  # strides, pads_begin, pads_end, dilations
    if version == "opset8":
        y = o8.deformable_convolution(params[0], params[1], o8.constant(w), *window, mask=params[2], group=2, deformable_group=2,
                                      bilinear_interpolation_pad=pad)
    else:
        y = o1.deformable_convolution(params[0], params[1], o8.constant(w), *window, group=2, deformable_group=2)
    model = ov.Model([y], params)
    compiled = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
    want = compiled(list(feeds.values()))[0]
    xml = tmp_path / "ov.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    assert 'type="DeformableConvolution"' in xml.read_text()
    ours = read_ir_xml(xml)
    (got,) = run(ours, feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    (got_cpu,) = compile_model(ours)(feeds).values()
    np.testing.assert_allclose(got_cpu, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("device", ["ref", "cpu"])
def test_onnx_node_suite_deform_conv_cases_pass(device):
    from irforge.frontends.onnx.conformance import node_cases, run_case
    from irforge.tools.ir_conformance import executor

    cases = [case for case in node_cases() if "deform_conv" in case.name]
    assert len(cases) >= 4
    outcomes = {case.name: run_case(case, executor(device)) for case in cases}
    assert all(o.passed for o in outcomes.values()), {n: o.message for n, o in outcomes.items() if not o.passed}


def test_deform_conv_runs_on_opencl_through_the_hetero_fallback():
    from irforge.backends.opencl import compile_model as compile_opencl

    proto, feeds = deform_model(offset_group=2)
    (want,) = ort_session_run(proto, feeds)
    compiled = compile_opencl(import_onnx(proto))
    assert "nn.deformable_convolution" in [f.op.split()[0] for f in compiled.fallbacks]
    np.testing.assert_allclose(compiled(feeds)["y"], want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("attrs", "code", "named"),
    [({"strides": (0, 1)}, "E134", "strides=[0, 1]"), ({"dilations": (1,)}, "E134", "dilations=[1]"),
     ({"pads": (1, 1)}, "E134", "pads=[1, 1]"), ({"kernel_shape": [2, 2]}, "E134", "kernel_shape=[2, 2]")],
)
def test_deform_conv_unsupported_attribute_names_it(attrs, code, named):
    proto, _ = deform_model()
    node = proto.graph.node[0]
    for name, value in attrs.items():
        kept = [a for a in node.attribute if a.name != name]
        del node.attribute[:]
        node.attribute.extend([*kept, helper.make_attribute(name, list(value))])
    with pytest.raises(IrforgeError) as err:
        import_onnx(proto)
    assert err.value.code == code and named in err.value.what and "DeformConv" in err.value.what


def test_deform_conv_1d_is_refused():
    node = helper.make_node("DeformConv", ["x", "w", "offset"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5]),
                                            helper.make_tensor_value_info("w", TensorProto.FLOAT, [3, 2, 2]),
                                            helper.make_tensor_value_info("offset", TensorProto.FLOAT, [1, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(IrforgeError) as err:
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]))
    assert err.value.code == "E133" and "rank-3" in err.value.what


def test_dcn_v2_block_as_detection_models_write_it(tmp_path):
    """Conv -> (offsets from a Conv, mask from Sigmoid(Conv)) -> DeformConv -> Relu, as a
    DCNv2 block of a detection backbone exports: the host step among compiled CPU kernels,
    and OpenVINO on our IR."""
    from tests.backends.ir_xml_support import run_openvino

    rng = np.random.default_rng(5)
    c, o, h, w = 8, 8, 10, 12

    def init(name, *shape):  # type: ignore[no-untyped-def]
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    inits = [init("w0", c, 3, 3, 3), init("b0", c), init("woff", 2 * 2 * 9, c, 3, 3), init("boff", 2 * 2 * 9),
             init("wm", 2 * 9, c, 3, 3), init("bm", 2 * 9), init("wd", o, c // 2, 3, 3), init("bd", o)]
    nodes = [helper.make_node("Conv", ["x", "w0", "b0"], ["f"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["f", "woff", "boff"], ["off"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Conv", ["f", "wm", "bm"], ["ml"], pads=[1, 1, 1, 1], strides=[2, 2]),
             helper.make_node("Sigmoid", ["ml"], ["m"]),
             helper.make_node("DeformConv", ["f", "wd", "off", "bd", "m"], ["d"], pads=[1, 1, 1, 1], strides=[2, 2], group=2, offset_group=2),
             helper.make_node("Relu", ["d"], ["y"])]
    graph = helper.make_graph(nodes, "dcn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    feeds = {"x": rng.standard_normal((1, 3, h, w)).astype(np.float32) * 3}
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(compile_model(model)(feeds)["y"], want, rtol=1e-4, atol=1e-4)
    xml = tmp_path / "m.xml"
    write_ir_xml(model, xml)
    np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, rtol=1e-4, atol=1e-4)


def test_deform_conv_with_dynamic_batch_and_spatial_dims(tmp_path):
    """N, H and W unknown at conversion: the IR carries -1 and OpenVINO and ref still match."""
    from tests.backends.ir_xml_support import run_openvino

    proto, feeds = deform_model(offset_group=2)
    for value in proto.graph.input:
        for axis, name in ((0, "N"), (2, "H"), (3, "W")):
            value.type.tensor_type.shape.dim[axis].dim_param = name
    (want,) = ort_session_run(proto, feeds)
    model = import_onnx(proto)
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=1e-4, atol=1e-4)
    xml = tmp_path / "m.xml"
    write_ir_xml(model, xml)
    np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, rtol=1e-4, atol=1e-4)


def test_deformable_convolution_with_auto_pad_written_by_openvino_reads_back(tmp_path):
    """auto_pad same_upper in OpenVINO's IR becomes explicit pads from the static input shape."""
    import openvino as ov
    import openvino.opset8 as o8

    from irforge.frontends.ir_xml import read_ir_xml

    proto, feeds = deform_model(strides=(2, 2), pads=(1, 0, 1, 1), mask=False, bias=False)  # same_upper of 7x8, 3x3, stride 2
    w = numpy_helper.to_array(proto.graph.initializer[0])
    params = [o8.parameter(v.shape, np.float32, name=n) for n, v in feeds.items()]
    y = o8.deformable_convolution(params[0], params[1], o8.constant(w), [2, 2], [0, 0], [0, 0], [1, 1], auto_pad="same_upper",
                                  bilinear_interpolation_pad=True)
    model = ov.Model([y], params)
    want = ov.Core().compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})(list(feeds.values()))[0]
    xml = tmp_path / "ov.xml"
    ov.save_model(model, str(xml), compress_to_fp16=False)
    assert 'auto_pad="same_upper"' in xml.read_text()
    (got,) = run(read_ir_xml(xml), feeds).values()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    (expected,) = ort_session_run(proto, feeds)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_deform_conv_bias_of_one_value_is_refused():
    """A [1] bias would broadcast over the channels where onnxruntime refuses the model."""
    proto, _ = deform_model()
    inits = {t.name: t for t in proto.graph.initializer}
    inits["b"].CopyFrom(numpy_helper.from_array(np.ones(1, np.float32), "b"))
    with pytest.raises(IrforgeError) as err:
        import_onnx(proto)
    assert err.value.code == "E134" and "bias has shape [1], expected [6]" in err.value.what
