"""Whole networks: irforge's import + reference interpreter against onnxruntime."""

from pathlib import Path

import numpy as np
import onnx
import onnx.helper
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
    # The light models' weights are all one value, so every logit is equal and large
    # (squeezenet's are 6.8e9, where an ulp is 512): a final Softmax turns the last bit of any
    # summation order into a one-hot output. Compare the logits it reads instead.
    proto = _logits_of(proto)
    model = import_onnx(proto)
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    feeds = feeds_for(proto)
    got = list(run(model, feeds).values())
    want = ort_session_run(proto, feeds)
    for g, w in zip(got, want, strict=True):
        scale = max(float(np.abs(w).max()), 1e-6)
        assert float(np.abs(g - w).max()) / scale <= 1e-4


def _logits_of(proto: onnx.ModelProto) -> onnx.ModelProto:
    """The model cut before its graph outputs' Softmax, if they come from one."""
    producers = {out: node for node in proto.graph.node for out in node.output}
    outputs = [o.name for o in proto.graph.output]
    cut = []
    for name in outputs:
        node = producers.get(name)
        while node is not None and node.op_type in ("Reshape", "Flatten", "Squeeze", "Identity"):
            node = producers.get(node.input[0])
        cut.append(node.input[0] if node is not None and node.op_type == "Softmax" else name)
    if cut == outputs:
        return proto
    logits = onnx.ModelProto()
    logits.CopyFrom(proto)
    del logits.graph.output[:]
    logits.graph.output.extend(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None) for name in cut)
    return logits
