"""ONNX extractors, one module per op family; importing this registers them all."""

from irforge.frontends.onnx.extractors import (
    activation,
    attention,
    compositions,
    control_flow,
    conv,
    dft,
    einsum,
    elementwise,
    grid_sample,
    indexing,
    integer_ops,
    legacy_ops,
    linear,
    normalization,
    ort_attention,
    ort_contrib,
    ort_gather_quantized,
    ort_gqa,
    ort_mha,
    ort_rotary,
    quantize,
    quantize_contrib,
    recurrent,
    reduce,
    resample,
    scan,
    sequence_grid_ops,
    shape,
)

FAMILIES = (activation, attention, compositions, control_flow, conv, dft, einsum, elementwise, grid_sample, indexing, integer_ops, legacy_ops, linear, normalization, ort_attention, ort_contrib, ort_gather_quantized, ort_gqa, ort_mha, ort_rotary, quantize, quantize_contrib, recurrent, reduce, resample, scan, sequence_grid_ops, shape)
