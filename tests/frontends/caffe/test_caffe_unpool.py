"""SegNet / ENet unpooling: Caffe's Pooling with a mask top and the forks' Upsample with a
mask bottom, against numpy written from Caffe's pooling_layer.cpp (MAX with a mask: the first
maximum of a window, as the flat index h * W + w of the input plane) and SegNet's
upsample_layer.cpp (zeros, then top[mask[i]] = bottom[i]); on the reference interpreter, the
CPU backend and OpenVINO running the written IR."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.errors import IrforgeError
from irforge.frontends.caffe import import_caffe
from tests.backends.cpu.conftest import cache_dir, run_cpu  # noqa: F401  (cache_dir: the fixture)
from tests.backends.ir_xml_support import run_openvino
from tests.frontends.caffe.caffe_files import write_caffe
from tests.frontends.caffe.test_caffe_layers import x_of


def caffe_max_pool_with_mask(x: np.ndarray, k: int, s: int, p: int, ceil: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Caffe's MAX pooling forward with a second top (square windows)."""
    n, c, h, w = x.shape
    steps = (lambda a: -(-a // s)) if ceil else (lambda a: a // s)
    oh, ow = steps(h + 2 * p - k) + 1, steps(w + 2 * p - k) + 1
    if p and (oh - 1) * s >= h + p:
        oh -= 1
    if p and (ow - 1) * s >= w + p:
        ow -= 1
    top = np.full((n, c, oh, ow), -np.finfo(np.float32).max, np.float32)
    mask = np.full((n, c, oh, ow), -1.0, np.float32)
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * s - p, j * s - p
            he, we = min(hs + k, h), min(ws + k, w)
            for a in range(max(hs, 0), he):
                for b in range(max(ws, 0), we):
                    better = x[:, :, a, b] > top[:, :, i, j]  # strict: the first maximum stays
                    top[:, :, i, j] = np.where(better, x[:, :, a, b], top[:, :, i, j])
                    mask[:, :, i, j] = np.where(better, a * w + b, mask[:, :, i, j])
    return top, mask


def segnet_upsample(x: np.ndarray, mask: np.ndarray, height: int, width: int) -> np.ndarray:
    n, c = x.shape[:2]
    out = np.zeros((n, c, height * width), np.float32)
    for a in range(n):
        for b in range(c):
            for value, index in zip(x[a, b].ravel(), mask[a, b].ravel()):
                out[a, b, int(index)] = value
    return out.reshape(n, c, height, width)


def unpool_net(shape: tuple[int, ...], k: int, s: int, p: int, upsample: str, pool_extra: str = "") -> str:
    dims = " ".join(f"dim: {d}" for d in shape)
    return (
        f'input: "x"\ninput_shape {{ {dims} }}\n'
        f'layer {{ name: "pool" type: "Pooling" bottom: "x" top: "pooled" top: "mask" pooling_param {{ pool: MAX kernel_size: {k} stride: {s} pad: {p} {pool_extra} }} }}\n'
        'layer { name: "conv" type: "Convolution" bottom: "pooled" top: "feat" convolution_param { num_output: 2 kernel_size: 1 } }\n'
        f'layer {{ name: "up" type: "Upsample" bottom: "feat" bottom: "mask" top: "y" upsample_param {{ {upsample} }} }}\n'
    )


CONV = {"conv": [np.array([[1.0, 0.5], [-0.25, 2.0]], np.float32).reshape(2, 2, 1, 1), np.array([0.1, -0.2], np.float32)]}


def conv1x1(x: np.ndarray) -> np.ndarray:
    w, b = CONV["conv"]
    return np.einsum("oc,nchw->nohw", w[:, :, 0, 0], x) + b.reshape(1, -1, 1, 1)


# (input shape, kernel, stride, pad, upsample_param, expected output plane)
CASES = [
    pytest.param((1, 2, 8, 10), 2, 2, 0, "scale: 2", (8, 10), id="enet-scale"),
    pytest.param((2, 2, 7, 9), 2, 2, 0, "scale: 2 upsample_h: 7 upsample_w: 9", (7, 9), id="segnet-odd-ceil"),
    pytest.param((1, 2, 5, 7), 3, 2, 1, "scale: 2 upsample_h: 5 upsample_w: 7", (5, 7), id="overlapping-padded"),
    pytest.param((1, 2, 5, 6), 2, 2, 0, "scale: 2 pad_out_h: true", (5, 6), id="pad-out"),
]


@pytest.mark.parametrize(("shape", "k", "s", "p", "upsample", "plane"), CASES)
def test_unpooling_matches_caffe(tmp_path: Path, cache_dir, shape, k, s, p, upsample, plane) -> None:  # type: ignore[no-untyped-def]
    x = x_of(*shape, seed=3)
    model_path, _ = write_caffe(tmp_path, "net", unpool_net(shape, k, s, p, upsample), CONV)
    model = import_caffe(model_path)
    pooled, mask = caffe_max_pool_with_mask(x, k, s, p)
    want = segnet_upsample(conv1x1(pooled), mask, *plane)
    got = run(model, {"x": x})["y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run_cpu(model, {"x": x}, cache_dir)["y"], want, rtol=1e-5, atol=1e-6)
    xml, _ = write_ir_xml(model, tmp_path / "net.xml")
    np.testing.assert_allclose(run_openvino(xml, {"x": x})["y"], want, rtol=1e-5, atol=1e-6)


def test_mask_top_is_caffe_float_index(tmp_path: Path) -> None:
    x = x_of(1, 3, 7, 6, seed=5)
    text = 'input: "x"\ninput_shape { dim: 1 dim: 3 dim: 7 dim: 6 }\nlayer { name: "pool" type: "Pooling" bottom: "x" top: "p" top: "m" pooling_param { pool: MAX kernel_size: 3 stride: 2 } }\n'
    model_path, _ = write_caffe(tmp_path, "net", text, {})
    got = run(import_caffe(model_path), {"x": x})
    pooled, mask = caffe_max_pool_with_mask(x, 3, 2, 0)
    assert got["m"].dtype == np.float32
    np.testing.assert_array_equal(got["m"], mask)
    np.testing.assert_array_equal(got["p"], pooled)


def test_ties_take_the_first_maximum(tmp_path: Path) -> None:
    # after a ReLU most windows are all zeros: Caffe's mask points at each window's first
    x = np.maximum(x_of(1, 1, 6, 6, seed=7), 0)
    x[0, 0, 2:4, 2:4] = 0.0
    text = 'input: "x"\ninput_shape { dim: 1 dim: 1 dim: 6 dim: 6 }\nlayer { name: "pool" type: "Pooling" bottom: "x" top: "p" top: "m" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }\n'
    model_path, _ = write_caffe(tmp_path, "net", text, {})
    np.testing.assert_array_equal(run(import_caffe(model_path), {"x": x})["m"], caffe_max_pool_with_mask(x, 2, 2, 0)[1])


def test_mask_of_another_shape_is_refused(tmp_path: Path) -> None:
    text = (
        'input: "x"\ninput_shape { dim: 1 dim: 2 dim: 6 dim: 6 }\ninput: "m"\ninput_shape { dim: 1 dim: 2 dim: 2 dim: 2 }\n'
        'layer { name: "pool" type: "Pooling" bottom: "x" top: "p" pooling_param { pool: MAX kernel_size: 2 stride: 2 } }\n'
        'layer { name: "up" type: "Upsample" bottom: "p" bottom: "m" top: "y" upsample_param { scale: 2 } }\n'
    )
    model_path, _ = write_caffe(tmp_path, "net", text, {})
    with pytest.raises(IrforgeError, match="by a mask of the same shape") as info:
        import_caffe(model_path)
    assert info.value.code == "E206"


def test_output_smaller_than_the_pooled_plane_is_refused(tmp_path: Path) -> None:
    model_path, _ = write_caffe(tmp_path, "net", unpool_net((1, 2, 8, 8), 2, 2, 0, "scale: 2 upsample_h: 4 upsample_w: 8"), CONV)
    with pytest.raises(IrforgeError, match="indexes a plane of 64 positions") as info:
        import_caffe(model_path)
    assert info.value.code == "E206"


def test_ave_pooling_with_a_mask_top_is_refused(tmp_path: Path) -> None:
    text = 'input: "x"\ninput_shape { dim: 1 dim: 1 dim: 4 dim: 4 }\nlayer { name: "pool" type: "Pooling" bottom: "x" top: "p" top: "m" pooling_param { pool: AVE kernel_size: 2 stride: 2 } }\n'
    model_path, _ = write_caffe(tmp_path, "net", text, {})
    with pytest.raises(IrforgeError, match="only MAX pooling has a second"):
        import_caffe(model_path)
