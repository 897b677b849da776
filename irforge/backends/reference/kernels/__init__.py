"""Reference kernels, one module per dialect family; importing this registers them all."""

from irforge.backends.reference.kernels import activation, conv, elementwise, reduce, resample

FAMILIES = (activation, conv, elementwise, reduce, resample)
