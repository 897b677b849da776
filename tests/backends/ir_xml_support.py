"""Shared checks of the IR XML tests: OpenVINO reads, shapes and runs what irforge wrote.

OpenVINO re-infers every shape when it reads a model and silently ignores wrong `<dim>`s,
so `assert_dims_match_openvino` compares each port written with the shapes OpenVINO infers.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import defusedxml.ElementTree as ET
import numpy as np
import openvino as ov

CORE = ov.Core()
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}  # else this CPU computes in bf16
PRECISIONS = {
    "FP32": "f32", "FP16": "f16", "FP64": "f64", "I8": "i8", "U8": "u8", "I4": "i4", "U4": "u4", "I32": "i32", "I64": "i64", "BOOL": "boolean",
}  # fmt: skip


def written_ports(xml_path: Path) -> dict[str, list[tuple[str, list[int]]]]:
    """(element type, dims) of every output port, by layer name; also checks that each edge
    connects ports of equal type and dims."""
    root = ET.parse(str(xml_path)).getroot()
    by_id, outputs = {}, {}
    for layer in root.find("layers"):
        ports = {}
        for section in ("input", "output"):
            for port in layer.find(section) if layer.find(section) is not None else []:
                ports[port.get("id")] = (PRECISIONS[port.get("precision")], [int(d.text) for d in port.findall("dim")])
        by_id[layer.get("id")] = ports
        out = layer.find("output")
        outputs[layer.get("name")] = [ports[p.get("id")] for p in (out if out is not None else [])]
    for edge in root.find("edges"):
        source = by_id[edge.get("from-layer")][edge.get("from-port")]
        target = by_id[edge.get("to-layer")][edge.get("to-port")]
        assert source == target, f"edge {edge.attrib}: {source} feeds a port declared {target}"
    return outputs


def assert_dims_match_openvino(xml_path: Path, model: ov.Model) -> int:
    """Every output port of every layer as OpenVINO infers it; returns the ports checked."""
    written = written_ports(xml_path)
    checked = 0
    for node in model.get_ordered_ops():
        if node.get_type_name() == "Result":  # written without output ports, as OpenVINO does
            continue
        ports = written[node.get_friendly_name()]
        assert len(ports) == node.get_output_size(), f"{node.get_friendly_name()}: output count"
        for i, (element, dims) in enumerate(ports):
            inferred = node.get_output_partial_shape(i)
            want = [d.get_length() if d.is_static else -1 for d in inferred]
            assert dims == want, f"{node.get_friendly_name()} port {i}: wrote {dims}, OpenVINO infers {want}"
            assert element == node.get_output_element_type(i).get_type_name(), f"{node.get_friendly_name()} port {i}"
            checked += 1
    assert checked >= len(written) - sum(1 for p in written.values() if not p)
    return checked


def run_openvino(xml_path: Path, feeds: Mapping[str, np.ndarray], check_dims: bool = True) -> dict[str, np.ndarray]:
    """Read, check the written dims, compile on CPU in f32 and run: outputs by tensor name."""
    model = CORE.read_model(str(xml_path))
    if check_dims:
        assert_dims_match_openvino(xml_path, model)
    compiled = CORE.compile_model(model, "CPU", CONFIG)
    results = compiled(dict(feeds))
    return {name: np.asarray(results[out]) for out in compiled.outputs for name in sorted(out.get_names())}


def assert_close(got: np.ndarray, want: np.ndarray, rtol: float = 1e-4, what: str = "") -> None:
    """Elementwise within rtol, with an absolute floor of rtol times the output's scale (for
    values that cancel to near zero)."""
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    if want.dtype == np.bool_ or np.issubdtype(want.dtype, np.integer):
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    scale = max(float(np.abs(want[np.isfinite(want)]).max()) if want.size else 0.0, 1.0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what)


def assert_op_runs_in_openvino_like_the_reference(tmp_path: Path, cls, inputs, constants, num_results, props) -> None:  # type: ignore[no-untyped-def]
    """One op (a `case` of test_ir_xml_ops) written as IR XML gives the reference's outputs
    in OpenVINO."""
    from irforge.backends.ir_xml import write_ir_xml
    from irforge.backends.reference import run
    from tests.helpers import one_op_model

    model = one_op_model(cls, inputs, constants, num_results, **props)
    feeds = {f"x{i}": x for i, x in enumerate(inputs)}
    want = run(model, feeds)
    write_ir_xml(model, tmp_path / "m.xml")
    got = run_openvino(tmp_path / "m.xml", feeds)
    for name, expected in want.items():
        assert_close(got[name], expected, what=name)
