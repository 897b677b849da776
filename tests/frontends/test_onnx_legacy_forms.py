"""ONNX files as found in the wild: old op versions and experimental ops (opset 1-12), built
with onnx.helper, against onnxruntime where it runs them (ref, cpu, and OpenVINO on our IR),
and against numpy for the opset-1/6 forms onnxruntime no longer loads (legacy broadcasting,
is_test, consumed_inputs, Upsample-1, Pad-1, Cast-1); legacy attributes irforge cannot
honour are one-line errors that name them (legacy_forms.py, extractors/legacy_ops.py)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

RNG = np.random.default_rng(14)
X = RNG.standard_normal((1, 3, 4, 5)).astype(np.float32)
C3 = np.array([0.5, -1.0, 2.0], np.float32)


def model(op, attrs, opset, inits=(), n_out=1, x=X):  # type: ignore[no-untyped-def]
    """One `op` node reading graph input x and the initializers `inits` ((name, array) pairs)."""
    node = helper.make_node(op, ["x"] + [n for n, _ in inits], [f"y{i}" for i in range(n_out)], **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)],
        [helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None) for i in range(n_out)],
        [numpy_helper.from_array(a, n) for n, a in inits],
    )  # fmt: skip
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=3 if opset < 9 else 7)
    inferred = onnx.shape_inference.infer_shapes(proto)
    for out, typed in zip(proto.graph.output, inferred.graph.output):
        out.type.tensor_type.elem_type = typed.type.tensor_type.elem_type or TensorProto.FLOAT
    return proto


def case(op, attrs, opset, inits=(), n_out=1, x=X):  # type: ignore[no-untyped-def]
    """(model, its input)."""
    return model(op, attrs, opset, inits, n_out, x), x


ORT_CASES = {
    "BatchNormalization-7 spatial=0": case("BatchNormalization", {"spatial": 0, "epsilon": 1e-3}, 7, [
        ("s", RNG.standard_normal((3, 4, 5)).astype(np.float32)), ("b", RNG.standard_normal((3, 4, 5)).astype(np.float32)),
        ("m", RNG.standard_normal((3, 4, 5)).astype(np.float32)), ("v", RNG.uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32))]),
    "BatchNormalization-7 spatial=1": case("BatchNormalization", {"spatial": 1}, 7, [("s", C3), ("b", C3 + 1), ("m", C3 * 0.1), ("v", C3 * C3)]),
    "Resize-10 nearest up": case("Resize", {"mode": "nearest"}, 10, [("sc", np.array([1, 1, 2, 1.5], np.float32))]),
    "Resize-10 nearest down": case("Resize", {"mode": "nearest"}, 10, [("sc", np.array([1, 1, 0.5, 0.6], np.float32))]),
    "Resize-10 nearest up and down": case("Resize", {"mode": "nearest"}, 10, [("sc", np.array([1, 1, 2, 0.6], np.float32))]),
    "Resize-10 linear": case("Resize", {"mode": "linear"}, 10, [("sc", np.array([1, 1, 2, 1.5], np.float32))]),
    "Resize-11 tf_crop_and_resize linear, extrapolated": case("Resize", {"mode": "linear", "coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": -2.0}, 11, [
        ("roi", np.array([0, 0, -0.2, 0.1, 1, 1, 0.9, 1.3], np.float32)), ("sc", np.array([], np.float32)), ("sz", np.array([1, 3, 6, 7], np.int64))]),
    "Resize-13 tf_crop_and_resize nearest": case("Resize", {"mode": "nearest", "coordinate_transformation_mode": "tf_crop_and_resize"}, 13, [
        ("roi", np.array([0, 0, 0.1, 0.2, 1, 1, 0.8, 0.9], np.float32)), ("sc", np.array([1, 1, 1.5, 0.8], np.float32))]),
    "Upsample-7 nearest": case("Upsample", {"scales": [1.0, 1.0, 2.0, 3.0]}, 7),
    "Upsample-9 linear": case("Upsample", {"mode": "linear"}, 9, [("sc", np.array([1, 1, 2, 2], np.float32))]),
    "MeanVarianceNormalization-1 across": case("MeanVarianceNormalization", {"across_channels": 1}, 8),
    "MeanVarianceNormalization-1 mean only": case("MeanVarianceNormalization", {"normalize_variance": 0}, 8),
    "ImageScaler": case("ImageScaler", {"scale": 0.5, "bias": [1.0, 2.0, 3.0]}, 8),
    "Crop border": case("Crop", {"border": [1, 1, 2, 0]}, 8),
    "Crop scale": case("Crop", {"border": [1, 2, 0, 0], "scale": [2, 3]}, 8),
    "Affine": case("Affine", {"alpha": 0.5, "beta": 1.0}, 8),
    "Scale": case("Scale", {"scale": 2.5}, 8),
    "ScaledTanh": case("ScaledTanh", {"alpha": 0.5, "beta": 2.0}, 8),
    "ParametricSoftplus": case("ParametricSoftplus", {"alpha": 0.5, "beta": 2.0}, 8),
    "GlobalLpPool p=3": case("GlobalLpPool", {"p": 3}, 2),
    "LpPool p=2 pads strides": case("LpPool", {"kernel_shape": [2, 2], "p": 2, "pads": [1, 1, 1, 1], "strides": [2, 2]}, 11),
    "LpPool p=1": case("LpPool", {"kernel_shape": [3, 2], "p": 1}, 11),
    "Hardmax-11 axis=1 (2-D coercion)": case("Hardmax", {"axis": 1}, 11, x=np.round(X * 2) / 2),
    "Hardmax-13 axis=1": case("Hardmax", {"axis": 1}, 13, x=np.round(X * 2) / 2),
    "MaxUnpool-11": case("MaxUnpool", {"kernel_shape": [2, 2], "strides": [2, 2]}, 11, [
        ("i", (np.array([0, 3, 9, 11, 4, 7, 13, 15, 1, 2, 8, 10], np.int64).reshape(1, 3, 2, 2) + np.arange(3).reshape(1, 3, 1, 1) * 16))],
        x=X[:, :, :2, :2].copy()),
    "Softmax-11 axis=1 (2-D coercion)": case("Softmax", {"axis": 1}, 11),
    "ArgMax-12 select_last_index": case("ArgMax", {"axis": 1, "select_last_index": 1}, 12, x=np.round(X)),
    "Clip-6 attributes": case("Clip", {"min": -0.5, "max": 0.7}, 6),
    "Pad-2 reflect": case("Pad", {"pads": [0, 0, 1, 2, 0, 0, 2, 1], "mode": "reflect"}, 2),
    "Slice-1 attributes": case("Slice", {"starts": [1, 0], "ends": [3, -1], "axes": [2, 3]}, 1),
    "TopK-1 k attribute": case("TopK", {"k": 2, "axis": 3}, 1, n_out=2),
}


@pytest.mark.parametrize("name", ORT_CASES)
def test_old_forms_match_onnxruntime_on_ref_cpu_and_openvino(name, tmp_path):
    from tests.backends.ir_xml_support import run_openvino

    proto, x = ORT_CASES[name]
    feeds = {"x": x}
    want = ort_session_run(proto, feeds)
    imported = import_onnx(proto)
    xml = tmp_path / "m.xml"
    write_ir_xml(imported, xml)
    for got in (run(imported, feeds), compile_model(imported)(feeds), run_openvino(xml, feeds)):
        for g, w in zip(list(got.values()), want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-5)


def legacy(op, attrs, opset, b):  # type: ignore[no-untyped-def]
    return model(op, attrs, opset, [("b", b)])


@pytest.mark.parametrize(("op", "fn"), [("Add", np.add), ("Sub", np.subtract), ("Mul", np.multiply), ("Div", np.divide), ("Pow", np.power)])
@pytest.mark.parametrize(("attrs", "b", "shape"), [
    ({"broadcast": 1, "axis": 1}, C3, (1, 3, 1, 1)),
    ({"broadcast": 1, "axis": 2}, np.arange(1, 5, dtype=np.float32), (1, 1, 4, 1)),
    ({"broadcast": 1}, RNG.uniform(0.5, 2, (4, 5)).astype(np.float32), (4, 5)),
    ({"broadcast": 1, "axis": 1, "consumed_inputs": [0, 0]}, C3, (1, 3, 1, 1)),
])  # fmt: skip
def test_legacy_broadcast_aligns_b_at_axis(op, fn, attrs, b, shape):
    x = np.abs(X) + 0.5 if op == "Pow" else X
    imported = import_onnx(legacy(op, attrs, 6 if "consumed_inputs" not in attrs else 1, b))
    want = fn(x, b.reshape(shape))
    np.testing.assert_allclose(run(imported, {"x": x})["y0"], want, rtol=1e-5)
    np.testing.assert_allclose(compile_model(imported)({"x": x})["y0"], want, rtol=1e-5)


def test_legacy_broadcast_of_a_comparison_and_a_logical_op():
    greater = import_onnx(legacy("Greater", {"broadcast": 1, "axis": 1}, 1, C3))
    np.testing.assert_array_equal(run(greater, {"x": X})["y0"], X > C3.reshape(1, 3, 1, 1))
    mask = np.array([True, False, True])
    both = import_onnx(model("And", {"broadcast": 1, "axis": 1}, 1, [("b", mask)], x=X > 0))
    np.testing.assert_array_equal(run(both, {"x": X > 0})["y0"], (X > 0) & mask.reshape(1, 3, 1, 1))


def test_legacy_broadcast_axis_where_b_does_not_fit_is_named():
    with pytest.raises(IrforgeError) as err:
        import_onnx(legacy("Add", {"broadcast": 1, "axis": 3}, 6, np.ones((4, 5), np.float32)))
    assert err.value.code == "E139" and "axis=3" in err.value.what


BN = [("s", C3), ("b", C3 + 1), ("m", C3 * 0.1), ("v", C3 * C3)]


@pytest.mark.parametrize(("opset", "attrs"), [(1, {"is_test": 1, "consumed_inputs": [0, 0, 0, 1, 1]}), (6, {"is_test": 1, "spatial": 1})])
def test_batch_norm_before_opset_7_in_inference(opset, attrs):
    want = (X - (C3 * 0.1).reshape(1, 3, 1, 1)) / np.sqrt((C3 * C3).reshape(1, 3, 1, 1) + 1e-3) * C3.reshape(1, 3, 1, 1) + (C3 + 1).reshape(1, 3, 1, 1)
    imported = import_onnx(model("BatchNormalization", {"epsilon": 1e-3, **attrs}, opset, BN))
    np.testing.assert_allclose(run(imported, {"x": X})["y0"], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(compile_model(imported)({"x": X})["y0"], want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(("op", "inits", "attrs"), [("BatchNormalization", BN, {}), ("BatchNormalization", BN, {"is_test": 0}), ("Dropout", [], {"is_test": 0})])
def test_training_mode_before_opset_7_names_is_test(op, inits, attrs):
    with pytest.raises(IrforgeError) as err:
        import_onnx(model(op, attrs, 6, inits))
    assert err.value.code == "E139" and "is_test=0" in err.value.what


def test_gemm6_broadcast_c():
    w = RNG.standard_normal((5, 2)).astype(np.float32)
    imported = import_onnx(model("Gemm", {"broadcast": 1, "alpha": 0.5, "beta": 2.0}, 6, [("w", w), ("c", C3[:2].copy())], x=X[0, 0]))
    np.testing.assert_allclose(run(imported, {"x": X[0, 0]})["y0"], 0.5 * X[0, 0] @ w + 2.0 * C3[:2], rtol=1e-5)


def test_dropout6_inference_is_identity():
    np.testing.assert_array_equal(run(import_onnx(model("Dropout", {"is_test": 1, "ratio": 0.3}, 6)), {"x": X})["y0"], X)


@pytest.mark.parametrize(("mode", "modern"), [("BILINEAR", "linear"), ("NEAREST", "nearest")])
def test_upsample1_is_upsample7_with_scales(mode, modern):
    old = import_onnx(model("Upsample", {"height_scale": 2.0, "width_scale": 3.0, "mode": mode}, 1))
    (want,) = ort_session_run(model("Upsample", {"scales": [1.0, 1.0, 2.0, 3.0], "mode": modern}, 7), {"x": X})
    np.testing.assert_allclose(run(old, {"x": X})["y0"], want, rtol=1e-5, atol=1e-6)


def test_pad1_paddings_is_pad2_pads():
    old = import_onnx(model("Pad", {"paddings": [0, 0, 1, 2, 0, 0, 2, 1], "value": 1.5}, 1))
    (want,) = ort_session_run(model("Pad", {"pads": [0, 0, 1, 2, 0, 0, 2, 1], "value": 1.5}, 2), {"x": X})
    np.testing.assert_array_equal(run(old, {"x": X})["y0"], want)


def test_cast1_type_name():
    proto = model("Cast", {"to": "FLOAT16"}, 1)
    # shape inference does not read Cast-1's type name: declare the output as the file would
    proto.graph.output[0].type.tensor_type.elem_type = TensorProto.FLOAT16
    got = run(import_onnx(proto), {"x": X})["y0"]
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, X.astype(np.float16))


def test_cast_to_string_is_refused_clearly():
    with pytest.raises(IrforgeError) as err:
        import_onnx(model("Cast", {"to": TensorProto.STRING}, 9))
    assert err.value.code == "E138" and "STRING" in err.value.what


def test_lp_pool_dilations_are_named():
    with pytest.raises(IrforgeError) as err:
        import_onnx(model("LpPool", {"kernel_shape": [2, 2], "dilations": [2, 2]}, 18))
    assert err.value.code == "E136" and "dilations" in err.value.what


def test_string_model_input_is_refused_clearly():
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [helper.make_tensor_value_info("x", TensorProto.STRING, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.STRING, [1])])  # fmt: skip
    with pytest.raises(IrforgeError) as err:
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)]))
    assert err.value.code == "E138" and "string" in err.value.what


@pytest.mark.parametrize(("op", "attrs"), [("ImageScaler", {"bias": 2.0}), ("Crop", {"border": "XX"})])
def test_experimental_op_list_attributes_are_checked(op, attrs):
    with pytest.raises(IrforgeError) as err:
        import_onnx(model(op, attrs, 8))
    assert err.value.code == "E136" and "list of numbers" in err.value.what


def test_non_utf8_string_attribute_is_refused_by_name():
    with pytest.raises(IrforgeError) as err:
        import_onnx(model("Resize", {"mode": b"\xff"}, 10, [("sc", np.array([1, 1, 2, 2], np.float32))]))
    assert "mode" in err.value.what


@pytest.mark.parametrize("scales", [np.ones((4, 2), np.float32), np.ones(3, np.float32)])
def test_upsample9_scales_of_the_wrong_shape_is_one_line(scales: np.ndarray) -> None:
    """A fuzz finding: a 2-D scales tensor ended in a TypeError (internal error)."""
    with pytest.raises(IrforgeError) as err:
        import_onnx(model("Upsample", {"mode": "nearest"}, 9, [("sc", scales)]))
    assert "scales has shape" in err.value.what
