"""An SSD-style head (Normalize, Permute, Flatten, Reshape, Softmax, PriorBox, DetectionOutput):
convolutions checked through an onnxruntime twin, priors and detections against the catalog's
formulas implemented independently in tests/dialects/test_detection.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from onnx import helper

from irforge.backends.reference import run
from irforge.frontends.caffe import import_caffe
from tests.dialects.test_detection import numpy_detection_output, numpy_prior_box
from tests.frontends.caffe.caffe_files import weights, write_caffe
from tests.frontends.caffe.test_caffe_models import onnx_model
from tests.helpers import ort_session_run

SSD = """
name: "SSDHead"
input: "data"
input_shape { dim: 1 dim: 3 dim: 32 dim: 32 }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" convolution_param { num_output: 8 kernel_size: 3 pad: 1 stride: 2 } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "conv1_norm" type: "Normalize" bottom: "conv1" top: "conv1_norm" norm_param { across_spatial: false channel_shared: false } }
layer { name: "loc" type: "Convolution" bottom: "conv1_norm" top: "loc" convolution_param { num_output: 16 kernel_size: 3 pad: 1 } }
layer { name: "loc_perm" type: "Permute" bottom: "loc" top: "loc_perm" permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: "loc_flat" type: "Flatten" bottom: "loc_perm" top: "loc_flat" flatten_param { axis: 1 } }
layer { name: "conf" type: "Convolution" bottom: "conv1_norm" top: "conf" convolution_param { num_output: 12 kernel_size: 3 pad: 1 } }
layer { name: "conf_perm" type: "Permute" bottom: "conf" top: "conf_perm" permute_param { order: 0 order: 2 order: 3 order: 1 } }
layer { name: "conf_flat" type: "Flatten" bottom: "conf_perm" top: "conf_flat" }
layer { name: "priorbox" type: "PriorBox" bottom: "conv1_norm" bottom: "data" top: "priorbox"
        prior_box_param { min_size: 8 max_size: 16 aspect_ratio: 2 flip: true clip: true
                          variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2 step: 2 offset: 0.5 } }
layer { name: "conf_reshape" type: "Reshape" bottom: "conf_flat" top: "conf_reshape" reshape_param { shape { dim: 0 dim: -1 dim: 3 } } }
layer { name: "conf_softmax" type: "Softmax" bottom: "conf_reshape" top: "conf_softmax" softmax_param { axis: 2 } }
layer { name: "conf_out" type: "Flatten" bottom: "conf_softmax" top: "conf_out" }
layer { name: "detection_out" type: "DetectionOutput" bottom: "loc_flat" bottom: "conf_out" bottom: "priorbox" top: "detection_out"
        detection_output_param { num_classes: 3 share_location: true background_label_id: 0
          nms_param { nms_threshold: 0.45 top_k: 50 } code_type: CENTER_SIZE keep_top_k: 20 confidence_threshold: 0.01 } }
"""


def test_ssd_head(tmp_path: Path) -> None:
    blobs = {
        "conv1": [weights(8, 3, 3, 3, seed=1), weights(8, seed=2)],
        "conv1_norm": [np.random.default_rng(3).uniform(5, 20, 8).astype(np.float32)],
        "loc": [weights(16, 8, 3, 3, seed=4, scale=0.02), weights(16, seed=5, scale=0.1)],
        "conf": [weights(12, 8, 3, 3, seed=6, scale=0.2), weights(12, seed=7)],
    }
    model_path, _ = write_caffe(tmp_path, "ssd", SSD, blobs)
    n = helper.make_node
    init = {f"{k}_{i}": b for k, v in blobs.items() for i, b in enumerate(v)}
    init |= {"norm_scale": blobs["conv1_norm"][0].reshape(1, 8, 1, 1), "eps": np.array(1e-10, np.float32), "axes": np.array([1])}
    init["shape3"] = np.array([1, -1, 3])
    nodes = [
        n("Conv", ["data", "conv1_0", "conv1_1"], ["c1"], pads=[1, 1, 1, 1], strides=[2, 2]),
        n("Relu", ["c1"], ["r1"]),
        n("Mul", ["r1", "r1"], ["sq"]),
        n("ReduceSum", ["sq", "axes"], ["ss"], keepdims=1),
        n("Add", ["ss", "eps"], ["sse"]),
        n("Sqrt", ["sse"], ["norm"]),
        n("Div", ["r1", "norm"], ["unit"]),
        n("Mul", ["unit", "norm_scale"], ["feat"]),
        n("Conv", ["feat", "loc_0", "loc_1"], ["l"], pads=[1, 1, 1, 1]),
        n("Transpose", ["l"], ["lt"], perm=[0, 2, 3, 1]),
        n("Flatten", ["lt"], ["loc_flat"]),
        n("Conv", ["feat", "conf_0", "conf_1"], ["c"], pads=[1, 1, 1, 1]),
        n("Transpose", ["c"], ["ct"], perm=[0, 2, 3, 1]),
        n("Reshape", ["ct", "shape3"], ["cr"]),
        n("Softmax", ["cr"], ["cs"], axis=2),
        n("Flatten", ["cs"], ["conf_out"]),
    ]
    twin = onnx_model(nodes, {"data": [1, 3, 32, 32]}, ["loc_flat", "conf_out"], init)
    x = np.random.default_rng(8).standard_normal((1, 3, 32, 32)).astype(np.float32)
    loc, conf = ort_session_run(twin, {"data": x})
    priors = numpy_prior_box((16, 16), (32, 32), [8.0], [16.0], [2.0], flip=True, clip=True, step=2.0, variance=(0.1, 0.1, 0.2, 0.2))
    want = numpy_detection_output(loc, conf, priors, 3, 0, 0.45, 50, 20, 0.01)

    model = import_caffe(model_path)
    got = run(model, {"data": x})
    assert list(got) == ["detection_out"]
    assert (want[0, 0, :, 0] == 0).sum() == 20  # the case keeps a full set of detections
    np.testing.assert_allclose(got["detection_out"], want, rtol=1e-4, atol=1e-5)
