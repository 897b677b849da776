"""ONNX extractors, one module per op family; importing this registers them all."""

from irforge.frontends.onnx.extractors import (
    activation,
    conv,
    einsum,
    elementwise,
    indexing,
    linear,
    normalization,
    quantize,
    recurrent,
    reduce,
    resample,
    shape,
)

FAMILIES = (activation, conv, einsum, elementwise, indexing, linear, normalization, quantize, recurrent, reduce, resample, shape)
