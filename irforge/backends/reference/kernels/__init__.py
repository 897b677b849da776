"""Reference kernels, one module per dialect family; importing this registers them all."""

from irforge.backends.reference.kernels import activation, attention, bitwise, boxes, control_flow, conv, deformable, detection, elementwise, grid_sample, indexing, linear, normalization, quantize, rcnn, recurrent, reduce, resample, shape, unique, unpool, yolo

FAMILIES = (activation, attention, bitwise, boxes, control_flow, conv, deformable, detection, elementwise, grid_sample, indexing, linear, normalization, quantize, rcnn, recurrent, reduce, resample, shape, unique, unpool, yolo)
