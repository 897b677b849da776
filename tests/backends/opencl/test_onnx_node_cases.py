"""ONNX's backend node cases through the OpenCL backend, for op families with OpenCL
kernels, compared with each case's expected outputs at its own tolerances."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.opencl import compile_model
from irforge.frontends.onnx.conformance import _array, import_freezing, supported_cases
from irforge.frontends.onnx.importer import model_inputs
from irforge.frontends.onnx.sequences import flatten_expected
from irforge.model import Model, input_names
from irforge.passes import apply_pipeline
from tests.frontends.test_onnx_node_cases import XFAIL

FAMILIES = (
    "conv", "convtranspose", "averagepool", "maxpool", "globalaveragepool", "globalmaxpool", "gemm", "matmul",
    "softmax", "logsoftmax", "transpose", "concat", "split", "batchnorm", "lrn", "mvn", "instancenorm", "layer",
    "relu", "leakyrelu", "prelu", "sigmoid", "elu", "selu", "gelu", "clip", "add", "sub", "mul", "div", "resize",
    "argmax", "gather", "reduce",
)
# empty inputs are left out: set-shapes (which gives the backend its static shapes) takes
# positive sizes only; "_expanded" variants (the op as a graph of other ops already covered)
# too, to keep the suite fast on a CPU OpenCL driver
EMPTY = ("empty_set", "zero_size", "_expanded")
CASES = [
    c for c in supported_cases()
    if c.name.split("_")[1] in FAMILIES and c.name not in XFAIL and not any(e in c.name for e in EMPTY)
]


def test_enough_cases_selected():
    assert len(CASES) > 300


def with_static_shapes(model: Model, feeds: dict[str, np.ndarray]) -> None:
    """The OpenCL backend compiles for static shapes: those of the case's inputs."""
    spec = ",".join(f"{name}[{','.join(map(str, feeds[name].shape))}]" for name in input_names(model.func))
    if spec:
        apply_pipeline(model.module, f'set-shapes{{shapes="{spec}"}}')


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_node_case_on_opencl(case):  # type: ignore[no-untyped-def]
    names = model_inputs(case.model)
    for inputs, expected in case.data_sets:
        inputs, expected = [_array(v) for v in inputs], flatten_expected([_array(v) for v in expected])
        model, feeds = import_freezing(case.model, dict(zip(names, inputs)))
        with_static_shapes(model, feeds)
        compiled = compile_model(model)
        if compiled.fallbacks:
            pytest.skip("; ".join(f.describe() for f in compiled.fallbacks))
        with np.errstate(all="ignore"):
            outputs = list(compiled(feeds).values())
        for got, want in zip(outputs, expected, strict=True):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
