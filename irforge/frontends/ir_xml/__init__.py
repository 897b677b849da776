"""The OpenVINO IR frontend: `NAME.xml` + `NAME.bin` (written by irforge or by OpenVINO) into
the `nn` dialect, weights memory-mapped from the .bin."""

from irforge.frontends.ir_xml.context import READERS, LayerContext, ir_layer_reader
from irforge.frontends.ir_xml.importer import read_ir_xml

__all__ = ["READERS", "LayerContext", "ir_layer_reader", "read_ir_xml"]
