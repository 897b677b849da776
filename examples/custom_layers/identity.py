"""The template extension of the custom-layer guides: an Identity op with its own CPU and
OpenCL kernels, mapped from the ONNX op com.example.CustomIdentity. Made with

    ir-extgen new --op CustomIdentity --framework onnx --domain com.example --cpu --gpu -o DIR

and left as the identity: it shows where each part of a custom layer goes (the op and its
shape inference, the framework mapping, the numpy forward, the native CPU kernel through
llvmlite, the OpenCL kernel) and runs the same on --device ref, cpu and gpu.
"""

from __future__ import annotations

import numpy as np

from irforge.custom import Attr, CpuKernel, CustomOp, OpenCLKernel, op_extension
from irforge.custom.cpu import elementwise_kernel


def _cpu_kernel(module, op, shapes):  # type: ignore[no-untyped-def]
    """YOUR MATH (native): the value of one output element from one input element, as LLVM IR
    (llvmlite's IRBuilder `b`; op attributes as `op.<name>`). As generated, the identity."""
    return elementwise_kernel(module, "custom_identity", shapes[0], lambda b, x: x)


# YOUR MATH (OpenCL): one work-item per output element; as generated, the identity
OPENCL_SOURCE = """
__kernel void custom_identity(__global const float* x, __global float* y) {
    const size_t i = get_global_id(0);
    y[i] = x[i];
}
"""


class CustomIdentity(CustomOp):
    """y = x, computed by whichever kernel the device has."""

    extension = "custom_identity_ext"  # its dialect, and the `version` of its IR XML layer
    op = "custom_identity"
    num_inputs, num_outputs = 1, 1
    attrs: dict[str, Attr] = {}
    cpu = CpuKernel(build=_cpu_kernel)
    opencl = OpenCLKernel(source=OPENCL_SOURCE, entry="custom_identity", global_size=lambda op, shapes: (int(np.prod(shapes[0])),))

    def infer(self, shapes, dtypes):  # type: ignore[no-untyped-def]
        """Output shapes and element types from the inputs' (YOUR MATH if not the identity)."""
        return [(shapes[0], dtypes[0])]

    def forward(self, x: np.ndarray) -> np.ndarray:
        """The reference implementation, numpy (YOUR MATH); also the fallback of the backends."""
        return x.copy()


op_extension("onnx", "CustomIdentity", CustomIdentity, domain="com.example")
