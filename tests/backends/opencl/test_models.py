"""Whole networks on the OpenCL device against onnxruntime, and what fusion leaves to launch."""

from __future__ import annotations

import numpy as np
import pytest

import irforge
from irforge.frontends.onnx import import_onnx
from tests.frontends.test_onnx_models import BUILT, feeds_for
from tests.helpers import ort_session_run


def run_on_opencl(name: str):  # type: ignore[no-untyped-def]
    proto = BUILT[name]()
    compiled = irforge.compile(import_onnx(proto), device="gpu")
    feeds = feeds_for(proto)
    return compiled, compiled(feeds), ort_session_run(proto, feeds)


@pytest.mark.parametrize("name", sorted(BUILT))
def test_model_on_opencl_matches_onnxruntime(name: str):
    compiled, got, want = run_on_opencl(name)
    assert compiled.fallbacks == [], [f.describe() for f in compiled.fallbacks]
    for (output, g), w in zip(got.items(), want, strict=True):
        scale = max(float(np.abs(w).max()), 1e-6)
        err = float(np.abs(g - w).max()) / scale
        assert err <= 1e-4, f"{output}: max abs error {err:.2e} relative to output scale"


def test_resnet_epilogues_are_fused():
    """BatchNorm folds into the convolutions; residual adds and ReLUs run in their epilogues."""
    compiled, _, _ = run_on_opencl("resnet")
    steps = compiled._executable.program.steps
    tags = [step.tag for step in steps]
    assert not {"nn.eltwise", "nn.relu", "nn.batch_norm", "nn.scale_shift"} & set(tags)
    convs = [step.kernel for step in steps if step.tag == "nn.convolution"]
    assert len(set(convs)) < len(convs)  # repeated layer shapes share one kernel


def test_transformer_with_fused_attention_runs_it_on_the_cpu_backend():
    """After replace-subgraph the transformer has one ScaledDotProductAttention, a CPU-only op:
    HETERO runs it on the CPU backend's kernels, the rest on the device, like onnxruntime."""
    from irforge.passes import apply_pipeline
    from irforge.tools.convert_pipeline import DEFAULT_PIPELINE

    proto = BUILT["transformer_encoder"]()
    model = import_onnx(proto)
    apply_pipeline(model.module, DEFAULT_PIPELINE)
    compiled = irforge.compile(model, device="gpu")
    assert [(f.op, f.executor) for f in compiled.fallbacks] == [("nn.scaled_dot_product_attention 'matmul_27'", "cpu")]
    feeds = feeds_for(proto)
    (got,), (want,) = compiled(feeds).values(), ort_session_run(proto, feeds)
    assert float(np.abs(got - want).max()) / max(float(np.abs(want).max()), 1e-6) <= 1e-4


@pytest.mark.parametrize("producer,kind", [("conv", "swish"), ("conv", "hswish"), ("matmul", "gelu"), ("matmul", "gelu_tanh")])
def test_smooth_activations_fused_into_the_producer(producer: str, kind: str, monkeypatch):  # type: ignore[no-untyped-def]
    """The CPU's `absorb_epilogue` (shared) folds Swish/HardSwish (and GELU when switched on)
    into the producing kernel: the OpenCL epilogue applies them (it once absorbed and dropped
    them)."""
    from irforge.backends.cpu.codegen.epilogue import GELU_KINDS
    from irforge.backends.cpu.ops import fusion
    from irforge.backends.opencl import compile_model
    from irforge.backends.reference import run
    from irforge.builder import ModelBuilder
    from irforge.dialects.nn import Activation, Convolution, MatMul
    from tests.helpers import rand

    monkeypatch.setattr(fusion, "FUSED_KINDS", fusion.FUSED_KINDS | GELU_KINDS)
    b = ModelBuilder()
    if producer == "conv":
        x = b.input("x", (1, 6, 9, 11))
        feeds = {"x": rand(1, 6, 9, 11) * 3}
        y = b.add(Convolution, [x, b.constant(rand(10, 6, 1, 1, seed=1)), b.constant(rand(10, seed=2))]).output
    else:
        x = b.input("x", (1, 13, 20))
        feeds = {"x": rand(1, 13, 20) * 2}
        y = b.add(MatMul, [x, b.constant(rand(20, 37, seed=1))]).output
    b.output(b.add(Activation, [y], kind=kind).output, "y")
    model = b.finish()
    compiled = compile_model(model)
    tags = [step.tag for step in compiled._executable.program.steps]
    assert "nn.activation" not in tags, tags
    np.testing.assert_allclose(compiled(feeds)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)
