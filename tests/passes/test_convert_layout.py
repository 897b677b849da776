"""convert-layout: NHWC graphs lose their inner transposes and keep their outputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Activation, Concat, Convolution, Eltwise, Permute, ReLU, Reduce, SoftMax
from irforge.frontends.onnx import import_onnx
from irforge.model import Model
from irforge.passes import apply_pipeline
from irforge.testing.nhwc_models import resnet_nhwc
from tests.helpers import ort_session_run

TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


def ops(model: Model, name: str) -> list:
    return [op for op in model.func.body.block.ops if op.name == name]


@pytest.mark.parametrize("flatten", [False, True], ids=["global_mean", "flatten_dense"])
def test_nhwc_resnet_keeps_one_transpose_at_the_input(flatten):
    proto = resnet_nhwc(blocks=(1, 1), flatten=flatten)
    model = import_onnx(proto)
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    assert len(ops(model, "nn.permute")) == 13
    apply_pipeline(model.module, "convert-layout,fuse-linear-ops,canonicalize")
    permutes = ops(model, "nn.permute")
    assert len(permutes) == 1 and permutes[0].operands[0] == model.func.args[0]
    assert not ops(model, "nn.matmul") or flatten is False
    x = np.random.default_rng(0).standard_normal((1, 16, 16, 3)).astype(np.float32)
    (want,) = ort_session_run(proto, {"data": x})
    got = next(iter(run(model, {"data": x}).values()))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


def _random_nhwc_chain(data: st.DataObject) -> tuple[Model, dict[str, np.ndarray]]:
    """conv (NCHW) -> transpose to NHWC -> random layout-agnostic ops -> output."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    c, h, w = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    b = ModelBuilder()
    x = b.input("x", [2, 3, h, w])
    weights = b.constant(rng.standard_normal((c, 3, 1, 1)).astype(np.float32), "w")
    conv = b.add(Convolution, [x, weights]).output
    y = b.add(Permute, [conv], order=TO_NHWC).output
    for _ in range(data.draw(st.integers(1, 5))):
        kind = data.draw(st.sampled_from(["relu", "tanh", "mul_c", "add_full", "self_add", "concat", "softmax"]))
        if kind == "relu":
            y = b.add(ReLU, [y]).output
        elif kind == "tanh":
            y = b.add(Activation, [y], kind="tanh").output
        elif kind in ("mul_c", "add_full"):
            shape = [y.type.get_shape()[-1]] if kind == "mul_c" else [1, *y.type.get_shape()[1:]]
            k = b.constant(rng.uniform(0.5, 1.5, shape).astype(np.float32), "k")
            y = b.add(Eltwise, [y, k], operation="mul" if kind == "mul_c" else "sum").output
        elif kind == "self_add":
            y = b.add(Eltwise, [y, b.add(ReLU, [y]).output], operation="sum").output
        elif kind == "concat":
            y = b.add(Concat, [y, y], axis=data.draw(st.integers(0, 3))).output
        else:
            y = b.add(SoftMax, [y], axis=data.draw(st.integers(-4, 3))).output
    if data.draw(st.booleans()):
        axes = sorted(data.draw(st.sets(st.integers(0, 3), min_size=1, max_size=3)))
        y = b.add(Reduce, [y], operation="sum", axes=axes, keep_dims=data.draw(st.booleans())).output
    b.output(y, "y")
    return b.finish(), {"x": rng.standard_normal((2, 3, h, w)).astype(np.float32)}


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_random_nhwc_chains_keep_their_outputs_and_lose_transposes(data):
    model, feeds = _random_nhwc_chain(data)
    before = run(model, feeds)["y"]
    apply_pipeline(model.module, "convert-layout")
    np.testing.assert_allclose(run(model, feeds)["y"], before, rtol=1e-5, atol=1e-6)
    # the one transpose may only have moved to the end (or vanished in a reduction)
    permutes = ops(model, "nn.permute")
    assert len(permutes) <= 1
    assert all(use.operation.name == "func.return" for p in permutes for use in p.output.uses)


def test_transposes_meeting_cancel():
    b = ModelBuilder()
    x = b.input("x", [1, 2, 3, 4])
    y = b.add(Permute, [x], order=TO_NHWC).output
    y = b.add(ReLU, [y]).output
    y = b.add(Permute, [y], order=TO_NCHW).output
    b.output(y, "y")
    model = b.finish()
    apply_pipeline(model.module, "convert-layout")
    assert [op.name for op in model.func.body.block.ops] == ["nn.relu", "func.return"]


def test_nchw_model_with_an_nhwc_interface():
    from irforge.testing.onnx_models import resnet

    proto = resnet(blocks=(1,), width=8, size=16)
    model = import_onnx(proto)
    x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)
    (want,) = ort_session_run(proto, {"data": x})
    apply_pipeline(model.module, 'infer-shapes,canonicalize,convert-layout{interface="nchw->nhwc"},fuse-linear-ops,canonicalize')
    assert model.func.args[0].type.get_shape() == (1, 16, 16, 3)
    assert len(ops(model, "nn.permute")) == 1  # NHWC -> NCHW at the input; the output is 2-D
    np.testing.assert_allclose(next(iter(run(model, {"data": x.transpose(0, 2, 3, 1)}).values())), want, rtol=1e-4, atol=1e-6)


def test_unknown_interface_is_an_error():
    from irforge.errors import IrforgeError

    b = ModelBuilder()
    b.output(b.add(ReLU, [b.input("x", [1, 2, 3, 4])]).output, "y")
    with pytest.raises(IrforgeError, match="unknown interface 'nchw->ncdhw'"):
        apply_pipeline(b.finish().module, 'convert-layout{interface="nchw->ncdhw"}')
