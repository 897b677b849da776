"""Custom layers (irforge.custom.CustomOp) on the OpenCL device: with their own OpenCL
kernel (run on the device between generated kernels), and without one (HETERO)."""

from __future__ import annotations

import numpy as np

from irforge.backends.opencl import compile_model
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.custom import Attr, CustomOp, OpenCLKernel
from irforge.dialects.nn import Convolution, ReLU
from tests.helpers import rand

AXPB_SOURCE = """
__kernel void opencl_test_axpb(__global const float* x, __global float* y, const float a, const float b) {
    const size_t i = get_global_id(0);
    y[i] = a * x[i] + b;
}
"""


class Axpb(CustomOp):
    extension = "opencl_test"
    op = "axpb"
    attrs = {"a": Attr(float, 2.0), "b": Attr(float, -0.5)}
    opencl = OpenCLKernel(
        source=AXPB_SOURCE, entry="opencl_test_axpb",
        global_size=lambda op, shapes: (int(np.prod(shapes[0])),), scalars=lambda op: (op.a, op.b),
    )

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.a * x + self.b


class Cube(CustomOp):
    extension = "opencl_test"
    op = "cube"

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x * x * x


def model_with(custom: type[CustomOp], **attrs: object):  # type: ignore[no-untyped-def]
    """conv -> custom -> relu: the custom op reads an arena tensor and feeds a kernel."""
    b = ModelBuilder()
    x = b.input("x", (1, 2, 5, 5))
    conv = b.add(Convolution, [x, b.constant(rand(3, 2, 3, 3, seed=1), "w")])
    layer = b.add(custom.op_class, [conv.output], **attrs)
    b.output(b.add(ReLU, [layer.results[0]]).output, "y")
    return b.finish()


def test_custom_layer_runs_its_opencl_kernel():
    model = model_with(Axpb, a=3.0, b=0.25)
    compiled = compile_model(model)
    assert compiled.fallbacks == []
    entries = [s.kernel for s in compiled._executable.program.steps]
    assert "opencl_test_axpb" in entries
    x = rand(1, 2, 5, 5, seed=3)
    np.testing.assert_allclose(compiled({"x": x})["y"], run(model, {"x": x})["y"], rtol=1e-5, atol=1e-6)


def test_custom_layer_without_opencl_kernel_falls_back_to_forward():
    model = model_with(Cube)
    compiled = compile_model(model)
    assert [(f.op, f.executor) for f in compiled.fallbacks] == [("opencl_test.cube", "reference")]
    x = rand(1, 2, 5, 5, seed=4)
    np.testing.assert_allclose(compiled({"x": x})["y"], run(model, {"x": x})["y"], rtol=1e-5, atol=1e-6)
