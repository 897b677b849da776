"""Reference kernels, one module per dialect family; importing this registers them all."""

from irforge.backends.reference.kernels import activation, conv, detection, elementwise, linear, normalization, rcnn, reduce, resample, shape, yolo

FAMILIES = (activation, conv, detection, elementwise, linear, normalization, rcnn, reduce, resample, shape, yolo)
