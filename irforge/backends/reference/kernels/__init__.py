"""Reference kernels, one module per dialect family; importing this registers them all."""

from irforge.backends.reference.kernels import activation, attention, conv, detection, elementwise, linear, normalization, quantize, rcnn, recurrent, reduce, resample, shape, yolo

FAMILIES = (activation, attention, conv, detection, elementwise, linear, normalization, quantize, rcnn, recurrent, reduce, resample, shape, yolo)
