"""nn.region_yolo and nn.reorg_yolo: shape inference, verifier and numerics against Darknet's
region and reorg layers, implemented here independently with plain loops over flat arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.builder import ModelBuilder
from irforge.dialects.nn import RegionYolo, ReorgYolo
from tests.helpers import rand, run_op


def logistic(v: float) -> float:
    return 1.0 / (1.0 + math.exp(-v))


def darknet_region(x: np.ndarray, coords: int, classes: int, regions: int, softmax: bool) -> np.ndarray:
    """Darknet's region (softmax) / yolo (logistic) activations, one value at a time."""
    n, c, h, w = x.shape
    flat = x.reshape(-1).astype(np.float64)
    out = flat.copy()
    area = h * w
    for b in range(n):
        for r in range(regions):
            base = b * c * area + r * (coords + 1 + classes) * area
            for p in range(area):
                for k in (0, 1, coords):
                    out[base + k * area + p] = logistic(flat[base + k * area + p])
                cls = [flat[base + (coords + 1 + k) * area + p] for k in range(classes)]
                if softmax:
                    top = max(cls)
                    total = sum(math.exp(v - top) for v in cls)
                    probs = [math.exp(v - top) / total for v in cls]
                else:
                    probs = [logistic(v) for v in cls]
                for k, v in enumerate(probs):
                    out[base + (coords + 1 + k) * area + p] = v
    return out.reshape(x.shape)


def darknet_reorg(x: np.ndarray, stride: int) -> np.ndarray:
    """Darknet's reorg_cpu(x, w, h, c, batch, stride, forward=0, out), as written there."""
    batch, c, h, w = x.shape
    src = x.reshape(-1)
    out = np.empty_like(src)
    out_c = c // (stride * stride)
    for b in range(batch):
        for k in range(c):
            for j in range(h):
                for i in range(w):
                    in_index = i + w * (j + h * (k + c * b))
                    c2, offset = k % out_c, k // out_c
                    w2, h2 = i * stride + offset % stride, j * stride + offset // stride
                    out_index = w2 + w * stride * (h2 + h * stride * (c2 + out_c * b))
                    out[in_index] = src[out_index]
    return out.reshape(batch, c * stride * stride, h // stride, w // stride)


# -- RegionYolo ------------------------------------------------------------------------------
def test_region_yolo_softmax_matches_darknet() -> None:
    x = rand(2, 2 * (4 + 1 + 5), 3, 4, seed=1, low=-4.0, high=4.0)
    (got,) = run_op(RegionYolo, [x], coords=4, classes=5, num=2)
    want = darknet_region(x, 4, 5, 2, softmax=True).reshape(2, -1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_region_yolo_mask_matches_darknet_yolo_layer() -> None:
    x = rand(1, 3 * (4 + 1 + 2), 4, 5, seed=2, low=-4.0, high=4.0)
    (got,) = run_op(RegionYolo, [x], coords=4, classes=2, num=6, mask=[3, 4, 5], do_softmax=False, anchors=[10.0, 14.0, 23.0, 27.0, 37.0, 58.0])
    np.testing.assert_allclose(got, darknet_region(x, 4, 2, 3, softmax=False), rtol=1e-6, atol=1e-7)
    # w and h pass unchanged
    np.testing.assert_array_equal(got[:, 2:4], x[:, 2:4])


def test_region_yolo_more_coords() -> None:
    x = rand(1, 1 * (6 + 1 + 3), 2, 2, seed=3, low=-2.0, high=2.0)
    (got,) = run_op(RegionYolo, [x], coords=6, classes=3, num=1, axis=0, end_axis=1)
    np.testing.assert_allclose(got, darknet_region(x, 6, 3, 1, softmax=True).reshape(10, 2, 2), rtol=1e-6)


def build(cls, shape, **props):  # type: ignore[no-untyped-def]
    b = ModelBuilder()
    return b.add(cls, [b.input("x", shape)], **props)


@pytest.mark.parametrize(
    ("props", "shape"),
    [
        (dict(coords=4, classes=20, num=5), (1, 3125)),  # YOLOv2 VOC: [N, C * H * W]
        (dict(coords=4, classes=20, num=5, axis=2), (1, 125, 25)),
        (dict(coords=4, classes=20, num=5, axis=0, end_axis=-2), (625, 5)),
        (dict(coords=4, classes=80, num=9, mask=[6, 7, 8], do_softmax=False), (1, 255, 13, 13)),
    ],
)
def test_region_yolo_shapes(props: dict, shape: tuple) -> None:
    channels = 125 if props.get("do_softmax", True) else 255
    size = 5 if channels == 125 else 13
    assert build(RegionYolo, (1, channels, size, size), **props).output.type.get_shape() == shape


@pytest.mark.parametrize(
    ("shape", "props", "message"),
    [
        ((1, 125, 5, 5), dict(coords=4, classes=20, num=4), r"input must have num \* \(coords \+ 1 \+ classes\) = 100 channels, got 125"),
        ((1, 255, 13, 13), dict(coords=4, classes=80, num=9, do_softmax=False), "mask must not be empty without do_softmax"),
        ((1, 255, 13, 13), dict(coords=4, classes=80, num=9, mask=[6, 7, 9], do_softmax=False), r"mask values must be in \[0, num = 9\)"),
        ((1, 125, 5, 5), dict(coords=1, classes=20, num=5), "coords must be >= 2, got 1"),
        ((1, 125, 5, 5), dict(coords=4, classes=20, num=5, axis=3, end_axis=1), "end_axis 1 comes before axis 3"),
        ((1, 125, 25), dict(coords=4, classes=20, num=5), "input must have rank 4"),
    ],
)
def test_region_yolo_verifier(shape, props, message) -> None:
    with pytest.raises(VerifyException, match=message):
        build(RegionYolo, shape, **props)


# -- ReorgYolo -------------------------------------------------------------------------------
@pytest.mark.parametrize(("shape", "stride"), [((1, 4, 4, 6), 2), ((2, 18, 6, 3), 3), ((1, 64, 26, 26), 2), ((1, 2, 3, 3), 1)])
def test_reorg_yolo_matches_darknet(shape: tuple, stride: int) -> None:
    x = rand(*shape, seed=4)
    (got,) = run_op(ReorgYolo, [x], stride=stride)
    np.testing.assert_array_equal(got, darknet_reorg(x, stride))


def test_reorg_yolo_shapes() -> None:
    assert build(ReorgYolo, (1, 64, 26, 26), stride=2).output.type.get_shape() == (1, 256, 13, 13)


@pytest.mark.parametrize(
    ("shape", "stride", "message"),
    [
        ((1, 6, 4, 4), 2, r"input channels \(6\) must be a multiple of stride\^2 = 4"),
        ((1, 8, 5, 4), 2, r"input height \(5\) must be a multiple of stride 2"),
        ((1, 8, 4, 4), 0, "stride must be >= 1, got 0"),
        ((8, 4, 4), 2, "input must have rank 4"),
    ],
)
def test_reorg_yolo_verifier(shape, stride, message) -> None:
    with pytest.raises(VerifyException, match=message):
        build(ReorgYolo, shape, stride=stride)
