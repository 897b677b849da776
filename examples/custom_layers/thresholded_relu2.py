"""ThresholdedRelu2 (y = x if x > alpha else 0) as a custom layer with its own op, an OpenCL
kernel that receives the attribute `alpha`, and the OpenVINO op that runs the IR in
OpenVINO's own runtime. Mapped from the ONNX op com.example.ThresholdedRelu2.

    ir-convert model.onnx --extensions examples/custom_layers/thresholded_relu2.py --output_model m.xml
    ir-run m.xml --extensions examples/custom_layers/thresholded_relu2.py --device gpu

and in OpenVINO (the layer is `type="ThresholdedRelu2" version="example_ext"` in m.xml):

    import openvino as ov, irforge
    core = ov.Core()
    for op_class in irforge.openvino_extensions("examples/custom_layers/thresholded_relu2.py"):
        core.add_extension(op_class)           # ThresholdedRelu2, version example_ext
    compiled = core.compile_model(core.read_model("m.xml"), "CPU")

An OpenCL kernel gets the input buffers, then the output buffers, then the values of
`scalars(op)` in order (an int as `int`, anything else as `float`): attributes reach the
kernel only through `scalars`. A kernel whose parameters do not match is reported as the
extension's error (E993) before anything runs.
"""

from __future__ import annotations

import numpy as np

from irforge.custom import Attr, CustomOp, OpenCLKernel, op_extension

OPENCL_SOURCE = """
__kernel void thresholded_relu2(__global const float* x, __global float* y, const float alpha) {
    const size_t i = get_global_id(0);
    y[i] = x[i] > alpha ? x[i] : 0.0f;
}
"""


class ThresholdedRelu2(CustomOp):
    """y = x where x > alpha, else 0."""

    extension = "example_ext"
    op = "thresholded_relu2"
    attrs = {"alpha": Attr(float, 1.0)}
    opencl = OpenCLKernel(
        source=OPENCL_SOURCE,
        entry="thresholded_relu2",
        global_size=lambda op, shapes: (int(np.prod(shapes[0])),),
        scalars=lambda op: [float(op.alpha)],  # -> `const float alpha`, after the buffers
    )

    def forward(self, x: np.ndarray) -> np.ndarray:
        return np.where(x > self.alpha, x, 0).astype(x.dtype)


op_extension("onnx", "ThresholdedRelu2", ThresholdedRelu2, domain="com.example")
