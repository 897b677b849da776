"""ONNX DFT as products with constant cosine/sine matrices (`extractors/dft.py`; HF FNet's
fftn through torch's dynamo exporter): real and complex inputs, inverse, onesided,
dft_length padding and cutting, opset 17's axis attribute and opset 20's axis input,
against onnxruntime on ref and cpu."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.backends.cpu import compile_model
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.tools.convert_pipeline import DEFAULT_PIPELINE
from tests.helpers import ort_session_run


def dft_model(shape: list[int], opset: int, axis: int, length: int | None = None, **attrs: int):
    inits, inputs = [], ["x"]
    if length is not None or opset >= 20:
        inputs.append("length" if length is not None else "")
        if length is not None:
            inits.append(numpy_helper.from_array(np.array(length, np.int64), "length"))
    if opset >= 20:
        inputs.append("axis")
        inits.append(numpy_helper.from_array(np.array(axis, np.int64), "axis"))
    else:
        attrs["axis"] = axis
    node = helper.make_node("DFT", inputs, ["y"], **attrs)
    graph = helper.make_graph([node], "dft", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


CASES = {
    "real_axis1": ([2, 8, 3, 1], 17, 1, None, {}),
    "fnet_axis2": ([1, 12, 32, 2], 18, 2, None, {}),
    "complex_inverse": ([2, 6, 5, 2], 17, 1, None, dict(inverse=1)),
    "onesided": ([1, 10, 3, 1], 17, 1, None, dict(onesided=1)),
    "padded": ([1, 5, 3, 2], 17, 1, 8, {}),
    "cut": ([1, 9, 3, 1], 17, 1, 6, {}),
    "opset20_default_like": ([3, 7, 2], 20, -2, None, {}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_dft_matches_onnxruntime(case):
    shape, opset, axis, length, attrs = CASES[case]
    proto = dft_model(shape, opset, axis, length, **attrs)
    x = np.random.default_rng(0).normal(0, 1, shape).astype(np.float32)
    (want,) = ort_session_run(proto, {"x": x})
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    for got in (run(model, {"x": x}), compile_model(model)({"x": x})):
        value = next(iter(got.values()))
        assert value.shape == want.shape
        np.testing.assert_allclose(value, want, rtol=1e-4, atol=2e-5)


def test_dft_over_the_part_axis_is_refused():
    with pytest.raises(IrforgeError, match="last axis"):
        import_onnx(dft_model([2, 8, 2], 17, 2))
