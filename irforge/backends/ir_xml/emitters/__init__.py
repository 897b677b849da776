"""Emitters of the `nn` ops, one module per dialect family; importing them fills the table."""

from irforge.backends.ir_xml.emitters import conv, detection, elementwise, linear, shape

FAMILIES = (conv, detection, elementwise, linear, shape)
