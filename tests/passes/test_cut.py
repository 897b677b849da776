"""cut: the head (up to a layer) and the tail (from it) compose to the whole model."""

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.dialects.nn import ReLU
from irforge.errors import IrforgeError
from irforge.frontends.onnx import import_onnx
from irforge.model import Model, input_names
from irforge.passes import apply_pipeline
from irforge.testing import onnx_models


@pytest.fixture(scope="module")
def model() -> Model:
    m = import_onnx(onnx_models.resnet(blocks=(1, 1), width=4, size=8))
    apply_pipeline(m.module, "infer-shapes,canonicalize")
    return m


def cut(model: Model, spec: str) -> Model:
    clone = Model(model.module.clone(), model.store)
    apply_pipeline(clone.module, spec)
    return clone


def test_head_and_tail_compose_to_the_whole_model(model):
    # block outputs (the ReLU after a residual add): nothing after them reads earlier values
    relus = [
        op.layer_name.data
        for op in model.func.body.block.ops
        if isinstance(op, ReLU) and op.input.owner.name == "nn.eltwise"
    ]
    assert len(relus) == 2
    x = {"data": np.random.default_rng(0).standard_normal((1, 3, 8, 8)).astype(np.float32)}
    (want,) = run(model, x).values()
    for name in relus:
        head = cut(model, f'cut{{outputs="{name}:0"}}')
        tail = cut(model, f'cut{{inputs="{name}:0"}}')
        assert input_names(tail.func) == [f"{name}:0"]
        (middle,) = run(head, x).values()
        (got,) = run(tail, {f"{name}:0": middle}).values()
        np.testing.assert_allclose(got, want, rtol=1e-6)
        assert len(list(head.func.body.block.ops)) + len(list(tail.func.body.block.ops)) < 2 * len(list(model.func.body.block.ops))


def test_nonexistent_input_and_port_are_errors(model):
    with pytest.raises(IrforgeError, match="names no layer"):
        cut(model, 'cut{inputs="nope"}')
    relu = next(op.layer_name.data for op in model.func.body.block.ops if isinstance(op, ReLU))
    with pytest.raises(IrforgeError, match="names port 3"):
        cut(model, f'cut{{outputs="{relu}:3"}}')
