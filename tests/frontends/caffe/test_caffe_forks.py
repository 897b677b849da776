"""Fork layers (BN, Upsample, Axpy, ShuffleChannel, ReLU6, Reorg) and BVLC's Threshold and
Embed, against numpy written from the layers' Caffe sources."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.errors import IrforgeError
from tests.dialects.test_yolo import darknet_reorg
from tests.frontends.caffe.caffe_files import weights
from tests.frontends.caffe.test_caffe_layers import run_layers, x_of


def layer(kind: str, bottoms: str = '"x"', params: str = "") -> str:
    tops = " ".join(f"bottom: {b}" for b in bottoms.split())
    return f'layer {{ name: "l" type: "{kind}" {tops} top: "y" {params} }}'


def test_bn_scale_shift_form(tmp_path: Path) -> None:
    x, scale, shift = x_of(1, 3, 4, 5), weights(1, 3, 1, 1, seed=1), weights(1, 3, 1, 1, seed=2)
    got = run_layers(tmp_path, layer("BN", params="bn_param { bn_mode: INFERENCE scale_filler { type: 'constant' } }"), {"x": x}, {"l": [scale, shift]})["y"]
    np.testing.assert_allclose(got, x * scale + shift, rtol=1e-5, atol=1e-6)


def test_bn_with_statistics(tmp_path: Path) -> None:
    x, scale, shift, mean = x_of(1, 3, 4, 5), weights(1, 3, 1, 1, seed=1), weights(1, 3, 1, 1, seed=2), weights(1, 3, 1, 1, seed=3)
    variance = np.random.default_rng(4).uniform(0.5, 2, (1, 3, 1, 1)).astype(np.float32)
    got = run_layers(tmp_path, layer("BN", params="bn_param { eps: 0.001 }"), {"x": x}, {"l": [scale, shift, mean, variance]})["y"]
    np.testing.assert_allclose(got, scale * (x - mean) / np.sqrt(variance + 0.001) + shift, rtol=1e-5, atol=1e-5)


def test_bn_learn_mode_with_scale_shift_only_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IrforgeError, match="bn_mode LEARN normalises by the statistics of the batch") as info:
        run_layers(tmp_path, layer("BN"), {"x": x_of(1, 3, 2, 2)}, {"l": [weights(1, 3, 1, 1, seed=1), weights(1, 3, 1, 1, seed=2)]})
    assert info.value.code == "E205"


@pytest.mark.parametrize("params", ["upsample_param { scale: 2 }", "upsample_param { scale_h: 3 scale_w: 2 }"])
def test_upsample_nearest(tmp_path: Path, params: str) -> None:
    x = x_of(1, 2, 3, 4)
    got = run_layers(tmp_path, layer("Upsample", params=params), {"x": x})["y"]
    sh, sw = (3, 2) if "scale_h" in params else (2, 2)
    np.testing.assert_array_equal(got, x.repeat(sh, axis=2).repeat(sw, axis=3))


def test_upsample_with_a_mask_bottom_unpools(tmp_path: Path) -> None:
    # the mask as a net input (floats, as Caffe's mask tops are): each value lands at its index
    x = x_of(1, 2, 3, 3)
    mask = np.stack([np.random.default_rng(c).permutation(36)[:9] for c in range(2)]).reshape(1, 2, 3, 3).astype(np.float32)
    got = run_layers(tmp_path, layer("Upsample", '"x" "m"', "upsample_param { scale: 2 }"), {"x": x, "m": mask})["y"]
    want = np.zeros((1, 2, 36), np.float32)
    np.put_along_axis(want, mask.reshape(1, 2, 9).astype(np.int64), x.reshape(1, 2, 9), axis=2)
    np.testing.assert_array_equal(got, want.reshape(1, 2, 6, 6))


def test_axpy(tmp_path: Path) -> None:
    a, x, y = x_of(2, 3, 1, 1, seed=1), x_of(2, 3, 4, 5, seed=2), x_of(2, 3, 4, 5, seed=3)
    got = run_layers(tmp_path, layer("Axpy", '"a" "x" "z"'), {"a": a, "x": x, "z": y})["y"]
    np.testing.assert_allclose(got, a * x + y, rtol=1e-6, atol=1e-6)


def test_shuffle_channel(tmp_path: Path) -> None:
    x = x_of(1, 6, 2, 3)
    got = run_layers(tmp_path, layer("ShuffleChannel", params="shuffle_channel_param { group: 2 }"), {"x": x})["y"]
    np.testing.assert_array_equal(got, x.reshape(1, 2, 3, 2, 3).transpose(0, 2, 1, 3, 4).reshape(1, 6, 2, 3))


def test_relu6(tmp_path: Path) -> None:
    x = x_of(1, 2, 3, 3) * 5
    np.testing.assert_array_equal(run_layers(tmp_path, layer("ReLU6"), {"x": x})["y"], np.clip(x, 0, 6))


def test_reorg(tmp_path: Path) -> None:
    x = x_of(1, 4, 6, 8)
    got = run_layers(tmp_path, layer("Reorg", params="reorg_param { stride: 2 }"), {"x": x})["y"]
    np.testing.assert_array_equal(got, darknet_reorg(x, 2))


def test_threshold(tmp_path: Path) -> None:
    x = x_of(1, 2, 3, 3)
    got = run_layers(tmp_path, layer("Threshold", params="threshold_param { threshold: 0.2 }"), {"x": x})["y"]
    np.testing.assert_array_equal(got, (x > 0.2).astype(np.float32))


@pytest.mark.parametrize("bias", [True, False])
def test_embed(tmp_path: Path, bias: bool) -> None:
    x = np.array([[3, 0, 4], [1, 1, 2]], np.float32)
    w, b = weights(5, 4, seed=1), weights(4, seed=2)
    params = f"embed_param {{ num_output: 4 input_dim: 5 bias_term: {str(bias).lower()} }}"
    got = run_layers(tmp_path, layer("Embed", params=params), {"x": x}, {"l": [w, b] if bias else [w]})["y"]
    np.testing.assert_allclose(got, w[x.astype(int)] + (b if bias else 0), rtol=1e-6)


@pytest.mark.parametrize("kind", ["ConvolutionDepthwise", "DepthwiseConvolution"])
@pytest.mark.parametrize("group", ["", "group: 3"])
def test_depthwise_convolution_fork_layers(tmp_path: Path, kind: str, group: str) -> None:
    # one 3x3 filter per channel (stride 2, pad 1), as yonghenglh6's ConvolutionDepthwise
    x, w, b = x_of(1, 3, 7, 6), weights(3, 1, 3, 3, seed=1), weights(3, seed=2)
    params = f"convolution_param {{ num_output: 3 {group} kernel_size: 3 stride: 2 pad: 1 }}"
    got = run_layers(tmp_path, layer(kind, params=params), {"x": x}, {"l": [w, b]})["y"]
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros((1, 3, 4, 3), np.float32)
    for c in range(3):
        for i in range(4):
            for j in range(3):
                want[0, c, i, j] = (padded[0, c, 2 * i : 2 * i + 3, 2 * j : 2 * j + 3] * w[c, 0]).sum() + b[c]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_depthwise_convolution_changing_channels_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IrforgeError, match="num_output 6 differs from the input's 3 channels"):
        run_layers(tmp_path, layer("ConvolutionDepthwise", params="convolution_param { num_output: 6 kernel_size: 3 }"), {"x": x_of(1, 3, 5, 5)}, {"l": [weights(6, 1, 3, 3, seed=1), weights(6, seed=2)]})


def test_interp_use_blob_size(tmp_path: Path) -> None:
    # soeaver's fork: use_blob_size takes the output size from bottom[1] (FPN's p5_interp)
    x, like = x_of(1, 2, 5, 6), x_of(1, 3, 9, 11, seed=1)
    params = "interp_param { use_blob_size: true }"
    got = run_layers(tmp_path, layer("Interp", '"x" "like"', params), {"x": x, "like": like})["y"]
    assert got.shape == (1, 2, 9, 11)
    np.testing.assert_allclose(got[:, :, ::2, ::2], x, rtol=1e-5, atol=1e-6)  # aligned corners
    with pytest.raises(IrforgeError, match="use_blob_size needs a second bottom"):
        run_layers(tmp_path, layer("Interp", params=params), {"x": x})
