"""Emitters of the `nn` ops, one module per dialect family; importing them fills the table."""

from irforge.backends.ir_xml.emitters import attention, bitwise, control_flow, conv, deformable, detection, elementwise, grid_sample, indexing, linear, quantize, recurrent, shape, unique, unpool

FAMILIES = (attention, bitwise, control_flow, conv, deformable, detection, elementwise, grid_sample, indexing, linear, quantize, recurrent, shape, unique, unpool)
