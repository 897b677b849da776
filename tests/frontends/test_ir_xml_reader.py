"""The IR XML reader: IRs that OpenVINO saved (FP32 and FP16) run in the reference interpreter
as in OpenVINO; XML -> nn -> XML round trips; damaged files give one-line errors."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import onnx
import openvino as ov
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.ir_xml import read_ir_xml
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.testing import onnx_models
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.frontends.test_onnx_models import feeds_for

BUILT = {
    "resnet": onnx_models.resnet,
    "mobilenet_v2": onnx_models.mobilenet_v2,
    "vgg": onnx_models.vgg,
    "transformer_encoder": onnx_models.transformer_encoder,
}


@pytest.fixture(scope="module")
def onnx_files(tmp_path_factory):  # type: ignore[no-untyped-def]
    folder = tmp_path_factory.mktemp("onnx")
    paths = {}
    for name, make in BUILT.items():
        paths[name] = folder / f"{name}.onnx"
        onnx.save_model(make(), str(paths[name]))
    return paths


@pytest.mark.parametrize("compress", [False, True], ids=["fp32", "fp16"])
@pytest.mark.parametrize("name", sorted(BUILT))
def test_reads_what_openvino_saved(tmp_path, onnx_files, name, compress):
    xml = tmp_path / "ov.xml"
    ov.save_model(ov.convert_model(str(onnx_files[name])), str(xml), compress_to_fp16=compress)
    model = read_ir_xml(xml)
    feeds = feeds_for(onnx.load(str(onnx_files[name])))
    want = run_openvino(xml, feeds, check_dims=False)
    got = run(model, feeds)
    assert set(got) <= set(want)
    for output, value in got.items():
        assert_close(value, want[output], what=f"{name} {output}")
    weights = [model.store[w] for w in model.store]
    assert weights and all(isinstance(w.base, np.memmap) or w.size <= 16 for w in weights)


def test_round_trip_is_a_fixed_point(tmp_path):
    proto = onnx_models.resnet()
    model = import_onnx(proto)
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    write_ir_xml(model, tmp_path / "a.xml")
    again = read_ir_xml(tmp_path / "a.xml")
    write_ir_xml(again, tmp_path / "b.xml")
    a, b = ((tmp_path / f).read_text().splitlines() for f in ("a.xml", "b.xml"))
    assert [line for line in a if "<layer " in line] == [line for line in b if "<layer " in line]
    assert a == b and (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()
    feeds = feeds_for(proto)
    for name, value in run(again, feeds).items():
        np.testing.assert_array_equal(value, run(model, feeds)[name])


@pytest.fixture
def small_ir(tmp_path):  # type: ignore[no-untyped-def]
    model = import_onnx(onnx_models.vgg(stages=(1,), width=4, size=8))
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    write_ir_xml(model, tmp_path / "m.xml")
    return tmp_path / "m.xml"


def assert_one_line_error(path, match: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(IrforgeError, match=match) as error:
        read_ir_xml(path)
    assert "\n" not in str(error.value)


def test_truncated_bin(small_ir):
    data = small_ir.with_suffix(".bin").read_bytes()
    small_ir.with_suffix(".bin").write_bytes(data[: len(data) // 2])
    assert_one_line_error(small_ir, r"Const bytes \d+\.\.\d+ lie outside the \.bin \(\d+ bytes\) \(m\.xml: IR layer '.*'.*; the \.bin is truncated")


def test_offset_out_of_range(small_ir):
    text = small_ir.read_text()
    small_ir.write_text(text.replace('offset="0"', 'offset="999999999"', 1))
    assert_one_line_error(small_ir, "lie outside the .bin")
    small_ir.write_text(text.replace('offset="0"', 'offset="-8"', 1))
    assert_one_line_error(small_ir, "lie outside the .bin")


def test_malformed_xml(small_ir):
    small_ir.write_text(small_ir.read_text()[:500])
    assert_one_line_error(small_ir, r"malformed IR XML: .* \(.*m\.xml:\d+:\d+\)")


def test_entities_are_refused(small_ir):
    small_ir.write_text('<?xml version="1.0"?><!DOCTYPE net [<!ENTITY a "aaaa">]><net version="11">&a;</net>')
    assert_one_line_error(small_ir, "IR XML refused")


def test_unknown_layer_types_listed_in_one_error(small_ir):
    text = small_ir.read_text().replace('type="ReLU"', 'type="FancyAct"').replace('type="MaxPool"', 'type="FancyPool"')
    small_ir.write_text(text)
    assert_one_line_error(small_ir, r"unsupported IR layer types: FancyAct \(opset1\) x2 \(.*\); FancyPool \(opset8\) x1 \(.*\); load the extension that defines them, or register")


def test_missing_files(tmp_path, small_ir):
    assert_one_line_error(tmp_path / "none.xml", "IR file .* not found")
    small_ir.with_suffix(".bin").unlink()
    assert_one_line_error(small_ir, r"weights file .*m\.bin' not found")


def tool(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", f"irforge.tools.{name}", *args], capture_output=True, text=True, timeout=300)


def test_tools_take_ir_xml(tmp_path, small_ir):
    converted = tool("ir_convert", "--input_model", str(small_ir), "-o", str(tmp_path / "out"), "--data_type", "FP16")
    assert converted.returncode == 0, converted.stderr
    assert 'element_type="f16"' in (tmp_path / "out" / "m.xml").read_text()
    ran = tool("ir_run", str(tmp_path / "out" / "m.xml"), "--output", str(tmp_path / "out.npz"))
    assert ran.returncode == 0 and "shape=[1, 10]" in ran.stdout, ran.stderr
    opt = tool("ir_opt", str(small_ir), "-p", "canonicalize", "-o", str(tmp_path / "opt.mlir"))
    assert opt.returncode == 0 and "nn.convolution" in (tmp_path / "opt.mlir").read_text(), opt.stderr
    small_ir.with_suffix(".bin").write_bytes(b"")
    failed = tool("ir_run", str(small_ir))
    assert failed.returncode == 2 and failed.stderr.count("\n") == 1 and re.match(r"irforge: error\[E\d{3}\]: Const bytes", failed.stderr)
