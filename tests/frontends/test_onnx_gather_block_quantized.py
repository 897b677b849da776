"""onnxruntime's com.microsoft GatherBlockQuantized (onnxruntime-genai's int4 embedding table
tied to the LM head) against onnxruntime on ref and cpu: 4 and 8 bits, with and without
zero points; the refused forms."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from tests.helpers import ort_session_run

MS = "com.microsoft"
ROWS, COLUMNS, BLOCK = 10, 64, 32


def gbq_case(bits=4, zero_points=False, **attrs):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(bits + zero_points)
    inits = [numpy_helper.from_array(rng.integers(0, 256, (ROWS, COLUMNS * bits // 8)).astype(np.uint8), "data"),
             numpy_helper.from_array(rng.uniform(0.1, 1, (ROWS, COLUMNS // BLOCK)).astype(np.float32), "scales")]
    names = ["data", "ids", "scales"]
    if zero_points:
        inits.append(numpy_helper.from_array(rng.integers(0, 256, (ROWS, -(-(COLUMNS // BLOCK) * bits // 8))).astype(np.uint8), "zp"))
        names.append("zp")
    node = helper.make_node("GatherBlockQuantized", names, ["y"], domain=MS, bits=bits, block_size=BLOCK, **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    feeds = {"ids": rng.integers(0, ROWS, (2, 3)).astype(np.int64)}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)]), feeds


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("zero_points", [False, True])
def test_gather_block_quantized_matches_onnxruntime(bits, zero_points):
    proto, feeds = gbq_case(bits, zero_points)
    (want,) = ort_session_run(proto, feeds)
    imported = import_onnx(proto)
    for got in (run(imported, feeds), compile_model(imported, cache_dir=False)(feeds)):
        np.testing.assert_allclose(got["y"], want, rtol=1e-6, atol=1e-6)


def test_gather_block_quantized_other_axes_are_refused():
    proto, _ = gbq_case(gather_axis=1, quantize_axis=0)
    with pytest.raises(IrforgeError, match="gather_axis=1") as info:
        import_onnx(proto)
    assert info.value.code == "E186"
