"""The Python API as an OpenVINO user drives it: convert_model, save_model, read_model, compile."""

import numpy as np
import onnx
import pytest

import irforge
from irforge.errors import IrforgeError
from irforge.testing.onnx_models import resnet
from tests.helpers import ort_session_run


@pytest.fixture(scope="module")
def proto() -> onnx.ModelProto:
    return resnet(blocks=(1,), width=8, size=16)


@pytest.fixture(scope="module")
def onnx_path(tmp_path_factory, proto):
    path = tmp_path_factory.mktemp("models") / "net.onnx"
    onnx.save_model(proto, str(path))
    return path


def image(batch: int = 1) -> np.ndarray:
    return np.random.default_rng(0).standard_normal((batch, 3, 16, 16)).astype(np.float32)


def test_convert_from_path_proto_and_bytes_agree_with_onnxruntime(proto, onnx_path):
    (want,) = ort_session_run(proto, {"data": image()})
    for source in (onnx_path, str(onnx_path), proto, proto.SerializeToString()):
        model = irforge.convert_model(source)
        got = irforge.compile(model, device="ref")(image())
        np.testing.assert_allclose(got[0], want, rtol=1e-4, atol=1e-5)


def test_options_are_ir_convert_flags(proto):
    model = irforge.convert_model(proto, input_shape=[2, 3, 16, 16], mean_values=[1.0, 2.0, 3.0], scale_values={"data": [2.0]})
    compiled = irforge.compile(model, device="ref")
    assert compiled.inputs[0].name == "data" and compiled.inputs[0].shape == (2, 3, 16, 16)
    x = image(2)
    shifted = (x - np.array([1.0, 2.0, 3.0], np.float32).reshape(1, 3, 1, 1)) / 2.0
    reference = irforge.compile(irforge.convert_model(proto, input_shape="[2,3,16,16]"), device="ref")
    np.testing.assert_allclose(compiled(x)[0], reference(shifted)[0], rtol=1e-4, atol=1e-5)
    ovc_form = irforge.convert_model(proto, input={"data": [4, 3, 16, 16]})
    assert irforge.compile(ovc_form, device="ref").input("data").shape == (4, 3, 16, 16)
    pairs = irforge.convert_model(proto, input=[("data", [5, 3, 16, 16])])
    assert pairs.inputs[0].get_any_name() == "data" and pairs.inputs[0].shape == (5, 3, 16, 16)
    assert irforge.convert_model(proto, input="data[6,3,16,16]").inputs[0].shape == (6, 3, 16, 16)
    assert [p.name for p in pairs.outputs] == [p.name for p in model.outputs]


def test_unknown_option_is_an_error_naming_it(proto):
    with pytest.raises(IrforgeError, match="unknown options colour, speed") as info:
        irforge.convert_model(proto, speed=3, colour="red")
    assert info.value.code == "E050"
    with pytest.raises(IrforgeError, match="output_dir"):
        irforge.convert_model(proto, output_dir="x")
    with pytest.raises(IrforgeError, match="bad value for data_type: 'fp8'; use one of: FP32, FP16"):
        irforge.convert_model(proto, data_type="fp8")
    with pytest.raises(IrforgeError, match="cannot read a int"):
        irforge.convert_model(42)


def test_save_and_read_back_every_format(tmp_path, proto):
    model = irforge.convert_model(proto)
    want = irforge.compile(model, device="ref")(image())[0]
    written = irforge.save_model(model, tmp_path / "m.xml", compress_to_fp16=False)
    assert [p.name for p in written] == ["m.xml", "m.bin"]
    assert irforge.save_model(model, tmp_path / "m16.xml")[1].stat().st_size < written[1].stat().st_size  # f16 by default, as ov.save_model
    irforge.save_model(model, tmp_path / "m.mlir", compress_to_fp16=False)
    irforge.save_model(model, tmp_path / "m16.mlir")
    assert "f16" in (tmp_path / "m16.mlir").read_text() and "f16" not in (tmp_path / "m.mlir").read_text()
    for path in ("m.xml", "m.mlir", "m16.xml", "m16.mlir"):
        got = irforge.compile(tmp_path / path, device="ref")(image())[0]
        np.testing.assert_allclose(got, want, rtol=1e-2 if "16" in path else 1e-5, atol=1e-3 if "16" in path else 1e-6)
    with pytest.raises(IrforgeError, match="cannot tell the format"):
        irforge.save_model(model, tmp_path / "m.txt")
    with pytest.raises(IrforgeError, match="not found"):
        irforge.read_model(tmp_path / "absent.xml")


def test_compiled_model_takes_dict_list_or_array(proto):
    compiled = irforge.compile(irforge.convert_model(proto), device="CPU", cache_dir=False)
    x = image()
    by_dict, by_list, by_array = compiled({"data": x}), compiled([x]), compiled(x)
    out = compiled.outputs[0]
    np.testing.assert_array_equal(by_dict[out], by_list[0])
    np.testing.assert_array_equal(by_array[out.name], by_list[out])
    assert compiled.stats.kernels > 0  # the backend's own attributes stay reachable
    with pytest.raises(IrforgeError, match="1 inputs .* 2 arrays"):
        compiled([x, x])
    with pytest.raises(IrforgeError, match="unknown device"):
        irforge.compile(irforge.convert_model(proto), device="tpu")


def test_irforge_compile_of_a_path(onnx_path, proto):
    (want,) = ort_session_run(proto, {"data": image()})
    np.testing.assert_allclose(irforge.compile(str(onnx_path), device="ref")(image())[0], want, rtol=1e-4, atol=1e-5)
