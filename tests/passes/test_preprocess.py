"""preprocess: the model sees (channel-reversed x - mean) / scale; fusion removes what it can."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from irforge.backends.reference import run
from irforge.frontends.onnx import import_onnx
from irforge.model import Model
from irforge.passes import apply_pipeline
from irforge.testing import onnx_models


def resnet() -> Model:
    model = import_onnx(onnx_models.resnet(blocks=(1,), width=4, size=8))
    apply_pipeline(model.module, "infer-shapes,canonicalize")
    return model


def preprocessed_reference(model: Model, x: np.ndarray, mean: np.ndarray, scale: np.ndarray, reverse: bool) -> np.ndarray:
    y = x[:, ::-1] if reverse else x
    y = (y - mean.reshape(1, 3, 1, 1)) / scale.reshape(1, 3, 1, 1)
    return next(iter(run(model, {"data": y.astype(np.float32)}).values()))


def spec(mean: np.ndarray | None, scale: np.ndarray | None, reverse: bool) -> str:
    options = []
    if mean is not None:
        options.append(f'mean="data[{",".join(map(str, mean))}]"')
    if scale is not None:
        options.append(f'scale="[{",".join(map(str, scale))}]"')
    if reverse:
        options.append("reverse-input-channels=true")
    return "preprocess{" + " ".join(options) + "}"


def op_count(model: Model) -> int:
    return sum(op.name != "nn.constant" for op in model.func.body.block.ops)


@settings(max_examples=15, deadline=None)
@given(
    mean=st.none() | st.lists(st.floats(-50, 50), min_size=3, max_size=3),
    scale=st.none() | st.lists(st.floats(0.5, 60), min_size=3, max_size=3),
    reverse=st.booleans(),
    fuse=st.booleans(),
)
def test_preprocessed_model_sees_preprocessed_input(mean, scale, reverse, fuse):
    model = resnet()
    mean_a = np.array(mean if mean is not None else [0.0] * 3)
    scale_a = np.array(scale if scale is not None else [1.0] * 3)
    after = Model(model.module.clone(), model.store)
    pipeline = spec(mean and mean_a, scale and scale_a, reverse) + (",fuse-linear-ops" if fuse else "")
    apply_pipeline(after.module, pipeline)
    x = np.random.default_rng(0).uniform(0, 255, (1, 3, 8, 8)).astype(np.float32)
    want = preprocessed_reference(model, x, mean_a, scale_a, reverse)
    got = next(iter(run(after, {"data": x}).values()))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_scale_and_reverse_add_no_op_to_a_classifier_but_a_mean_before_padding_does():
    model = resnet()
    plain = Model(model.module.clone(), model.store)
    apply_pipeline(plain.module, "fuse-linear-ops")
    scaled = Model(model.module.clone(), model.store)
    apply_pipeline(scaled.module, 'preprocess{scale="[58.4,57.1,57.4]" reverse-input-channels=true},fuse-linear-ops')
    assert op_count(scaled) == op_count(plain)
    centred = Model(model.module.clone(), model.store)
    apply_pipeline(centred.module, 'preprocess{mean="[123.7,116.3,103.5]" scale="[58.4,57.1,57.4]"},fuse-linear-ops')
    assert op_count(centred) == op_count(plain) + 1  # the stem convolution pads its input
