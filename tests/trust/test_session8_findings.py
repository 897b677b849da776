"""Fuzz findings of session 8 (irforge/testing/fuzz_session7_ops.py's seeds of session 7's code,
mutated: `bench/fuzz_campaign.py --focus session7`, `bench/fuzz_numbers.py --only session7`):
each input that gave an internal error or a number other than onnxruntime's is now a one-line
coded error or onnxruntime's number."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx
from irforge.testing import fuzz_session7_ops as s7


def _seed(name: str) -> onnx.ModelProto:
    return onnx.load_from_string(s7.SEEDS[name]())


def _constant(model: onnx.ModelProto, name: str, array: np.ndarray) -> onnx.ModelProto:
    init = next(t for t in model.graph.initializer if t.name == name)
    init.CopyFrom(numpy_helper.from_array(array, name))
    return model


def _set(model: onnx.ModelProto, op: str, **attrs: object) -> onnx.ModelProto:
    node = next(n for n in model.graph.node if n.op_type == op)
    for name, value in attrs.items():
        for attr in [a for a in node.attribute if a.name == name]:
            node.attribute.remove(attr)
        node.attribute.append(helper.make_attribute(name, value))
    return model


def _refused(model: onnx.ModelProto, code: str, match: str) -> None:
    with pytest.raises(IrforgeError, match=match) as err:
        import_onnx(model)
    assert err.value.code == code


def test_float16_weights_beyond_float16_range_are_refused():
    """MatMulNBits with float16 scales of -1e4: (q - 8) * s reaches 8e4, inf in float16 (ref
    gave NaN where onnxruntime, dequantizing in float32, gives finite numbers)."""
    model = _seed("nbits4.onnx")
    scales = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "scales"))
    _refused(_constant(model, "scales", np.full_like(scales, -1e4)), "E120", "reach 8e.04, beyond float16's range")


def test_gqa_rotary_cache_of_inf_is_refused_by_name():
    """GroupQueryAttention with cos_cache all inf: onnxruntime's softmax turns the NaN scores
    into 0, ours into NaN; a rotary cache is cosines and sines, so a non-finite one is refused."""
    from irforge.testing import fuzz_session6_ops as s6

    model = onnx.load_from_string(s6.gqa())
    cos = numpy_helper.to_array(next(t for t in model.graph.initializer if t.name == "cos"))
    _refused(_constant(model, "cos", np.full_like(cos, np.inf)), "E121", "cos_cache holds inf or NaN")
    import_onnx(onnx.load_from_string(s6.gqa()))  # the finite seed still converts


@pytest.mark.parametrize("edit", ["truncated", "odd_count", "element_type", "offset", "size"])
def test_packed_u4_constants_of_a_broken_ir_are_one_line_errors(tmp_path, edit):
    """IR XML of MatMulNBits' u4 weights [8, 2, 16] (128 bytes) with its .bin cut short, a dim
    added (an odd element count), u8 for u4, an offset past the end, a size of the unpacked
    bytes: E642, naming the Const."""
    import re

    from irforge.testing.fuzz import run_tool_in_process

    (tmp_path / "m.onnx").write_bytes(s7.SEEDS["nbits4.onnx"]())
    assert run_tool_in_process("ir-convert", ["-m", str(tmp_path / "m.onnx"), "-o", str(tmp_path)])[0] == 0
    xml, weights = (tmp_path / "m.xml").read_bytes(), (tmp_path / "m.bin").read_bytes()
    data = re.search(rb'element_type="u4" shape="8, 2, 16" offset="0" size="128"', xml)
    assert data, "the seed's IR no longer holds its weights as u4"
    new = {"odd_count": b'element_type="u4" shape="8, 2, 16, 3" offset="0" size="128"',
           "element_type": b'element_type="u8" shape="8, 2, 16" offset="0" size="128"',
           "offset": b'element_type="u4" shape="8, 2, 16" offset="%d" size="128"' % (len(weights) - 1),
           "size": b'element_type="u4" shape="8, 2, 16" offset="0" size="256"'}.get(edit, data.group(0))
    (tmp_path / "m.xml").write_bytes(xml.replace(data.group(0), new))
    (tmp_path / "m.bin").write_bytes(weights[:100] if edit == "truncated" else weights)
    code, err, escaped = run_tool_in_process("ir-run", [str(tmp_path / "m.xml"), "--output", str(tmp_path / "o.npz")])
    assert (code, escaped) == (2, ""), err
    assert len(err.strip().splitlines()) == 1 and "error[E642]" in err and "MatMulNBits_y/weights/q" in err, err


@pytest.mark.parametrize("mode", ["linear", "circular"])
def test_tensor_scatter_negative_start_is_an_error_not_a_write_from_the_end(mode):
    """A run-time write index of -1 (onnxruntime: an error) was scattered from the cache's end
    (linear) or wrapped (circular); now its row's indices are out of range: E880 on ref / cpu.
    A constant one is E116 naming the negative start (it said "linear mode" in circular)."""
    from irforge.backends.reference import run

    model = _set(_seed("tscatter.onnx"), "TensorScatter", mode=mode)
    rng = np.random.default_rng(0)
    feeds = {"past": rng.standard_normal((2, 3, 8, 4)).astype(np.float32), "update": rng.standard_normal((2, 3, 3, 4)).astype(np.float32),
             "upd1": rng.standard_normal((2, 2, 8, 4)).astype(np.float32), "starts": np.array([-1, 0], np.int64)}
    with pytest.raises(IrforgeError, match="index 8 is out of range") as err:
        run(import_onnx(model), feeds)
    assert err.value.code == "E880"
    feeds["starts"] = np.array([5, 0], np.int64)
    y = run(import_onnx(model), feeds)["y"]
    np.testing.assert_array_equal(y[0, :, 5:8], feeds["update"][0])  # a valid start still writes
    model.graph.initializer.append(numpy_helper.from_array(np.array([-1, 0], np.int64), "starts"))
    model.graph.input.remove(next(i for i in model.graph.input if i.name == "starts"))
    _refused(model, "E116", r"write_indices \[-1, 0\] hold a negative start")


def _retyped(model: onnx.ModelProto, **shapes: list[int]) -> onnx.ModelProto:
    for name, shape in shapes.items():
        vi = next(v for v in model.graph.input if v.name == name)
        vi.CopyFrom(helper.make_tensor_value_info(name, vi.type.tensor_type.elem_type, shape))
    return model


def test_linear_attention_of_zero_steps_is_a_one_line_error():
    """T = 0 raised IndexError while unrolling."""
    model = _retyped(_seed("linattn.onnx"), q=[2, 0, 12], k=[2, 0, 6], v=[2, 0, 4], decay=[2, 0, 2], beta=[2, 0, 2])
    _refused(model, "E041", "are empty")


def test_fused_matmul_trans_batch_with_inputs_of_two_ranks_is_refused():
    """transBatchA with B of rank 2: onnxruntime's kernel refuses it (inputs of one rank >= 3);
    irforge broadcast it into a number."""
    model = _set(_retyped(_seed("fmmbatch.onnx"), b=[4, 6]), "FusedMatMul", transBatchB=0)
    _refused(model, "E041", "transBatchA / transBatchB need inputs of one rank, got ranks 4 and 2")


def test_mlir_constant_out_of_its_element_types_range_is_a_one_line_error():
    """A .mlir whose u4 zero point `dense<8> : tensor<1x1x1xui8>` was edited to `tensor<i1>`:
    xDSL's parser raised ValueError (an internal error)."""
    from irforge.model import parse_module

    text = 'func.func @main() -> tensor<i1> {\n  %0 = nn.constant dense<8> : tensor<i1> {bits = 4 : i64}\n  func.return %0 : tensor<i1>\n}\n'
    with pytest.raises(IrforgeError, match="Integer value 8 is out of range for type i1") as err:
        parse_module(text, source="m.mlir")
    assert err.value.code == "E695"


@pytest.mark.parametrize("zero_point", [("INT4", [1] * 9), ("UINT8", None)])
def test_dequantize_zero_point_of_another_type_than_x_is_refused(zero_point):
    """UINT4 weights with INT4 or uint8 zero points (onnxruntime: a type error) were read with
    the zero points as they were."""
    model = _seed("int4axis.onnx")
    kind, values = zero_point
    if values is None:
        _constant(model, "uz", np.ones((3, 3), np.uint8))
    else:
        next(t for t in model.graph.initializer if t.name == "uz").CopyFrom(helper.make_tensor("uz", onnx.TensorProto.INT4, [3, 3], values))
    _refused(model, "E041", f"x_zero_point of type {'INT4' if values else 'uint8'} differs from x's UINT4")


def test_matmul_nbits_weights_not_n_by_blocks_by_blob_are_refused():
    """B given flat [128] (the right byte count): onnxruntime refuses the shape, irforge read it."""
    model = _constant(_seed("nbits4.onnx"), "B", np.zeros(128, np.uint8))
    _refused(model, "E041", r"packed weights \[128\] \(uint8\) / scales \[16\] \(float16\) do not fit")


@pytest.mark.parametrize("to", [onnx.TensorProto.INT32, onnx.TensorProto.BOOL])
def test_cast_to_a_non_float_type_declared_float16_is_e147(to):
    """Cast to INT32 / BOOL of an output the file declares FLOAT16: irforge returned int32 /
    bool values for it (E147 checked only float-to-float contradictions)."""
    model = _seed("halfmix.onnx")
    next(n for n in model.graph.node if n.output[0] == "y16").attribute[0].i = to
    _refused(model, "E147", f"Cast to {onnx.TensorProto.DataType.Name(to)} but the file declares its output 'y16' FLOAT16")


def test_tf_function_output_index_not_a_number_is_e362(tmp_path):
    """A TF If branch function returning 'both:outpu\\0\\0\\0' (bytes zeroed in the file): int()
    raised ValueError (an internal error)."""
    from irforge.testing import fuzz_control_flow
    from irforge.testing.fuzz import run_tool_in_process

    data = fuzz_control_flow.tf_seeds()["if.pb"]
    assert data.count(b"both:output:0") == 1
    (tmp_path / "if.pb").write_bytes(data.replace(b"both:output:0", b"both:outpu\x00\x00\x00"))
    code, err, escaped = run_tool_in_process("ir-run", [str(tmp_path / "if.pb"), "--output", str(tmp_path / "o.npz")])
    assert (code, escaped) == (2, "") and "error[E362]" in err and "whose output index is not a number" in err, err


def test_scale_shift_fusion_leaves_a_scalar_alone():
    """x * s + t of rank-0 x (a mutated QLinear chain): channel_vector took axis % 0."""
    from irforge.passes.patterns.affine import channel_vector

    assert channel_vector(np.array(2.0), (), -1) is None
    np.testing.assert_array_equal(channel_vector(np.array([[1.0], [2.0]]), (3, 2, 5), 1), [1.0, 2.0])


def test_bitcast_without_to_at_an_opset_irforge_has_no_schema_for_is_e041():
    """BitCast without `to` in a model of opset 13 (the schema check knows no BitCast there):
    int(None) raised TypeError."""
    model = _seed("bitcast.onnx")
    model.opset_import[0].version = 13
    node = next(n for n in model.graph.node if n.output[0] == "ua")
    del node.attribute[:]
    _refused(model, "E041", "BitCast needs the attribute to")


def test_cast_declared_as_an_unknown_type_number_is_e147():
    """A Cast output declared elem_type 99: naming it raised ValueError in E147's message."""
    model = _seed("halfmix.onnx")
    next(v for v in model.graph.output if v.name == "y16").type.tensor_type.elem_type = 99
    _refused(model, "E147", "declares its output 'y16' type 99")


def test_loss_ignore_index_beyond_the_targets_type_ignores_nothing():
    """ignore_index 2**40 with int32 targets: OverflowError making the constant; no int32 target
    equals it, so nothing is ignored (onnxruntime's numbers)."""
    from irforge.backends.reference import run

    from tests.helpers import ort_session_run

    model = _set(_seed("losses.onnx"), "NegativeLogLikelihoodLoss", ignore_index=2**40)
    target = next(v for v in model.graph.input if v.name == "t")
    target.type.tensor_type.elem_type = onnx.TensorProto.INT32
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((3, 5, 2)).astype(np.float32), "t": rng.integers(0, 5, (3, 2)).astype(np.int32)}
    got = run(import_onnx(model), feeds)
    want = ort_session_run(model, feeds)
    np.testing.assert_allclose(got["nll"], want[0], rtol=1e-5, atol=1e-6)
