"""ONNX Scan (opset 8 with its batch axis, 9+ with axes and directions), unrolled at import,
against onnxruntime on ref, cpu and OpenVINO (our IR); a scan of unknown length is refused."""

import numpy as np
import onnx
import pytest
from onnx import helper

from irforge.backends.cpu import compile_model
from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

RNG = np.random.default_rng(9)


def body() -> onnx.GraphProto:
    """state s [2], scanned x [2]: s' = s + x, output s' * 2 (the running sum, doubled)."""
    two = helper.make_node("Constant", [], ["two"], value=onnx.numpy_helper.from_array(np.array([2, 2], np.float32)))
    nodes = [two, helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Mul", ["s2", "two"], ["o"])]
    return helper.make_graph(nodes, "body", [helper.make_tensor_value_info(n, 1, [2]) for n in ("s", "x")],
                             [helper.make_tensor_value_info(n, 1, [2]) for n in ("s2", "o")])  # fmt: skip


def scan_model(opset: int, state_shape: list[int], xs_shape: list[int], **attrs) -> onnx.ModelProto:  # type: ignore[no-untyped-def]
    inputs = (["", "s0", "xs"] if opset == 8 else ["s0", "xs"])
    node = helper.make_node("Scan", inputs, ["sf", "ys"], body=body(), num_scan_inputs=1, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("s0", 1, state_shape), helper.make_tensor_value_info("xs", 1, xs_shape)],
                              [helper.make_tensor_value_info(n, 1, None) for n in ("sf", "ys")])  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=3 if opset == 8 else 7)


CASES = {
    "scan9 forward": (11, [2], [5, 2], {}),
    "scan9 reverse input": (11, [2], [5, 2], {"scan_input_directions": [1]}),
    "scan9 input axis 1": (11, [2], [2, 5], {"scan_input_axes": [1]}),
    "scan9 reversed output on axis 1": (11, [2], [5, 2], {"scan_output_directions": [1], "scan_output_axes": [1]}),
    "scan8 batch 3": (8, [3, 2], [3, 4, 2], {}),
}


@pytest.mark.parametrize("name", CASES)
def test_scan_matches_onnxruntime(name, tmp_path):
    from tests.backends.ir_xml_support import run_openvino

    opset, state_shape, xs_shape, attrs = CASES[name]
    proto = scan_model(opset, state_shape, xs_shape, **attrs)
    feeds = {"s0": RNG.standard_normal(state_shape).astype(np.float32), "xs": RNG.standard_normal(xs_shape).astype(np.float32)}
    want = ort_session_run(proto, feeds)
    imported = import_onnx(proto)
    write_ir_xml(imported, tmp_path / "m.xml")
    for got in (run(imported, feeds), compile_model(imported)(feeds), run_openvino(tmp_path / "m.xml", feeds)):
        for g, w in zip(got.values(), want):
            np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-6)


def test_scan_of_unknown_length_is_refused():
    with pytest.raises(IrforgeError) as err:
        import_onnx(scan_model(11, [2], ["n", 2]))
    assert err.value.code == "E135" and "static" in err.value.what
