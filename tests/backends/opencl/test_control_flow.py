"""nn.if / nn.loop on the OpenCL backend: the HETERO fallback runs them on the host (static
If between OpenCL kernels; a Loop with scan outputs in a host segment), like onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.opencl import compile_model
from irforge.frontends.onnx.importer import import_onnx
from tests.frontends.test_onnx_control_flow_regions import counted_loop_model, data_if_model
from tests.helpers import ort_session_run, rand

CASES = {
    "if-then": (data_if_model, {"x": np.abs(rand(2, 3, seed=1))}),
    "if-else": (data_if_model, {"x": -np.abs(rand(2, 3, seed=1))}),
    "counted-loop": (counted_loop_model, {"x": rand(2, 3, seed=2), "n": np.array(3, np.int64)}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_if_and_loop_fall_back_to_the_host(case):
    make, feeds = CASES[case]
    model = make()
    compiled = compile_model(import_onnx(model))
    got = compiled(feeds)
    for out, want in zip(model.graph.output, ort_session_run(model, feeds)):
        assert got[out.name].shape == want.shape
        np.testing.assert_allclose(got[out.name], want, rtol=1e-5, atol=1e-6)
