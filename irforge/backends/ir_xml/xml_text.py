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


def _layer(lines: list[str], layer: Layer, indent: str = "\t\t") -> None:
    head = {"id": str(layer.id), "name": layer.name, "type": layer.type, "version": layer.version, **layer.attributes}
    inner = indent + "\t"
    lines.append(f"{indent}<layer{_attrs(head)}>")
    if layer.data:
        lines.append(f"{inner}<data{_attrs(layer.data)} />")
    if layer.rt_info:
        lines.append(f"{inner}<rt_info>")
        lines.extend(f'{inner}\t<attribute name={quoteattr(a)} version="0" />' for a in layer.rt_info)
        lines.append(f"{inner}</rt_info>")
    for tag, children in layer.maps:  # If/Loop: port maps and back edges, as OpenVINO prints them
        lines.append(f"{inner}<{tag}>")
        lines.extend(f"{inner}\t<{child}{_attrs(attrs)} />" for child, attrs in children)
        lines.append(f"{inner}</{tag}>")
    if layer.inputs:
        lines.append(f"{inner}<input>")
        for i, t in enumerate(layer.inputs):
            _port(lines, i, t, [], inner + "\t")
        lines.append(f"{inner}</input>")
    if layer.outputs:
        lines.append(f"{inner}<output>")
        for i, t in enumerate(layer.outputs):
            _port(lines, layer.output_port_id(i), t, layer.output_names[i], inner + "\t")
        lines.append(f"{inner}</output>")
    for tag, body in layer.bodies:
        lines.append(f"{inner}<{tag}>")
        _net_content(lines, body, inner + "\t")
        lines.append(f"{inner}</{tag}>")
    lines.append(f"{indent}</layer>")


def _net_content(lines: list[str], graph: IrGraph, indent: str) -> None:
    """`<layers>` and `<edges>` of a net or of an If/Loop body, at `indent`."""
    lines.append(f"{indent}<layers>")
    for layer in graph.layers:
        _layer(lines, layer, indent + "\t")
    lines.append(f"{indent}</layers>")
    lines.append(f"{indent}<edges>")
    for e in graph.edges:
        lines.append(
            f'{indent}\t<edge from-layer="{e.from_layer}" from-port="{e.from_port}" '
            f'to-layer="{e.to_layer}" to-port="{e.to_port}" />'
        )
    lines.append(f"{indent}</edges>")


def graph_xml(graph: IrGraph) -> str:
    """The XML text of `graph`; Const layers must already have offset and size in `data`."""
    lines = ['<?xml version="1.0"?>', f"<net name={quoteattr(graph.name)} version=\"11\">"]
    _net_content(lines, graph, "\t")
    lines.append("</net>")
    return "\n".join(lines) + "\n"
