"""Whole networks: irforge's import + reference interpreter against onnxruntime."""

from pathlib import Path

import numpy as np
import onnx
import pytest

from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.passes import apply_pipeline
from irforge.testing import onnx_models
from tests.helpers import ort_session_run

BUILT = {
    "resnet": onnx_models.resnet,
    "mobilenet_v2": onnx_models.mobilenet_v2,
    "vgg": onnx_models.vgg,
    "transformer_encoder": onnx_models.transformer_encoder,
}


def feeds_for(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    init = {t.name for t in model.graph.initializer}
    feeds = {}
    for vi in model.graph.input:
        if vi.name not in init:
            shape = [d.dim_value for d in vi.type.tensor_type.shape.dim]
            feeds[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def assert_matches_onnxruntime(proto: onnx.ModelProto, pipeline: str = "infer-shapes,canonicalize") -> None:
    model = import_onnx(proto)
    apply_pipeline(model.module, pipeline)
    feeds = feeds_for(proto)
    got = run(model, feeds)
    want = ort_session_run(proto, feeds)
    for (name, g), w in zip(got.items(), want, strict=True):
        scale = max(float(np.abs(w).max()), 1e-6)
        err = float(np.abs(g - w).max()) / scale
        assert err <= 1e-4, f"{name}: max abs error {err:.2e} relative to output scale"


@pytest.mark.parametrize("name", sorted(BUILT))
def test_built_model_matches_onnxruntime(name):
    assert_matches_onnxruntime(BUILT[name]())


LIGHT = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"


@pytest.mark.parametrize("path", sorted(LIGHT.glob("*.onnx")), ids=lambda p: p.stem)
def test_onnx_light_zoo_model_matches_onnxruntime(path):
    proto = onnx.load(str(path))
    model = import_onnx(path)
    ops = {op.name for op in model.func.body.block.ops}
    assert "nn.constant" in ops  # ConstantOfShape weights folded at import
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    feeds = feeds_for(proto)
    got = list(run(model, feeds).values())
    want = ort_session_run(proto, feeds)
    for g, w in zip(got, want, strict=True):
        scale = max(float(np.abs(w).max()), 1e-6)
        assert float(np.abs(g - w).max()) / scale <= 1e-4
