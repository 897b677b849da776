"""Fuzz findings of session 6 (node-suite models of the session's new ops, mutated): each was
an internal error and is now a one-line coded error."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from irforge.errors import IrforgeError
from irforge.frontends.onnx.importer import import_onnx


def _model(op: str, inputs: list[tuple[str, list[int]]], inits: list[tuple[str, np.ndarray]], opset: int,
           first: int = TensorProto.FLOAT, **attrs: object) -> onnx.ModelProto:
    names = [n for n, _ in inputs] + [n for n, _ in inits]
    graph = helper.make_graph(
        [helper.make_node(op, names, ["y"], **attrs)], "g",
        [helper.make_tensor_value_info(n, first if i == 0 else TensorProto.FLOAT, s) for i, (n, s) in enumerate(inputs)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a, n) for n, a in inits],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize(
    ("model", "words"),
    [
        # a run-time per-axis scale on a scalar input: `axis % 0` (ZeroDivisionError)
        (_model("DequantizeLinear", [("x", []), ("s", [3])], [], 19, TensorProto.UINT16), "along the last axis"),
        # MaxUnpool's output_shape as floats holding NaN (ValueError in int())
        (_model("MaxUnpool", [("x", [1, 1, 2, 2]), ("i", [1, 1, 2, 2])], [("o", np.array([np.nan, 1, 4, 4], np.float32))], 11,
                kernel_shape=[2, 2], strides=[2, 2]), "output_shape must be an integer tensor"),
        # CumProd's axis as a float infinity (OverflowError in int())
        (_model("CumProd", [("x", [5])], [("a", np.array([np.inf], np.float32))], 26), "axis must be an integer tensor"),
    ],
    ids=["dequantize-scalar-runtime-scale", "maxunpool-float-output-shape", "cumprod-float-axis"],
)
def test_finding_is_a_coded_error(model: onnx.ModelProto, words: str) -> None:
    with pytest.raises(IrforgeError) as err:
        import_onnx(model)
    assert words in err.value.what
    assert err.value.code
