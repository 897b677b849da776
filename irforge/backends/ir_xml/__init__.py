"""The OpenVINO IR v11 backend: `nn` models written as `NAME.xml` + `NAME.bin` that the
OpenVINO runtime reads (`openvino.Core().read_model`)."""

from irforge.backends.ir_xml.context import EmitContext, Port, register_ir_xml_emitter
from irforge.backends.ir_xml.mapping import EMITTERS, custom_layer
from irforge.backends.ir_xml.writer import DATA_TYPES, emit_graph, write_ir_xml

__all__ = [
    "DATA_TYPES",
    "EMITTERS",
    "EmitContext",
    "Port",
    "custom_layer",
    "emit_graph",
    "register_ir_xml_emitter",
    "write_ir_xml",
]
