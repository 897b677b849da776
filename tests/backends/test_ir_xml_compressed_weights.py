"""4-bit weights stay 4-bit in the IR (issue 14): MatMulNBits, opset 21's blocked
DequantizeLinear and GatherBlockQuantized write i4 / u4 Consts with OpenVINO's grouped
decompression subgraph (as `ovc` writes them), the .bin packs two values per byte, the IR
reader reads i4 / u4 back (ours and one OpenVINO's own converter wrote), and the numbers are
onnxruntime's on ref, cpu and OpenVINO."""

from __future__ import annotations

import defusedxml.ElementTree as ET
import numpy as np
import openvino as ov
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects.builtin import f32 as xdsl_f32

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.ir_xml.bin import pack_nibbles
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Convert
from irforge.errors import IrforgeError
from irforge.frontends.ir_xml import read_ir_xml
from irforge.frontends.ir_xml.parse import unpack_nibbles
from irforge.frontends.onnx.importer import import_onnx
from irforge.model import parse_module, print_module
from tests.backends.ir_xml_support import run_openvino
from tests.frontends.test_onnx_gather_block_quantized import gbq_case
from tests.frontends.test_onnx_int4 import blocked_model, packed
from tests.frontends.test_onnx_ort_contrib import contrib_model, f32, nbits_weights
from tests.helpers import ort_session_run, rand

TOL = {"rtol": 1e-5, "atol": 1e-5}


def consts(xml) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """(element_type, shape) of every Const layer of an IR, in order."""
    root = ET.parse(str(xml)).getroot()
    return [(d.get("element_type"), d.get("shape")) for layer in root.iter("layer") if layer.get("type") == "Const" for d in [layer.find("data")]]


def check_everywhere(model, feeds, want, tmp_path, name):  # type: ignore[no-untyped-def]
    """ref, cpu and OpenVINO on the written IR against `want`; the IR's Consts."""
    imported = import_onnx(model)
    np.testing.assert_allclose(run(imported, feeds)["y"], want, **TOL)
    compiled = compile_model(imported, threads=2, cache_dir=False)
    try:
        np.testing.assert_allclose(compiled(feeds)["y"], want, **TOL)
    finally:
        compiled.close()
    xml, _ = write_ir_xml(imported, tmp_path / f"{name}.xml")
    np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, **TOL)
    return xml


@pytest.mark.parametrize("signed", [True, False])
def test_nibbles_pack_and_unpack_as_openvino_and_onnx_lay_them_out(signed):
    values = np.array([-8, 7, -1, 0, 3, -5, 6], np.int8) if signed else np.array([0, 15, 8, 1, 7, 14, 2], np.uint8)
    assert pack_nibbles(values).tobytes() == packed(values)  # the ONNX layout, written independently
    np.testing.assert_array_equal(unpack_nibbles(pack_nibbles(values), values.dtype, values.size), values)


def test_matmul_nbits_writes_u4_weights_and_zero_points(tmp_path):
    # K = 40 in blocks of 16: a short last block (the Reshape is followed by a Slice to K)
    model, feeds = contrib_model("MatMulNBits", {"a": f32(3, 40)}, nbits_weights(40, 6, 4, 16, "packed"), K=40, N=6, bits=4, block_size=16)
    (want,) = ort_session_run(model, feeds)
    xml = check_everywhere(model, feeds, want, tmp_path, "nbits")
    assert ("u4", "6, 3, 16") in consts(xml) and ("u4", "6, 3, 1") in consts(xml)
    assert not any(shape == "6, 40" for _, shape in consts(xml))  # no f32 copy of the weights
    # an FP16 IR keeps the scales f32 (as ovc does), so its numbers are the FP32 IR's
    xml16, _ = write_ir_xml(import_onnx(model), tmp_path / "nbits16.xml", "FP16")
    assert ("f32", "6, 3, 1") in consts(xml16) and not any(element == "f16" for element, _ in consts(xml16))
    np.testing.assert_allclose(run_openvino(xml16, feeds)["y"], want, **TOL)


@pytest.mark.parametrize(("data_type", "element"), [(TensorProto.INT4, "i4"), (TensorProto.UINT4, "u4")])
def test_blocked_dequantize_writes_grouped_four_bit_weights(data_type, element, tmp_path):
    model = blocked_model(data_type, k=12, n=3, block=4)
    feeds = {"x": rand(2, 12, seed=11)}
    (want,) = ort_session_run(model, feeds)
    xml = check_everywhere(model, feeds, want, tmp_path, "dq")
    # as ovc: weights [K, N] in blocks along axis 0 -> [K / B, B, N], zero points [K / B, 1, N]
    assert (element, "3, 4, 3") in consts(xml) and (element, "3, 1, 3") in consts(xml)


def test_gather_block_quantized_writes_a_u4_table(tmp_path):
    model, feeds = gbq_case(4, zero_points=True)
    (want,) = ort_session_run(model, feeds)
    xml = check_everywhere(model, feeds, want, tmp_path, "gbq")
    assert ("u4", "10, 2, 32") in consts(xml)


def test_our_four_bit_ir_reads_back_and_writes_the_same_bin(tmp_path):
    model = blocked_model(TensorProto.INT4, k=10, n=3, block=4)  # odd element counts: 5 blocks of zero points x 3
    feeds = {"x": rand(2, 10, seed=11)}
    (want,) = ort_session_run(model, feeds)
    xml, bin_path = write_ir_xml(import_onnx(model), tmp_path / "first.xml")
    again = read_ir_xml(xml)
    np.testing.assert_allclose(run(again, feeds)["y"], want, **TOL)
    xml2, bin2 = write_ir_xml(again, tmp_path / "second.xml")
    assert consts(xml2) == consts(xml) and bin2.read_bytes() == bin_path.read_bytes()


def test_an_ir_openvino_wrote_with_u4_weights_reads_exactly(tmp_path):
    model, feeds = contrib_model("MatMulNBits", {"a": f32(3, 32)}, nbits_weights(32, 5, 4, 16, "packed"), K=32, N=5, bits=4, block_size=16)
    (want,) = ort_session_run(model, feeds)
    path = tmp_path / "nbits.onnx"
    path.write_bytes(model.SerializeToString())
    ov.save_model(ov.convert_model(str(path)), str(tmp_path / "ovc.xml"), compress_to_fp16=False)
    assert any(element == "u4" for element, _ in consts(tmp_path / "ovc.xml"))
    np.testing.assert_allclose(run(read_ir_xml(tmp_path / "ovc.xml"), feeds)["y"], want, **TOL)


def test_a_constant_marked_four_bit_round_trips_as_text_and_refuses_wide_values(tmp_path):
    b = ModelBuilder()
    q = b.constant(np.arange(-8, 8, dtype=np.int8).reshape(4, 4), "q", bits=4)
    b.output(b.add(Convert, [q], name="w", destination_type=xdsl_f32).output, "y")
    model = b.finish()
    text = print_module(model.module)
    assert "bits = 4" in text and "bits = 4" in print_module(parse_module(text))
    xml, _ = write_ir_xml(model, tmp_path / "q.xml")
    assert consts(xml) == [("i4", "4, 4")]
    wide = ModelBuilder()
    q = wide.constant(np.full((4, 5), 9, np.int8), "q", bits=4)
    wide.output(wide.add(Convert, [q], name="w", destination_type=xdsl_f32).output, "y")
    with pytest.raises(IrforgeError) as e:
        write_ir_xml(wide.finish(), tmp_path / "wide.xml")
    assert e.value.code == "E124" and "-8..7" in e.value.what



def test_per_axis_int4_dequantize_writes_i4_weights(tmp_path):
    rng = np.random.default_rng(0)
    inits = [helper.make_tensor("w", TensorProto.INT4, [6, 4], packed(rng.integers(-8, 8, size=24)), raw=True),
             numpy_helper.from_array(np.array([0.1, 0.2, 0.3, 0.4], np.float32), "s"),
             helper.make_tensor("z", TensorProto.INT4, [4], [1, -2, 0, 3])]  # fmt: skip
    nodes = [helper.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"], axis=1), helper.make_node("MatMul", ["x", "wf"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    feeds = {"x": rand(2, 6, seed=5)}
    (want,) = ort_session_run(model, feeds)
    xml = check_everywhere(model, feeds, want, tmp_path, "per_axis")
    assert ("i4", "6, 4") in consts(xml) and ("i4", "1, 4") in consts(xml)  # weights and zero points
