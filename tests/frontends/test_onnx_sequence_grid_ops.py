"""ReverseSequence, CenterCropPad, AffineGrid, SwiGLU and CumProd, imported as standard ONNX
nodes (`extractors/sequence_grid_ops.py`), against onnxruntime (or ONNX's reference where
onnxruntime lacks the opset) on ref and cpu; unsupported forms refused with E184."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.helpers import ort_session_run


def model(node: onnx.NodeProto, inputs: list, outputs: list, opset: int, inits: list = ()) -> onnx.ModelProto:
    graph = helper.make_graph([node], node.op_type, inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def check(proto: onnx.ModelProto, feeds: dict, use_ort: bool = True) -> None:
    want = ort_session_run(proto, feeds) if use_ort else ReferenceEvaluator(proto).run(None, feeds)
    imported = import_onnx(proto)
    apply_pipeline(imported.module, DEFAULT_PIPELINE)
    for got in (run(imported, feeds), compile_model(imported)(feeds)):
        for value, expected in zip(got.values(), want, strict=True):
            assert value.dtype == expected.dtype and value.shape == expected.shape
            np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("time_axis", [0, 1])
def test_reverse_sequence_with_run_time_lengths(time_axis):
    shape = [5, 3, 4] if time_axis == 0 else [3, 5, 4]
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"], time_axis=time_axis, batch_axis=1 - time_axis)
    proto = model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape), helper.make_tensor_value_info("lens", TensorProto.INT64, [3])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], 10)
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    for lens in ([5, 1, 3], [0, 5, 2]):
        check(proto, {"x": x, "lens": np.array(lens, np.int64)})


@pytest.mark.parametrize("target,axes", [([4, 7], [1, 2]), ([3, 2, 9], None), ([6], [-1])])
def test_center_crop_pad(target, axes):
    shape = [3, 5, 4] if axes != [-1] else [2, 3]
    out = list(shape)
    for a, t in zip(axes or range(len(shape)), target):
        out[a] = t
    attrs = {} if axes is None else {"axes": axes}
    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"], **attrs)
    proto = model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)], [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)], 18,
                  [onnx.numpy_helper.from_array(np.array(target, np.int64), "shape")])
    check(proto, {"x": np.random.default_rng(1).normal(size=shape).astype(np.float32)})


@pytest.mark.parametrize("size", [[2, 3, 4, 5], [2, 3, 1, 6], [2, 1, 3, 4, 5]])
@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid(size, align):
    dims = len(size) - 2
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align)
    proto = model(node, [helper.make_tensor_value_info("theta", TensorProto.FLOAT, [2, dims, dims + 1])],
                  [helper.make_tensor_value_info("grid", TensorProto.FLOAT, [2, *size[2:], dims])], 20,
                  [onnx.numpy_helper.from_array(np.array(size, np.int64), "size")])
    theta = np.random.default_rng(2).normal(size=[2, dims, dims + 1]).astype(np.float32)
    check(proto, {"theta": theta}, use_ort=size[2] != 1)  # a size-1 axis with align_corners: runtimes differ; ONNX's reference is the spec


def test_swiglu_matches_onnx_reference():
    node = helper.make_node("SwiGLU", ["a", "b"], ["y"], alpha=1.7)
    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 8]) for n in ("a", "b")]
    proto = model(node, info, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8])], 28)
    rng = np.random.default_rng(3)
    check(proto, {"a": rng.normal(size=[2, 8]).astype(np.float32), "b": rng.normal(size=[2, 8]).astype(np.float32)}, use_ort=False)


@pytest.mark.parametrize("reverse,exclusive", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cum_prod_matches_onnx_reference(reverse, exclusive):
    node = helper.make_node("CumProd", ["x", "axis"], ["y"], reverse=reverse, exclusive=exclusive)
    proto = model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])], 26,
                  [onnx.numpy_helper.from_array(np.array(-1, np.int64), "axis")])
    check(proto, {"x": np.random.default_rng(4).uniform(0.5, 1.5, [3, 5]).astype(np.float32)}, use_ort=False)


def test_cum_prod_over_a_long_axis_is_refused_by_name():
    node = helper.make_node("CumProd", ["x", "axis"], ["y"])
    proto = model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1000])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1000])], 26,
                  [onnx.numpy_helper.from_array(np.array(1, np.int64), "axis")])
    with pytest.raises(IrforgeError) as e:
        import_onnx(proto)
    assert e.value.code == "E184" and "1000 elements" in e.value.what


def test_reverse_sequence_of_dynamic_steps_and_batch_matches_onnxruntime():
    node = helper.make_node("ReverseSequence", ["x", "lens"], ["y"], time_axis=1, batch_axis=0)
    proto = model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", "T", 4]), helper.make_tensor_value_info("lens", TensorProto.INT64, ["B"])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", "T", 4])], 10)
    imported = import_onnx(proto)
    rng = np.random.default_rng(6)
    for b, t in ((3, 5), (2, 7)):
        feeds = {"x": rng.normal(size=[b, t, 4]).astype(np.float32), "lens": rng.integers(0, t + 1, b).astype(np.int64)}
        (want,) = ort_session_run(proto, feeds)
        np.testing.assert_array_equal(run(imported, feeds)["y"], want)


def test_compositions_run_in_openvino_from_ir_xml(tmp_path):
    """ReverseSequence (run-time lengths), CenterCropPad and AffineGrid written as IR XML give
    onnxruntime's numbers in OpenVINO (f32)."""
    from irforge.backends.ir_xml import write_ir_xml
    from tests.backends.ir_xml_support import assert_close, run_openvino

    nodes = [helper.make_node("ReverseSequence", ["x", "lens"], ["rev"], time_axis=0, batch_axis=1),
             helper.make_node("CenterCropPad", ["rev", "shape"], ["crop"], axes=[0, 2]),
             helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=0)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 3, 4]),
                                           helper.make_tensor_value_info("lens", TensorProto.INT64, [3]),
                                           helper.make_tensor_value_info("theta", TensorProto.FLOAT, [2, 2, 3])],
                              [helper.make_tensor_value_info("crop", TensorProto.FLOAT, [4, 3, 7]), helper.make_tensor_value_info("grid", TensorProto.FLOAT, [2, 3, 4, 2])],
                              [onnx.numpy_helper.from_array(np.array([4, 7], np.int64), "shape"), onnx.numpy_helper.from_array(np.array([2, 1, 3, 4], np.int64), "size")])
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    rng = np.random.default_rng(5)
    feeds = {"x": rng.normal(size=[5, 3, 4]).astype(np.float32), "lens": np.array([5, 1, 3], np.int64), "theta": rng.normal(size=[2, 2, 3]).astype(np.float32)}
    want = dict(zip(["crop", "grid"], ort_session_run(proto, feeds)))
    imported = import_onnx(proto)
    apply_pipeline(imported.module, DEFAULT_PIPELINE)
    write_ir_xml(imported, tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", feeds)
    for name, expected in want.items():
        assert_close(got[name], expected, rtol=1e-5, what=name)
