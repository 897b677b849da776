"""Emitters of the `nn` ops, one module per dialect family; importing them fills the table."""

from irforge.backends.ir_xml.emitters import attention, control_flow, conv, detection, elementwise, grid_sample, indexing, linear, quantize, recurrent, shape, unique, unpool

FAMILIES = (attention, control_flow, conv, detection, elementwise, grid_sample, indexing, linear, quantize, recurrent, shape, unique, unpool)
