"""Custom layers: a new op for a layer irforge does not know, declared in one Python module.

A user's module (loaded with `--extensions PATH` by every tool) subclasses `CustomOp` for the
op (attributes, shape inference, numpy `forward`, optional CPU and OpenCL kernels, its IR XML
layer type) and maps framework ops to it with `op_extension` (one to one) or
`conversion_extension` (one to many). `ir-extgen new` writes a working template of such a
module and its test.
"""

from irforge.custom.mapping import ConversionNode, conversion_extension, op_extension, python_param_dict
from irforge.custom.op import CUSTOM_OPS, Attr, CpuKernel, CustomOp, OpenCLKernel

__all__ = [
    "CUSTOM_OPS",
    "Attr",
    "ConversionNode",
    "CpuKernel",
    "CustomOp",
    "OpenCLKernel",
    "conversion_extension",
    "op_extension",
    "python_param_dict",
]
