"""No prototxt field silently ignored (fields.py): unknown and unread fields are errors naming
the field, the layer and the line; inference-neutral ones are one warning per field name; and
the three fork fields that changed numbers (ceil_mode/round_mode, DetectionOutput clip,
Dropout scale_train) are honoured."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.caffe import import_caffe
from irforge.frontends.caffe.loader import load_caffe
from tests.frontends.caffe.caffe_files import write_caffe
from tests.frontends.caffe.test_caffe_layers import caffe_pool, run_layers, x_of

HEADER = 'input: "x"\ninput_shape { dim: 1 dim: 2 dim: 6 dim: 6 }\n'


def convert(tmp_path: Path, layers: str) -> tuple[dict[str, np.ndarray], list[str]]:
    model, _ = write_caffe(tmp_path, "net", HEADER + layers, {})
    source = load_caffe(model, None)
    imported = import_caffe(source)
    return run(imported, {"x": x_of(1, 2, 6, 6)}), source.warnings


def refusal(tmp_path: Path, layers: str) -> IrforgeError:
    with pytest.raises(IrforgeError) as info:
        convert(tmp_path, layers)
    return info.value


def test_unknown_field_is_an_error_with_path_layer_and_line(tmp_path: Path) -> None:
    error = refusal(tmp_path, 'layer { name: "r" type: "ReLU" bottom: "x" top: "y"\n  relu_param { negative_slope: 0.1 mystery_gain: 2 } }\n')
    assert error.code == "E201"
    assert "unknown field 'relu_param.mystery_gain' in layer 'r'" in str(error) and "net.prototxt:4" in str(error)


def test_unknown_nested_block_reported_once_with_its_path(tmp_path: Path) -> None:
    error = refusal(tmp_path, 'layer { name: "r" type: "ReLU" bottom: "x" top: "y"\n  mystery_param { a: 1 inner { b: 2 } } }\n')
    assert "'mystery_param'" in str(error) and "inner" not in str(error)
    # an inference-neutral unknown block is skipped whole: its fields are not judged one by one
    got, warnings = convert(tmp_path, 'layer { name: "r" type: "Softmax" bottom: "x" top: "y" loss_param { ignore_label: -1 normalize: true } }\n')
    assert list(got) == ["y"] and any("'loss_param' ignored in 1 layer(s)" in w for w in warnings)


def test_known_field_not_honoured_is_an_error(tmp_path: Path) -> None:
    # SSD's eta (adaptive NMS) is in the schema, and irforge does not implement it
    layers = (
        'input: "loc"\ninput_shape { dim: 1 dim: 8 }\ninput: "conf"\ninput_shape { dim: 1 dim: 4 }\n'
        'input: "priors"\ninput_shape { dim: 1 dim: 2 dim: 8 }\n'
        'layer { name: "det" type: "DetectionOutput" bottom: "loc" bottom: "conf" bottom: "priors" top: "det"\n'
        "  detection_output_param { num_classes: 2 keep_top_k: 4\n    nms_param { nms_threshold: 0.5 eta: 0.9 } } }\n"
    )
    error = refusal(tmp_path, layers)
    assert error.code == "E202"
    assert "'detection_output_param.nms_param.eta'" in str(error) and "'det'" in str(error) and "line 11" in str(error)


def test_explicit_default_is_accepted(tmp_path: Path) -> None:
    got, _ = convert(tmp_path, 'layer { name: "d" type: "Dropout" bottom: "x" top: "y" dropout_param { scale_train: true } }\n')
    np.testing.assert_array_equal(got["y"], x_of(1, 2, 6, 6))


def test_neutral_fields_warn_once_per_name(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    layers = "".join(
        f'layer {{ name: "r{i}" type: "ReLU" bottom: "{"x" if i == 0 else f"y{i - 1}"}" top: "y{i}" param {{ lr_mult: 0 share_mode: STRICT }} loss_weight: 0 }}\n'
        for i in range(2)
    )
    with caplog.at_level(logging.WARNING, logger="irforge.caffe"):
        _, warnings = convert(tmp_path, layers)
    assert len(warnings) == 2 and any("'param' ignored in 2 layer(s)" in w for w in warnings)
    assert any("'loss_weight' ignored in 2 layer(s) ('r0', 'r1')" in w for w in warnings)
    assert "loss weight (training only)" in caplog.text


def test_stage_rules_are_refused(tmp_path: Path) -> None:
    error = refusal(tmp_path, 'layer { name: "r" type: "ReLU" bottom: "x" top: "y" include { stage: "deploy" } }\n')
    assert error.code == "E203" and "stage" in str(error)


def test_train_only_layer_with_unknown_field_is_dropped(tmp_path: Path) -> None:
    got, _ = convert(tmp_path, 'layer { name: "r" type: "ReLU" bottom: "x" top: "y" }\nlayer { name: "t" type: "ReLU" bottom: "y" top: "z" include { phase: TRAIN } mystery: 1 }\n')
    assert list(got) == ["y"]


@pytest.mark.parametrize(("field", "size"), [("ceil_mode: false", 56), ("ceil_mode: true", 57), ("round_mode: FLOOR", 56), ("", 57)])
def test_densenet_pool1_rounding(tmp_path: Path, field: str, size: int) -> None:
    # DenseNet-121's pool1: 3x3 stride 2 pad 1 on 112x112 (its deploy file says ceil_mode: false)
    x = x_of(1, 2, 112, 112)
    layer = f'layer {{ name: "pool1" type: "Pooling" bottom: "x" top: "y" pooling_param {{ pool: MAX kernel_size: 3 stride: 2 pad: 1 {field} }} }}'
    y = run_layers(tmp_path, layer, {"x": x})["y"]
    assert y.shape == (1, 2, size, size)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    want = np.array([[padded[:, :, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3].max(axis=(2, 3)) for j in range(56)] for i in range(56)]).transpose(2, 3, 0, 1)
    np.testing.assert_array_equal(y[:, :, :56, :56], want)


def test_floor_rounding_average_pool(tmp_path: Path) -> None:
    x = x_of(1, 2, 7, 7)
    layer = 'layer { name: "p" type: "Pooling" bottom: "x" top: "y" pooling_param { pool: AVE kernel_size: 2 stride: 2 ceil_mode: false } }'
    y = run_layers(tmp_path, layer, {"x": x})["y"]
    np.testing.assert_allclose(y, caffe_pool(x[:, :, :6, :6], 2, 2, 0, "AVE"), rtol=1e-6)


def test_ceil_and_round_mode_disagreeing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IrforgeError, match="ceil_mode and round_mode disagree"):
        run_layers(tmp_path, 'layer { name: "p" type: "Pooling" bottom: "x" top: "y" pooling_param { kernel_size: 2 stride: 2 ceil_mode: false round_mode: CEIL } }', {"x": x_of(1, 1, 5, 5)})


@pytest.mark.parametrize("ratio", [0.5, 0.3])
def test_dropout_scale_train_false_scales_at_test(tmp_path: Path, ratio: float) -> None:
    x = x_of(1, 2, 3, 3)
    layer = f'layer {{ name: "d" type: "Dropout" bottom: "x" top: "y" dropout_param {{ dropout_ratio: {ratio} scale_train: false }} }}'
    np.testing.assert_allclose(run_layers(tmp_path, layer, {"x": x})["y"], x * (1 - ratio), rtol=1e-6)


def test_dropout_ratio_with_scale_train_is_identity(tmp_path: Path) -> None:
    # BVLC GoogLeNet's deploy file: dropout_ratio 0.4 is read (not refused as unhonoured) and
    # changes nothing at inference, where Caffe's Dropout forwards its input
    x = x_of(1, 2, 3, 3)
    layer = 'layer { name: "d" type: "Dropout" bottom: "x" top: "y" dropout_param { dropout_ratio: 0.4 } }'
    np.testing.assert_array_equal(run_layers(tmp_path, layer, {"x": x})["y"], x)


def detections(tmp_path: Path, clip: str) -> np.ndarray:
    # 4 priors near the image borders, deltas pushing the boxes out of [0, 1]; one class
    priors = np.array([[[-0.1, -0.1, 0.3, 0.3, 0.7, 0.7, 1.1, 1.1, 0.0, 0.5, 0.4, 1.2, 0.5, -0.2, 1.3, 0.3], [0.1, 0.1, 0.2, 0.2] * 4]], np.float32)
    loc = np.random.default_rng(1).uniform(-2, 2, (1, 16)).astype(np.float32)
    conf = np.array([[0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6]], np.float32)
    inputs = {"loc": loc, "conf": conf, "priors": priors}
    layer = (
        'layer { name: "det" type: "DetectionOutput" bottom: "loc" bottom: "conf" bottom: "priors" top: "det"\n'
        f"  detection_output_param {{ num_classes: 2 keep_top_k: 4 code_type: CENTER_SIZE nms_param {{ nms_threshold: 1.0 }} {clip} }} }}\n"
    )
    return run_layers(tmp_path, layer, inputs)["det"].reshape(-1, 7)


@pytest.mark.parametrize("clip", ["clip: true", "clip_before_nms: true", "clip_after_nms: true"])
def test_detection_output_clip(tmp_path: Path, clip: str) -> None:
    free, clipped = detections(tmp_path, ""), detections(tmp_path, clip)
    assert free[:, 3:].min() < 0 and free[:, 3:].max() > 1  # the case reaches outside the image
    np.testing.assert_array_equal(clipped[:, :3], free[:, :3])  # no suppression: same rows
    np.testing.assert_allclose(clipped[:, 3:], np.clip(free[:, 3:], 0, 1), rtol=1e-6)
