"""Reference kernels, one module per dialect family; importing this registers them all."""

from irforge.backends.reference.kernels import activation, conv, elementwise, linear, normalization, reduce, resample, shape

FAMILIES = (activation, conv, elementwise, linear, normalization, reduce, resample, shape)
