"""ONNX extractors, one module per op family; importing this registers them all."""

from irforge.frontends.onnx.extractors import (
    activation,
    compositions,
    control_flow,
    conv,
    dft,
    einsum,
    elementwise,
    grid_sample,
    indexing,
    integer_ops,
    linear,
    normalization,
    quantize,
    quantize_contrib,
    recurrent,
    reduce,
    resample,
    shape,
)

FAMILIES = (activation, compositions, control_flow, conv, dft, einsum, elementwise, grid_sample, indexing, integer_ops, linear, normalization, quantize, quantize_contrib, recurrent, reduce, resample, shape)
