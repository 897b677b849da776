"""Packed 4-bit ONNX tensors: INT4 / UINT4 initializers (raw_data, int32_data, external data,
odd element counts) read exactly into int8 / uint8, and opset 21's blocked DequantizeLinear
of int4 weights (onnxruntime's matmul_4bits_quantizer in QDQ mode) feeding a MatMul,
against onnxruntime on the reference interpreter, the CPU backend and OpenVINO."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx
from irforge.frontends.onnx.loader import tensor_to_array
from tests.backends.ir_xml_support import run_openvino
from tests.helpers import ort_session_run, rand

INT4_VALUES = np.array([-8, 7, -1, 0, 3, -5, 6], np.int8)  # 7 values: an odd count
UINT4_VALUES = np.array([0, 15, 8, 1, 7, 14, 2], np.uint8)


def packed(values: np.ndarray) -> bytes:
    """ONNX's layout, written independently of the loader: low nibble first."""
    nibbles = (values.astype(np.int16) & 0x0F).astype(np.uint8)
    if len(nibbles) % 2:
        nibbles = np.append(nibbles, np.uint8(0))
    return bytes((nibbles[0::2] | (nibbles[1::2] << 4)).tolist())


@pytest.mark.parametrize(("data_type", "values"), [(TensorProto.INT4, INT4_VALUES), (TensorProto.UINT4, UINT4_VALUES)])
def test_four_bit_initializers_read_exactly_in_every_form(data_type, values, tmp_path):
    shape = [values.size]
    by_helper = helper.make_tensor("t", data_type, shape, values.tolist())  # int32_data form
    raw = helper.make_tensor("t", data_type, shape, packed(values), raw=True)
    external = helper.make_tensor("t", data_type, shape, packed(values), raw=True)
    onnx.external_data_helper.set_external_data(external, "t.bin")
    (tmp_path / "t.bin").write_bytes(packed(values))
    external.ClearField("raw_data")
    external.data_location = TensorProto.EXTERNAL
    for tensor in (by_helper, raw, external):
        got = tensor_to_array(tensor, tmp_path)
        assert got.dtype == (np.int8 if data_type == TensorProto.INT4 else np.uint8)
        np.testing.assert_array_equal(got, values)
        np.testing.assert_array_equal(got, numpy_helper.to_array(by_helper).astype(got.dtype))


def test_truncated_four_bit_data_is_refused():
    tensor = helper.make_tensor("t", TensorProto.INT4, [7], packed(INT4_VALUES), raw=True)
    tensor.raw_data = tensor.raw_data[:3]
    with pytest.raises(IrforgeError) as e:
        tensor_to_array(tensor, None)  # type: ignore[arg-type]
    assert e.value.code == "E114" and "packed 4-bit" in e.value.what


def test_float4_stays_refused_by_name():
    tensor = helper.make_tensor("t", TensorProto.FLOAT4E2M1, [2], b"\x21", raw=True)
    with pytest.raises(IrforgeError) as e:
        tensor_to_array(tensor, None)  # type: ignore[arg-type]
    assert e.value.code == "E113" and "FLOAT4E2M1" in e.value.what


def blocked_model(data_type: int, k: int = 10, n: int = 3, block: int = 4, zero_point: bool = True) -> onnx.ModelProto:
    """x [2, k] @ DequantizeLinear(w int4 [k, n], scale [ceil(k / block), n], axis 0, block_size)
    -> + Add; k not a multiple of the block leaves a short last block."""
    rng = np.random.default_rng(7)
    low, high = (-8, 7) if data_type == TensorProto.INT4 else (0, 15)
    blocks = -(-k // block)
    w = rng.integers(low, high + 1, size=(k, n))
    zp = rng.integers(low, high + 1, size=(blocks, n))
    scale = (rng.random((blocks, n)) * 0.1 + 0.01).astype(np.float32)
    inits = [
        helper.make_tensor("w", data_type, [k, n], packed(w.reshape(-1)), raw=True),
        numpy_helper.from_array(scale, "s"),
        numpy_helper.from_array(rand(n, seed=3), "b"),
    ]
    dq_inputs = ["w", "s"]
    if zero_point:
        inits.append(helper.make_tensor("z", data_type, [blocks, n], zp.reshape(-1).tolist()))
        dq_inputs.append("z")
    nodes = [
        helper.make_node("DequantizeLinear", dq_inputs, ["wf"], axis=0, block_size=block),
        helper.make_node("MatMul", ["x", "wf"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "blocked", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])], inits,
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize(("data_type", "zero_point"), [(TensorProto.INT4, True), (TensorProto.UINT4, True), (TensorProto.INT4, False)])
def test_blocked_int4_matmul_matches_onnxruntime_on_ref_cpu_and_openvino(data_type, zero_point, tmp_path):
    model = blocked_model(data_type, zero_point=zero_point)
    feeds = {"x": rand(2, 10, seed=11)}
    (want,) = ort_session_run(model, feeds)
    converted = import_onnx(model)
    np.testing.assert_allclose(run(converted, feeds)["y"], want, rtol=1e-5, atol=1e-5)
    compiled = compile_model(converted, threads=2, cache_dir=tmp_path)
    try:
        np.testing.assert_allclose(compiled(feeds)["y"], want, rtol=1e-5, atol=1e-5)
    finally:
        compiled.close()
    xml, _ = write_ir_xml(converted, tmp_path / "int4.xml")
    np.testing.assert_allclose(run_openvino(xml, feeds)["y"], want, rtol=1e-5, atol=1e-5)


def test_blocked_dequantize_of_an_activation_is_refused_by_name():
    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["x", "s"], ["y"], axis=1, block_size=2)], "g",
        [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 4])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(np.ones((1, 2), np.float32), "s")],
    )  # fmt: skip
    with pytest.raises(IrforgeError) as e:
        import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
    assert e.value.code == "E171" and "run time" in e.value.what


def test_blocked_scale_of_the_wrong_shape_is_refused():
    model = blocked_model(TensorProto.INT4)
    model.graph.node[0].attribute[1].i = 5  # block_size 5 -> 2 blocks, but the scale has 3
    with pytest.raises(IrforgeError) as e:
        import_onnx(model)
    assert e.value.code == "E171" and "expected [2, 3]" in e.value.what


@pytest.mark.parametrize("data_type", [TensorProto.INT4, TensorProto.UINT4])
def test_int4_quantize_dequantize_saturates_to_four_bits(data_type):
    """QuantizeLinear -> DequantizeLinear with a 4-bit zero point: 16 levels, not 256 (reading
    the zero point as a plain int8 would clamp to -128..127 and be silently wrong); once as a
    pair (one FakeQuantize), once read with another scale (the integers themselves)."""
    zp = helper.make_tensor("z", data_type, [], [1])
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]), helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"]),
             helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q2"]), helper.make_node("DequantizeLinear", ["q2", "one", "z"], ["y2"])]  # fmt: skip
    graph = helper.make_graph(
        nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8]), helper.make_tensor_value_info("y2", TensorProto.FLOAT, [3, 8])],
        [numpy_helper.from_array(np.array(0.25, np.float32), "s"), numpy_helper.from_array(np.array(1.0, np.float32), "one"), zp],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    feeds = {"x": rand(3, 8, seed=5) * 4}
    want_y, want_steps = ort_session_run(model, feeds)
    assert len(np.unique(want_y)) <= 16 and np.ptp(want_steps) == 15  # the inputs do saturate
    got = run(import_onnx(model), feeds)
    np.testing.assert_allclose(got["y"], want_y, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(got["y2"], want_steps)  # q - z: the integers, unpaired


@pytest.mark.parametrize("data_type", [TensorProto.INT4, TensorProto.UINT4])
@pytest.mark.parametrize("zero_points", [False, True])
def test_gather_block_quantized_of_a_four_bit_table_matches_onnxruntime(data_type, zero_points):
    """onnxruntime-genai's int4 Whisper decoder: a UINT4 embedding table read by
    GatherBlockQuantized; the loader unpacks it, so the extractor must not unpack it again."""
    rng = np.random.default_rng(data_type + zero_points)
    rows, columns, block = 6, 40, 16  # 3 blocks, the last one short
    low, high = (-8, 7) if data_type == TensorProto.INT4 else (0, 15)
    table = rng.integers(low, high + 1, (rows, columns))
    inits = [helper.make_tensor("data", data_type, [rows, columns], packed(table.reshape(-1)), raw=True),
             numpy_helper.from_array(rng.uniform(0.1, 1, (rows, 3)).astype(np.float32), "scales")]  # fmt: skip
    names = ["data", "ids", "scales"]
    if zero_points:
        inits.append(helper.make_tensor("zp", data_type, [rows, 3], rng.integers(low, high + 1, rows * 3).tolist()))
        names.append("zp")
    node = helper.make_node("GatherBlockQuantized", names, ["y"], domain="com.microsoft", bits=4, block_size=block)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    feeds = {"ids": np.array([[0, 5, 2], [3, 3, 1]], np.int64)}
    (want,) = ort_session_run(model, feeds)
    np.testing.assert_allclose(run(import_onnx(model), feeds)["y"], want, rtol=1e-6, atol=1e-6)
