"""Printing an `IrGraph` as IR v11 XML, laid out as OpenVINO's own serializer does.

Hand-written rather than through ElementTree so that the layout (tab indentation, attribute
order, self-closing tags) is fixed and two runs give byte-identical files.
"""

from __future__ import annotations

from collections.abc import Mapping
from xml.sax.saxutils import quoteattr

from irforge.backends.ir_xml.graph import IrGraph, Layer, PortType


def escape_name(name: str) -> str:
    """A tensor name inside the comma-separated `names` list (OpenVINO escapes commas)."""
    return name.replace("\\", "\\\\").replace(",", "\\,")


def _attrs(values: Mapping[str, str]) -> str:
    return "".join(f" {key}={quoteattr(value)}" for key, value in values.items())


def _port(lines: list[str], port_id: int, t: PortType, names: list[str], indent: str) -> None:
    extra = {"names": ",".join(escape_name(n) for n in names)} if names else {}
    if not t.dims:
        lines.append(f'{indent}<port id="{port_id}" precision="{t.precision}"{_attrs(extra)} />')
        return
    lines.append(f'{indent}<port id="{port_id}" precision="{t.precision}"{_attrs(extra)}>')
    lines.extend(f"{indent}\t<dim>{d}</dim>" for d in t.dims)
    lines.append(f"{indent}</port>")


def _layer(lines: list[str], layer: Layer) -> None:
    head = {"id": str(layer.id), "name": layer.name, "type": layer.type, "version": layer.version, **layer.attributes}
    lines.append(f"\t\t<layer{_attrs(head)}>")
    if layer.data:
        lines.append(f"\t\t\t<data{_attrs(layer.data)} />")
    if layer.rt_info:
        lines.append("\t\t\t<rt_info>")
        lines.extend(f'\t\t\t\t<attribute name={quoteattr(a)} version="0" />' for a in layer.rt_info)
        lines.append("\t\t\t</rt_info>")
    if layer.inputs:
        lines.append("\t\t\t<input>")
        for i, t in enumerate(layer.inputs):
            _port(lines, i, t, [], "\t\t\t\t")
        lines.append("\t\t\t</input>")
    if layer.outputs:
        lines.append("\t\t\t<output>")
        for i, t in enumerate(layer.outputs):
            _port(lines, layer.output_port_id(i), t, layer.output_names[i], "\t\t\t\t")
        lines.append("\t\t\t</output>")
    lines.append("\t\t</layer>")


def graph_xml(graph: IrGraph) -> str:
    """The XML text of `graph`; Const layers must already have offset and size in `data`."""
    lines = ['<?xml version="1.0"?>', f"<net name={quoteattr(graph.name)} version=\"11\">", "\t<layers>"]
    for layer in graph.layers:
        _layer(lines, layer)
    lines.append("\t</layers>")
    lines.append("\t<edges>")
    for e in graph.edges:
        lines.append(
            f'\t\t<edge from-layer="{e.from_layer}" from-port="{e.from_port}" '
            f'to-layer="{e.to_layer}" to-port="{e.to_port}" />'
        )
    lines.append("\t</edges>")
    lines.append("</net>")
    return "\n".join(lines) + "\n"
