"""Single Caffe layers: their parameters against numpy written from Caffe's layer definitions
(or onnxruntime for convolutions), and the zero-copy reading of caffemodel blobs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pytest

from irforge.backends.reference import run
from irforge.frontends.caffe import import_caffe
from irforge.frontends.caffe.loader import load_caffemodel
from tests.frontends.caffe.caffe_files import weights, write_caffe
from tests.helpers import onnx_run


def run_layers(tmp_path: Path, layers: str, inputs: Mapping[str, np.ndarray], blobs: Mapping[str, Sequence[np.ndarray]] = {}) -> dict[str, np.ndarray]:
    header = "".join(
        f'input: "{n}"\ninput_shape {{ {" ".join(f"dim: {d}" for d in x.shape)} }}\n' for n, x in inputs.items()
    )
    model, _ = write_caffe(tmp_path, "net", header + layers, blobs)
    return run(import_caffe(model), dict(inputs))


def x_of(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def caffe_pool(x: np.ndarray, k: int, s: int, p: int, method: str) -> np.ndarray:
    """Caffe's pooling_layer.cpp, for square windows."""
    n, c, h, w = x.shape
    out = lambda size: -(-(size + 2 * p - k) // s) + 1  # noqa: E731  (ceil)
    oh, ow = out(h), out(w)
    if p and (oh - 1) * s >= h + p:
        oh -= 1
    if p and (ow - 1) * s >= w + p:
        ow -= 1
    y = np.zeros((n, c, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * s - p, j * s - p
            he, we = min(hs + k, h + p), min(ws + k, w + p)
            size = (he - hs) * (we - ws)
            window = x[:, :, max(hs, 0) : min(he, h), max(ws, 0) : min(we, w)]
            y[:, :, i, j] = window.max(axis=(2, 3)) if method == "MAX" else window.sum(axis=(2, 3)) / size
    return y


@pytest.mark.parametrize(("size", "k", "s", "p"), [(5, 2, 2, 1), (6, 3, 2, 1), (7, 3, 2, 0), (4, 3, 1, 1)])
@pytest.mark.parametrize("method", ["MAX", "AVE"])
def test_pooling_ceil_rounding_and_padding(tmp_path: Path, size: int, k: int, s: int, p: int, method: str) -> None:
    x = x_of(1, 2, size, size)
    layer = f'layer {{ name: "pool" type: "Pooling" bottom: "x" top: "y" pooling_param {{ pool: {method} kernel_size: {k} stride: {s} pad: {p} }} }}'
    np.testing.assert_allclose(run_layers(tmp_path, layer, {"x": x})["y"], caffe_pool(x, k, s, p, method), rtol=1e-5, atol=1e-6)


def test_global_pooling(tmp_path: Path) -> None:
    x = x_of(2, 3, 4, 5)
    layer = 'layer { name: "pool" type: "Pooling" bottom: "x" top: "y" pooling_param { pool: AVE global_pooling: true } }'
    np.testing.assert_allclose(run_layers(tmp_path, layer, {"x": x})["y"], x.mean(axis=(2, 3), keepdims=True), rtol=1e-5)


def test_convolution_group_dilation_and_deconvolution(tmp_path: Path) -> None:
    x = x_of(1, 4, 9, 9)
    w, b, dw = weights(6, 2, 3, 3, seed=1), weights(6, seed=2), weights(6, 1, 4, 4, seed=3)
    layers = """
layer { name: "conv" type: "Convolution" bottom: "x" top: "c" convolution_param { num_output: 6 kernel_size: 3 group: 2 dilation: 2 pad_h: 1 pad_w: 2 stride_h: 1 stride_w: 2 } }
layer { name: "deconv" type: "Deconvolution" bottom: "c" top: "d" convolution_param { num_output: 6 kernel_size: 4 stride: 2 pad: 1 group: 6 bias_term: false } }
"""
    got = run_layers(tmp_path, layers, {"x": x}, {"conv": [w, b], "deconv": [dw]})
    (c,) = onnx_run("Conv", [x], [w, b], group=2, dilations=[2, 2], pads=[1, 2, 1, 2], strides=[1, 2])
    (d,) = onnx_run("ConvTranspose", [c], [dw], group=6, strides=[2, 2], pads=[1, 1, 1, 1])
    np.testing.assert_allclose(got["d"], d, rtol=1e-4, atol=1e-5)


def test_inner_product_axis_and_transpose(tmp_path: Path) -> None:
    x, w, b = x_of(2, 3, 4, 5), weights(20, 6, seed=1), weights(6, seed=2)
    layer = 'layer { name: "ip" type: "InnerProduct" bottom: "x" top: "y" inner_product_param { num_output: 6 axis: 2 transpose: true } }'
    want = x.reshape(2, 3, 20) @ w + b
    np.testing.assert_allclose(run_layers(tmp_path, layer, {"x": x}, {"ip": [w, b]})["y"], want, rtol=1e-5, atol=1e-5)


def test_elementwise_activations(tmp_path: Path) -> None:
    x = x_of(2, 3, 4)
    names = {"AbsVal": np.abs(x), "Sigmoid": 1 / (1 + np.exp(-x)), "TanH": np.tanh(x), "BNLL": np.log1p(np.exp(x))}
    layers = "".join(f'layer {{ name: "{t}" type: "{t}" bottom: "x" top: "{t}" }}\n' for t in names)
    layers += 'layer { name: "elu" type: "ELU" bottom: "x" top: "elu" elu_param { alpha: 0.5 } }\n'
    layers += 'layer { name: "prelu" type: "PReLU" bottom: "x" top: "prelu" }\n'
    slope = np.array([0.1, 0.2, 0.3], np.float32)
    got = run_layers(tmp_path, layers, {"x": x}, {"prelu": [slope]})
    for t, want in names.items():
        np.testing.assert_allclose(got[t], want, rtol=1e-5, atol=1e-6, err_msg=t)
    np.testing.assert_allclose(got["elu"], np.where(x > 0, x, 0.5 * (np.exp(x) - 1)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["prelu"], np.where(x > 0, x, slope[None, :, None] * x), rtol=1e-6)


def test_power_exp_log(tmp_path: Path) -> None:
    x = np.random.default_rng(0).uniform(0.5, 2, (2, 3)).astype(np.float32)
    layers = """
layer { name: "pow" type: "Power" bottom: "x" top: "pow" power_param { power: 2 scale: 3 shift: 1 } }
layer { name: "exp" type: "Exp" bottom: "x" top: "exp" exp_param { base: 2 scale: 0.5 shift: 1 } }
layer { name: "expe" type: "Exp" bottom: "x" top: "expe" }
layer { name: "log" type: "Log" bottom: "x" top: "log" log_param { base: 10 scale: 2 shift: 0.5 } }
"""
    got = run_layers(tmp_path, layers, {"x": x})
    np.testing.assert_allclose(got["pow"], (1 + 3 * x) ** 2, rtol=1e-5)
    np.testing.assert_allclose(got["exp"], 2 ** (1 + 0.5 * x), rtol=1e-5)
    np.testing.assert_allclose(got["expe"], np.exp(x), rtol=1e-5)
    np.testing.assert_allclose(got["log"], np.log10(0.5 + 2 * x), rtol=1e-5)


def test_batch_norm_batch_statistics_and_mvn(tmp_path: Path) -> None:
    x = x_of(3, 2, 4, 4)
    layers = """
layer { name: "bn" type: "BatchNorm" bottom: "x" top: "bn" batch_norm_param { use_global_stats: false eps: 0.01 } }
layer { name: "mvn" type: "MVN" bottom: "x" top: "mvn" mvn_param { across_channels: true eps: 0.001 } }
"""
    got = run_layers(tmp_path, layers, {"x": x}, {"bn": [np.zeros(2, np.float32), np.ones(2, np.float32), np.ones(1, np.float32)]})
    m, v = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(got["bn"], (x - m) / np.sqrt(v + 0.01), rtol=1e-4, atol=1e-5)
    m, v = x.mean(axis=(1, 2, 3), keepdims=True), x.var(axis=(1, 2, 3), keepdims=True)
    np.testing.assert_allclose(got["mvn"], (x - m) / (np.sqrt(v) + 0.001), rtol=1e-4, atol=1e-5)


def test_scale_and_bias_variants(tmp_path: Path) -> None:
    x, s = x_of(2, 3, 4), x_of(2, 3, seed=1)
    layers = """
layer { name: "s2" type: "Scale" bottom: "x" bottom: "s" top: "by_bottom" scale_param { axis: 0 } }
layer { name: "sa" type: "Scale" bottom: "x" top: "all" scale_param { axis: 1 num_axes: -1 bias_term: true } }
layer { name: "b" type: "Bias" bottom: "x" top: "bias" bias_param { axis: 2 } }
"""
    blobs = {"sa": [weights(3, 4, seed=2), weights(3, 4, seed=3)], "b": [weights(4, seed=4)]}
    got = run_layers(tmp_path, layers, {"x": x, "s": s}, blobs)
    np.testing.assert_allclose(got["by_bottom"], x * s[:, :, None], rtol=1e-6)
    np.testing.assert_allclose(got["all"], x * blobs["sa"][0] + blobs["sa"][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["bias"], x + blobs["b"][0], rtol=1e-6)


def test_eltwise_operations(tmp_path: Path) -> None:
    a, b, c = x_of(2, 3, seed=1), x_of(2, 3, seed=2), x_of(2, 3, seed=3)
    layers = """
layer { name: "sum" type: "Eltwise" bottom: "a" bottom: "b" bottom: "c" top: "sum" eltwise_param { operation: SUM coeff: 1 coeff: -1 coeff: 0.5 } }
layer { name: "prod" type: "Eltwise" bottom: "a" bottom: "b" top: "prod" eltwise_param { operation: PROD } }
layer { name: "max" type: "Eltwise" bottom: "a" bottom: "b" bottom: "c" top: "max" eltwise_param { operation: MAX } }
"""
    got = run_layers(tmp_path, layers, {"a": a, "b": b, "c": c})
    np.testing.assert_allclose(got["sum"], a - b + 0.5 * c, rtol=1e-6)
    np.testing.assert_allclose(got["prod"], a * b, rtol=1e-6)
    np.testing.assert_allclose(got["max"], np.maximum(np.maximum(a, b), c))


def test_shape_layers(tmp_path: Path) -> None:
    x, ref = x_of(2, 6, 4, 5), x_of(1, 1, 2, 3)
    layers = """
layer { name: "slice" type: "Slice" bottom: "x" top: "s1" top: "s2" top: "s3" slice_param { axis: 1 slice_point: 1 slice_point: 4 } }
layer { name: "split" type: "Split" bottom: "s3" top: "t1" top: "t2" }
layer { name: "concat" type: "Concat" bottom: "t1" bottom: "s1" top: "cat" concat_param { concat_dim: 1 } }
layer { name: "flat" type: "Flatten" bottom: "x" top: "flat" flatten_param { axis: 1 end_axis: 2 } }
layer { name: "reshape" type: "Reshape" bottom: "x" top: "reshape" reshape_param { shape { dim: 0 dim: -1 dim: 10 } axis: 1 } }
layer { name: "crop" type: "Crop" bottom: "s2" bottom: "ref" top: "crop" crop_param { axis: 2 offset: 1 offset: 2 } }
layer { name: "tile" type: "Tile" bottom: "t2" top: "tile" tile_param { axis: 3 tiles: 2 } }
layer { name: "red" type: "Reduction" bottom: "x" top: "red" reduction_param { operation: SUMSQ axis: 2 coeff: 0.5 } }
layer { name: "argmax" type: "ArgMax" bottom: "x" top: "argmax" argmax_param { axis: 1 } }
layer { name: "perm" type: "Permute" bottom: "x" top: "perm" permute_param { order: 0 order: 3 } }
"""
    got = run_layers(tmp_path, layers, {"x": x, "ref": ref})
    np.testing.assert_array_equal(got["cat"], np.concatenate([x[:, 4:], x[:, :1]], axis=1))
    np.testing.assert_array_equal(got["flat"], x.reshape(2, 24, 5))
    np.testing.assert_array_equal(got["reshape"], x.reshape(2, 6, 2, 10))
    np.testing.assert_array_equal(got["crop"], x[:, 1:4, 1:3, 2:5])
    np.testing.assert_array_equal(got["tile"], np.tile(x[:, 4:], (1, 1, 1, 2)))
    np.testing.assert_allclose(got["red"], 0.5 * (x**2).sum(axis=(2, 3)), rtol=1e-5)
    np.testing.assert_array_equal(got["argmax"], x.argmax(axis=1)[:, None].astype(np.float32))
    np.testing.assert_array_equal(got["perm"], x.transpose(0, 3, 1, 2))


def test_lrn_within_channel_and_interp(tmp_path: Path) -> None:
    x = x_of(1, 2, 5, 6)
    layers = """
layer { name: "lrn" type: "LRN" bottom: "x" top: "lrn" lrn_param { norm_region: WITHIN_CHANNEL local_size: 3 alpha: 0.9 beta: 0.75 } }
layer { name: "interp" type: "Interp" bottom: "x" top: "interp" interp_param { zoom_factor: 2 } }
"""
    got = run_layers(tmp_path, layers, {"x": x})
    padded = np.pad(x**2, ((0, 0), (0, 0), (1, 1), (1, 1)))
    window = sum(padded[:, :, i : i + 5, j : j + 6] for i in range(3) for j in range(3))
    np.testing.assert_allclose(got["lrn"], x / (1 + 0.9 / 9 * window) ** 0.75, rtol=1e-5)
    # zoom 2: size + (size - 1), bilinear with aligned corners: even rows are the input's
    assert got["interp"].shape == (1, 2, 9, 11)
    np.testing.assert_allclose(got["interp"][:, :, ::2, ::2], x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["interp"][:, :, 1::2, ::2], (x[:, :, 1:] + x[:, :, :-1]) / 2, rtol=1e-5, atol=1e-6)


def test_caffemodel_blobs_are_views_of_the_mapped_file(tmp_path: Path) -> None:
    big = weights(64, 32, 3, 3, seed=0)
    model, _ = write_caffe(tmp_path, "net", "", {"conv": [big, weights(64, seed=1)]})
    blobs, mapping = load_caffemodel(model)
    array = blobs["conv"][0]
    assert mapping is not None and array.base is not None and not array.flags.owndata
    np.testing.assert_array_equal(array, big)
    legacy, _ = write_caffe(tmp_path, "legacy", "", {"fc": [weights(10, 20, seed=2)]}, v1=True, legacy_shapes=True)
    assert load_caffemodel(legacy)[0]["fc"][0].shape == (1, 1, 10, 20)
