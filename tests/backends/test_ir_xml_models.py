"""Whole networks through the IR XML writer: ONNX -> nn -> IR, run by OpenVINO on CPU against
onnxruntime on the original ONNX (FP32 and FP16 weights); files deterministic and atomic."""

from __future__ import annotations

import collections
import os
import re

import numpy as np
import onnx
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.ir_xml import bin as ir_bin
from irforge.builder import ModelBuilder
from irforge.errors import IrforgeError
from irforge.dialects import nn
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.testing import onnx_models
from irforge.testing.ir_stats import layer_histogram
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.frontends.test_onnx_models import feeds_for
from tests.helpers import ort_session_run

BUILT = {
    "resnet": onnx_models.resnet,
    "mobilenet_v2": onnx_models.mobilenet_v2,
    "vgg": onnx_models.vgg,
    "transformer_encoder": onnx_models.transformer_encoder,
}
PIPELINE = "infer-shapes,canonicalize"


@pytest.fixture(scope="module", params=sorted(BUILT))
def network(request, tmp_path_factory):  # type: ignore[no-untyped-def]
    """(name, ONNX proto, nn model after the pipeline, feeds, onnxruntime's outputs)."""
    proto = BUILT[request.param]()
    model = import_onnx(proto)
    apply_pipeline(model.module, PIPELINE)
    feeds = feeds_for(proto)
    return request.param, proto, model, feeds, ort_session_run(proto, feeds)


@pytest.mark.parametrize("data_type, rtol", [("FP32", 1e-4), ("FP16", 2e-2)])
def test_network_runs_in_openvino_like_onnxruntime(tmp_path, network, data_type, rtol):
    name, proto, model, feeds, want = network
    write_ir_xml(model, tmp_path / "net.xml", data_type)
    got = run_openvino(tmp_path / "net.xml", feeds)
    for output, expected in zip(proto.graph.output, want, strict=True):
        assert_close(got[output.name], expected, rtol=rtol, what=f"{name} {data_type}")
    types = collections.Counter(re.findall(r'type="(\w+)"', (tmp_path / "net.xml").read_text()))
    assert (types["Convert"] > 0) == (data_type == "FP16")


def test_fp16_halves_the_weights(tmp_path, network):
    model = network[2]
    write_ir_xml(model, tmp_path / "a.xml", "FP32")
    write_ir_xml(model, tmp_path / "b.xml", "FP16")
    ratio = (tmp_path / "b.bin").stat().st_size / (tmp_path / "a.bin").stat().st_size
    assert 0.45 < ratio < 0.6


def test_writing_twice_gives_identical_files(tmp_path, network):
    model = network[2]
    for data_type in ("FP32", "FP16"):
        write_ir_xml(model, tmp_path / "a.xml", data_type)
        write_ir_xml(model, tmp_path / "b.xml", data_type)
        assert (tmp_path / "a.xml").read_bytes() == (tmp_path / "b.xml").read_bytes()
        assert (tmp_path / "a.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()


def test_identical_weights_are_stored_once(tmp_path):
    b = ModelBuilder()
    x = b.input("x", [2, 64])
    w = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
    y = b.add(nn.FullyConnected, [x, b.constant(w, "w1")]).output
    y = b.add(nn.FullyConnected, [y, b.constant(w.copy(), "w2")]).output
    b.output(y, "y")
    write_ir_xml(b.finish(), tmp_path / "m.xml")
    assert (tmp_path / "m.bin").stat().st_size == w.nbytes
    assert (tmp_path / "m.xml").read_text().count('offset="0" size="16384"') == 2


def test_failed_write_leaves_previous_files_untouched(tmp_path, monkeypatch):
    b = ModelBuilder()
    x = b.input("x", [1, 32])
    b.output(b.add(nn.FullyConnected, [x, b.constant(np.ones((8, 32), np.float32), "w")]).output, "y")
    model = b.finish()
    (tmp_path / "m.xml").write_text("old xml")
    (tmp_path / "m.bin").write_bytes(b"old bin")

    def broken(self, array, dtype, bits=0):  # type: ignore[no-untyped-def]
        self.f.write(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(ir_bin.BinWriter, "add", broken)
    with pytest.raises(IrforgeError, match=r"cannot write .*m\.bin' \(disk full\)"):
        write_ir_xml(model, tmp_path / "m.xml")
    assert sorted(os.listdir(tmp_path)) == ["m.bin", "m.xml"]
    assert (tmp_path / "m.xml").read_text() == "old xml" and (tmp_path / "m.bin").read_bytes() == b"old bin"
    monkeypatch.undo()
    write_ir_xml(model, tmp_path / "fresh.xml")
    monkeypatch.setattr(ir_bin.BinWriter, "add", broken)
    with pytest.raises(IrforgeError, match="disk full"):
        write_ir_xml(model, tmp_path / "new.xml")
    assert not (tmp_path / "new.xml").exists() and not (tmp_path / "new.bin").exists()


def test_unmapped_ops_are_listed_in_one_error(tmp_path):
    from xdsl.dialects.builtin import TensorType
    from xdsl.irdl import irdl_op_definition, operand_def, result_def

    from irforge.dialects.nn.base import NNOp

    @irdl_op_definition
    class Twice(NNOp):
        name = "ext.twice"
        input = operand_def(TensorType)
        output = result_def(TensorType)

        def infer_shapes(self):  # type: ignore[no-untyped-def]
            return [self.operand_type(0)]

    b = ModelBuilder()
    x = b.input("x", [3])
    y = b.add(Twice, [b.add(Twice, [x], name="a").output], name="b").output
    b.output(y, "y")
    model = b.finish()
    with pytest.raises(IrforgeError, match=r"no OpenVINO IR mapping for: ext.twice x2 \(a, b\)") as error:
        write_ir_xml(model, tmp_path / "m.xml")
    assert "\n" not in str(error.value) and not list(tmp_path.iterdir())

    from irforge.backends.ir_xml import EMITTERS, custom_layer, register_ir_xml_emitter

    register_ir_xml_emitter(Twice, custom_layer)
    try:
        write_ir_xml(model, tmp_path / "m.xml")
    finally:
        del EMITTERS[Twice]
    assert '<layer id="1" name="a" type="Twice" version="ext">' in (tmp_path / "m.xml").read_text()


@pytest.mark.parametrize("name", sorted(BUILT))
def test_no_more_layers_than_ovc(tmp_path, name):
    """ovc folds BatchNormalization into convolutions and fuses attention; irforge's
    default pipeline (fuse-linear-ops, replace-subgraph's attention) must reach at most as
    many layers."""
    import openvino as ov

    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    proto = BUILT[name]()
    onnx.save_model(proto, str(tmp_path / "m.onnx"))
    ov.save_model(ov.convert_model(str(tmp_path / "m.onnx")), str(tmp_path / "ovc.xml"))
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    write_ir_xml(model, tmp_path / "ours.xml")
    ours, theirs = (layer_histogram((tmp_path / f).read_text()) for f in ("ours.xml", "ovc.xml"))
    print(f"{name}: irforge {sum(ours.values())} layers {dict(sorted(ours.items()))}; ovc {sum(theirs.values())} layers {dict(sorted(theirs.items()))}")
    assert sum(ours.values()) <= sum(theirs.values()), f"irforge {dict(ours)} vs ovc {dict(theirs)}"
    # replace-subgraph fuses attention as ovc does: one layer each, not MatMul/Multiply/SoftMax/MatMul
    assert ours["ScaledDotProductAttention"] == theirs["ScaledDotProductAttention"]


@pytest.mark.parametrize("data_type, rtol", [("FP32", 1e-4), ("FP16", 2e-2)])
def test_fused_attention_runs_in_openvino_like_onnxruntime(tmp_path, data_type, rtol):
    """The transformer after the default pipeline: its ScaledDotProductAttention layer runs
    in OpenVINO as the ONNX decomposition does in onnxruntime, and reads back to the op."""
    from irforge.frontends.ir_xml import read_ir_xml
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    proto = onnx_models.transformer_encoder()
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    write_ir_xml(model, tmp_path / "net.xml", data_type)
    assert layer_histogram((tmp_path / "net.xml").read_text())["ScaledDotProductAttention"] == 1
    feeds = feeds_for(proto)
    (want,) = ort_session_run(proto, feeds)
    got = run_openvino(tmp_path / "net.xml", feeds)
    assert_close(got[proto.graph.output[0].name], want, rtol=rtol, what=f"transformer {data_type}")
    again = read_ir_xml(tmp_path / "net.xml")
    assert sum(op.name == "nn.scaled_dot_product_attention" for op in again.func.body.block.ops) == 1
