"""float16 with float32 operands where an ONNX schema binds one type (torch's half exports,
mixed_floats.py): computed as torch did (the narrower float promoted, LayerNormalization's
parameters as X's type), against onnxruntime on the same graph with those operands declared
float32 (onnxruntime refuses the mixed file), on ref, cpu and OpenVINO through our IR."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

F16, F32 = TensorProto.FLOAT16, TensorProto.FLOAT
RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 8)).astype(np.float16)  # exact in float32 too
W = RNG.choice([-2.0, -0.5, 0.25, 1.0, 4.0], 8).astype(np.float16)  # powers of two: h*w exact in float16 (no rounding to compare)
S = RNG.standard_normal(8).astype(np.float16)
B = RNG.standard_normal(8).astype(np.float16)


def residual_layer_norm(half: int):  # type: ignore[no-untyped-def]
    """y = LayerNorm(Cast<f32>(h) + h*w) with float16 h, w, scale and bias (`half`: their
    declared type; FLOAT: the valid float32 twin onnxruntime runs)."""
    nodes = [
        helper.make_node("Mul", ["h", "w"], ["hw"]),
        helper.make_node("Cast", ["h"], ["h32"], to=F32),
        helper.make_node("Add", ["h32", "hw"], ["s"]),  # float32 + float16 (torch's promotion)
        helper.make_node("LayerNormalization", ["s", "scale", "bias"], ["y"], axis=-1, epsilon=1e-5),  # float32 X, float16 Scale/B
    ]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("h", half, [2, 3, 8])], [helper.make_tensor_value_info("y", F32, None)],
        [numpy_helper.from_array(a.astype(helper.tensor_dtype_to_np_dtype(half)), n) for n, a in (("w", W), ("scale", S), ("bias", B))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_mixed_float_widths_compute_as_promoted_on_ref_cpu_and_openvino(tmp_path):
    from tests.backends.ir_xml_support import run_openvino

    (want,) = ort_session_run(residual_layer_norm(F32), {"h": X.astype(np.float32)})
    model = import_onnx(residual_layer_norm(F16))
    feeds = {"h": X}
    np.testing.assert_allclose(run(model, feeds)["y"], want, rtol=0, atol=2e-6)
    np.testing.assert_allclose(compile_model(model)(feeds)["y"], want, rtol=0, atol=2e-6)
    write_ir_xml(model, tmp_path / "m.xml")
    np.testing.assert_allclose(run_openvino(tmp_path / "m.xml", feeds)["y"], want, rtol=0, atol=2e-6)


@pytest.mark.parametrize("a, b", [(F32, TensorProto.INT32), (TensorProto.INT64, TensorProto.INT32)], ids=["float-int", "int-int"])
def test_non_float_mixtures_stay_a_coded_error(a, b):
    graph = helper.make_graph(
        [helper.make_node("Add", ["a", "b"], ["c"])], "g",
        [helper.make_tensor_value_info("a", a, [2]), helper.make_tensor_value_info("b", b, [2])],
        [helper.make_tensor_value_info("c", a, None)],
    )  # fmt: skip
    with pytest.raises(IrforgeError, match="operand element types differ"):
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))


def test_a_cast_whose_declared_output_type_differs_is_refused():
    """onnxconverter-common's float16 files: Cast to FLOAT, its output declared FLOAT16 (E147)."""
    graph = helper.make_graph(
        [helper.make_node("Cast", ["h"], ["c"], to=F32), helper.make_node("Add", ["c", "h"], ["y"])], "g",
        [helper.make_tensor_value_info("h", F16, [2])], [helper.make_tensor_value_info("y", F16, None)],
        value_info=[helper.make_tensor_value_info("c", F16, [2])],
    )  # fmt: skip
    with pytest.raises(IrforgeError, match="Cast to FLOAT but the file declares its output 'c' FLOAT16") as caught:
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    assert caught.value.code == "E147"
