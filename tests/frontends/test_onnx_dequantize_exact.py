"""DequantizeLinear computes (q - z) * s exactly as onnxruntime does on ref and cpu.

Reduced from torchvision's quantized Inception v3 (TorchScript export, random weights): its
last QuantizeLinear -> Cast -> DequantizeLinear has s = 6.9e10, z = 100 and every logit
quantizes to q == z, so onnxruntime reads exactly 0. fuse-linear-ops used to merge the
dequantization's sub -> mul into q * s + (-z * s), whose two roundings left 32768 (ref and
cpu alike). The chain now stays sub -> mul (`fuse_linear_ops.dequantization`). OpenVINO's
CPU plugin fuses the IR's Subtract -> Multiply itself; its result is checked within 1e-5 of
one quantization step.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.frontends.onnx.importer import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.backends.ir_xml_support import run_openvino
from tests.helpers import ort_session_run

CASES = {
    # Inception v3's last layer: uint8, z = 100, a huge scale
    "inception_fc": (np.float32(6.908603e10), np.uint8(100)),
    # an int8 zero point and an ordinary scale
    "int8": (np.float32(0.0123), np.int8(-37)),
}


def qdq_model(scale: np.floating, zp: np.integer) -> onnx.ModelProto:
    """x -> QuantizeLinear -> Cast (as torch's TorchScript exporter writes it) -> DequantizeLinear."""
    to = TensorProto.UINT8 if zp.dtype == np.uint8 else TensorProto.INT8
    inits = [numpy_helper.from_array(np.array(scale), "s"), numpy_helper.from_array(np.array(zp), "z")]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
        helper.make_node("Cast", ["q"], ["qc"], to=to),
        helper.make_node("DequantizeLinear", ["qc", "s", "z"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 12])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("case", list(CASES))
def test_dequantize_matches_onnxruntime_exactly(case: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    scale, zp = CASES[case]
    proto = qdq_model(scale, zp)
    path = tmp_path / "qdq.onnx"
    onnx.save(proto, path)
    # steps -5..6 around the zero point: q == z among them (0 exactly in onnxruntime)
    x = ((np.arange(12, dtype=np.float32) - 5) * scale)[None]
    want = ort_session_run(proto, {"x": x})[0]
    assert np.count_nonzero(want == 0) == 1
    model = import_onnx(str(path))
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    np.testing.assert_array_equal(next(iter(run(model, {"x": x}).values())), want)
    np.testing.assert_array_equal(next(iter(compile_model(model)({"x": x}).values())), want)
    write_ir_xml(model, tmp_path / "qdq.xml")
    got = next(iter(run_openvino(tmp_path / "qdq.xml", {"x": x}).values()))
    assert np.max(np.abs(got - want)) <= 1e-5 * float(scale)
