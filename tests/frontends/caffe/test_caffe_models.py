"""Whole Caffe nets: import + reference interpreter against the same net built in ONNX from the
same weights and run by onnxruntime; V1 and in-place variants; linear-op fusion after import."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper

from irforge.backends.reference import run
from irforge.dialects.nn import BatchNormalization, Convolution, ScaleShift
from irforge.frontends.caffe import import_caffe
from irforge.passes import apply_pipeline
from tests.frontends.caffe.caffe_files import weights, write_caffe
from tests.helpers import ort_session_run

LENET = """
name: "LeNet"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 1 dim: 28 dim: 28 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        convolution_param { num_output: 4 kernel_size: 5 stride: 1 } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
        convolution_param { num_output: 6 kernel_h: 3 kernel_w: 5 stride: 1 } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1" inner_product_param { num_output: 16 } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2" inner_product_param { num_output: 10 } }
layer { name: "prob" type: "Softmax" bottom: "ip2" top: "prob" }
"""

LENET_V1 = """
name: "LeNet"
input: "data"
input_dim: 2 input_dim: 1 input_dim: 28 input_dim: 28
layers { name: "conv1" type: CONVOLUTION bottom: "data" top: "conv1" convolution_param { num_output: 4 kernel_size: 5 } }
layers { name: "pool1" type: POOLING bottom: "conv1" top: "pool1" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layers { name: "conv2" type: CONVOLUTION bottom: "pool1" top: "conv2" convolution_param { num_output: 6 kernel_h: 3 kernel_w: 5 } }
layers { name: "pool2" type: POOLING bottom: "conv2" top: "pool2" pooling_param { pool: MAX kernel_size: 3 stride: 2 } }
layers { name: "ip1" type: INNER_PRODUCT bottom: "pool2" top: "ip1" inner_product_param { num_output: 16 } }
layers { name: "relu1" type: RELU bottom: "ip1" top: "ip1" }
layers { name: "ip2" type: INNER_PRODUCT bottom: "ip1" top: "ip2" inner_product_param { num_output: 10 } }
layers { name: "prob" type: SOFTMAX bottom: "ip2" top: "prob" }
"""


def lenet_blobs() -> dict[str, list[np.ndarray]]:
    # pool1: 24 -> 12; conv2 (3x5): 10x8; pool2 (3, s2, ceil): ceil(7/2)+1 = 5 x ceil(5/2)+1 = 4
    return {
        "conv1": [weights(4, 1, 5, 5, seed=1), weights(4, seed=2)],
        "conv2": [weights(6, 4, 3, 5, seed=3), weights(6, seed=4)],
        "ip1": [weights(16, 6 * 5 * 4, seed=5, scale=0.1), weights(16, seed=6)],
        "ip2": [weights(10, 16, seed=7), weights(10, seed=8)],
    }


def onnx_model(nodes: list[onnx.NodeProto], inputs: dict[str, list[int]], outputs: list[str], init: dict[str, np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "caffe_twin",
        [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, s) for n, s in inputs.items()],
        [helper.make_empty_tensor_value_info(n) for n in outputs],
        [numpy_helper.from_array(np.ascontiguousarray(a), n) for n, a in init.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def lenet_onnx(blobs: dict[str, list[np.ndarray]]) -> onnx.ModelProto:
    n = helper.make_node
    init = {f"{k}_{i}": b for k, v in blobs.items() for i, b in enumerate(v)}
    nodes = [
        n("Conv", ["data", "conv1_0", "conv1_1"], ["c1"]),
        n("MaxPool", ["c1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1),
        n("Conv", ["p1", "conv2_0", "conv2_1"], ["c2"]),
        n("MaxPool", ["c2"], ["p2"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        n("Flatten", ["p2"], ["f"]),
        n("Gemm", ["f", "ip1_0", "ip1_1"], ["i1"], transB=1),
        n("Relu", ["i1"], ["r1"]),
        n("Gemm", ["r1", "ip2_0", "ip2_1"], ["i2"], transB=1),
        n("Softmax", ["i2"], ["prob"], axis=1),
    ]
    return onnx_model(nodes, {"data": [2, 1, 28, 28]}, ["prob"], init)


def check_against_onnx(model_path: Path, twin: onnx.ModelProto, feeds: dict[str, np.ndarray], atol: float = 1e-5) -> dict[str, np.ndarray]:
    model = import_caffe(model_path)
    got = run(model, feeds)
    want = ort_session_run(twin, feeds)
    assert len(got) == len(want)
    for (name, g), w in zip(got.items(), want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=atol, err_msg=name)
    return got


def test_lenet_matches_onnxruntime(tmp_path: Path) -> None:
    blobs = lenet_blobs()
    model_path, _ = write_caffe(tmp_path, "lenet", LENET, blobs)
    x = np.random.default_rng(0).standard_normal((2, 1, 28, 28)).astype(np.float32)
    got = check_against_onnx(model_path, lenet_onnx(blobs), {"data": x})
    assert got["prob"].shape == (2, 10)


def test_lenet_v1_format_with_legacy_blob_shapes(tmp_path: Path) -> None:
    blobs = lenet_blobs()
    model_path, _ = write_caffe(tmp_path, "lenet_v1", LENET_V1, blobs, v1=True, legacy_shapes=True)
    x = np.random.default_rng(1).standard_normal((2, 1, 28, 28)).astype(np.float32)
    check_against_onnx(model_path, lenet_onnx(blobs), {"data": x})


RESNET_BLOCK = """
name: "ResBlock"
input: "data"
input_shape { dim: 1 dim: 4 dim: 8 dim: 8 }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        convolution_param { num_output: 4 kernel_size: 3 pad: 1 bias_term: false } }
layer { name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" batch_norm_param { use_global_stats: true eps: 0.001 } }
layer { name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param { bias_term: true } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
        convolution_param { num_output: 4 kernel_size: 3 pad: 1 bias_term: false } }
layer { name: "bn2" type: "BatchNorm" bottom: "conv2" top: "conv2" }
layer { name: "scale2" type: "Scale" bottom: "conv2" top: "conv2" scale_param { bias_term: true } }
layer { name: "sum" type: "Eltwise" bottom: "data" bottom: "conv2" top: "sum" }
layer { name: "relu2" type: "ReLU" bottom: "sum" top: "sum" }
"""


def bn_blobs(seed: int, factor: float) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    mean = rng.standard_normal(4).astype(np.float32) * factor
    var = rng.uniform(0.5, 2.0, 4).astype(np.float32) * factor
    return [mean, var, np.array([factor], np.float32)]


def resnet_files(tmp_path: Path) -> tuple[Path, onnx.ModelProto]:
    blobs = {
        "conv1": [weights(4, 4, 3, 3, seed=1)],
        "bn1": bn_blobs(2, factor=7.5),  # running sums: mean and variance are divided by 7.5
        "scale1": [weights(4, seed=3) + 1, weights(4, seed=4)],
        "conv2": [weights(4, 4, 3, 3, seed=5)],
        "bn2": bn_blobs(6, factor=1.0),
        "scale2": [weights(4, seed=7) + 1, weights(4, seed=8)],
    }
    model_path, _ = write_caffe(tmp_path, "resblock", RESNET_BLOCK, blobs)
    n = helper.make_node
    init: dict[str, np.ndarray] = {"w1": blobs["conv1"][0], "w2": blobs["conv2"][0]}
    for i, eps in ((1, 1e-3), (2, 1e-5)):
        mean, var, factor = blobs[f"bn{i}"]
        init |= {f"s{i}": blobs[f"scale{i}"][0], f"b{i}": blobs[f"scale{i}"][1], f"m{i}": mean / factor[0], f"v{i}": var / factor[0]}
    nodes = [
        n("Conv", ["data", "w1"], ["c1"], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c1", "s1", "b1", "m1", "v1"], ["n1"], epsilon=1e-3),
        n("Relu", ["n1"], ["r1"]),
        n("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c2", "s2", "b2", "m2", "v2"], ["n2"], epsilon=1e-5),
        n("Add", ["data", "n2"], ["a"]),
        n("Relu", ["a"], ["sum"]),
    ]
    return model_path, onnx_model(nodes, {"data": [1, 4, 8, 8]}, ["sum"], init)


def test_resnet_block_in_place_batchnorm_scale(tmp_path: Path) -> None:
    model_path, twin = resnet_files(tmp_path)
    x = np.random.default_rng(2).standard_normal((1, 4, 8, 8)).astype(np.float32)
    got = check_against_onnx(model_path, twin, {"data": x})
    assert list(got) == ["sum"]


def test_fuse_linear_ops_folds_batchnorm_and_scale_into_convolution(tmp_path: Path) -> None:
    model_path, twin = resnet_files(tmp_path)
    model = import_caffe(model_path)
    ops = [type(op) for op in model.func.body.block.ops]
    assert ops.count(BatchNormalization) == 2 and ops.count(ScaleShift) == 2
    apply_pipeline(model.module, "infer-shapes,canonicalize,fuse-linear-ops")
    ops_after = list(model.func.body.block.ops)
    assert not any(isinstance(op, BatchNormalization | ScaleShift) for op in ops_after)
    convs = [op for op in ops_after if isinstance(op, Convolution)]
    assert len(convs) == 2 and all(c.bias is not None for c in convs)
    x = np.random.default_rng(3).standard_normal((1, 4, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(run(model, {"data": x})["sum"], ort_session_run(twin, {"data": x})[0], rtol=1e-4, atol=1e-5)


INCEPTION = """
name: "Inception"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 1 dim: 8 dim: 10 dim: 10 } } }
layer { name: "b1" type: "Convolution" bottom: "data" top: "b1" convolution_param { num_output: 4 kernel_size: 1 } }
layer { name: "b1_relu" type: "ReLU" bottom: "b1" top: "b1" }
layer { name: "b2" type: "Convolution" bottom: "data" top: "b2" convolution_param { num_output: 4 kernel_size: 3 pad: 1 } }
layer { name: "b2_relu" type: "ReLU" bottom: "b2" top: "b2" }
layer { name: "b3_pool" type: "Pooling" bottom: "data" top: "b3_pool" pooling_param { pool: MAX kernel_size: 3 stride: 1 pad: 1 } }
layer { name: "b3" type: "Convolution" bottom: "b3_pool" top: "b3" convolution_param { num_output: 2 kernel_size: 1 } }
layer { name: "concat" type: "Concat" bottom: "b1" bottom: "b2" bottom: "b3" top: "concat" }
layer { name: "norm" type: "LRN" bottom: "concat" top: "norm" lrn_param { local_size: 5 alpha: 0.5 beta: 0.75 k: 2 } }
"""


def test_inception_block_concat_lrn(tmp_path: Path) -> None:
    blobs = {
        "b1": [weights(4, 8, 1, 1, seed=1), weights(4, seed=2)],
        "b2": [weights(4, 8, 3, 3, seed=3), weights(4, seed=4)],
        "b3": [weights(2, 8, 1, 1, seed=5), weights(2, seed=6)],
    }
    model_path, _ = write_caffe(tmp_path, "inception", INCEPTION, blobs)
    n = helper.make_node
    nodes = [
        n("Conv", ["data", "b1_0", "b1_1"], ["c1"]),
        n("Relu", ["c1"], ["r1"]),
        n("Conv", ["data", "b2_0", "b2_1"], ["c2"], pads=[1, 1, 1, 1]),
        n("Relu", ["c2"], ["r2"]),
        n("MaxPool", ["data"], ["p3"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        n("Conv", ["p3", "b3_0", "b3_1"], ["c3"]),
        n("Concat", ["r1", "r2", "c3"], ["cat"], axis=1),
        n("LRN", ["cat"], ["norm"], size=5, alpha=0.5, beta=0.75, bias=2.0),
    ]
    init = {f"{k}_{i}": b for k, v in blobs.items() for i, b in enumerate(v)}
    twin = onnx_model(nodes, {"data": [1, 8, 10, 10]}, ["norm"], init)
    x = np.random.default_rng(4).standard_normal((1, 8, 10, 10)).astype(np.float32)
    got = check_against_onnx(model_path, twin, {"data": x})
    assert got["norm"].shape == (1, 10, 10, 10)
