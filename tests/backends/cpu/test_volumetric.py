"""Convolution, Deconvolution and Pooling with 3+ spatial axes on the CPU (ops/volumetric.py)
vs the reference interpreter; the ONNX node cases (3-D pooling, ConvTranspose3d) check
against onnxruntime's expected outputs in test_onnx_node_cases.py."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.builder import ModelBuilder
from irforge.backends.reference import run
from irforge.dialects.nn import Convolution, Deconvolution, Eltwise, Pooling, ReLU
from tests.backends.cpu.conftest import check_op, run_cpu
from tests.helpers import rand

CONV3D_CASES = [
    # (N, C, D, H, W), (O, C/g, kd, kh, kw), props
    ((1, 3, 4, 9, 10), (5, 3, 3, 3, 3), dict(pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),  # r3d's 3x3x3
    ((2, 4, 5, 8, 7), (6, 4, 3, 7, 7), dict(strides=[1, 2, 2], pads_begin=[1, 3, 3], pads_end=[1, 3, 3])),  # stem
    ((1, 4, 6, 6, 6), (8, 4, 1, 1, 1), dict(strides=[2, 2, 2])),  # downsample shortcut (im2col 1x1 stride 2)
    ((1, 6, 5, 6, 7), (4, 6, 1, 1, 1), {}),  # pointwise: read in place
    ((2, 6, 7, 4, 5), (4, 6, 1, 1, 1), dict(strides=[2, 1, 1])),  # pointwise, strided depth, in place
    ((1, 6, 4, 3, 5), (4, 6, 1, 1, 1), dict(pads_begin=[0, 0, 0], pads_end=[2, 0, 0])),  # end pad: copy
    ((1, 5, 4, 8, 8), (6, 5, 1, 3, 3), dict(pads_begin=[0, 1, 1], pads_end=[0, 1, 1])),  # (2+1)D spatial half
    ((1, 6, 6, 5, 5), (4, 6, 3, 1, 1), dict(strides=[2, 1, 1], pads_begin=[1, 0, 0], pads_end=[1, 0, 0])),  # temporal half
    ((1, 4, 7, 6, 9), (4, 2, 3, 2, 3), dict(group=2, dilations=[2, 1, 2], pads_begin=[2, 0, 1], pads_end=[1, 1, 2])),
    ((1, 6, 5, 7, 7), (6, 1, 3, 3, 3), dict(group=6, strides=[1, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),  # depthwise
    ((2, 5, 6, 6, 7), (5, 1, 3, 3, 3), dict(group=5, strides=[2, 1, 1], dilations=[1, 2, 1], pads_begin=[1, 2, 0], pads_end=[1, 1, 2])),
    ((1, 4, 3, 8, 9), (4, 1, 1, 3, 3), dict(group=4, pads_begin=[0, 1, 1], pads_end=[0, 1, 1])),  # (1,k,k) depthwise
    ((1, 4, 4, 1, 1), (4, 1, 3, 1, 1), dict(group=4, pads_begin=[1, 0, 0], pads_end=[1, 0, 0])),  # one output plane per slice
    ((1, 3, 1, 5, 6), (3, 1, 1, 3, 3), dict(group=3, pads_begin=[0, 1, 1], pads_end=[0, 1, 1])),  # one output slice: written in place
    ((1, 3, 5, 6, 6), (4, 3, 2, 3, 2), dict(strides=[3, 1, 2], pads_begin=[0, 2, 0], pads_end=[1, 0, 1])),  # asymmetric
    ((2, 6, 4, 5, 6), (8, 3, 2, 3, 3), dict(group=2, strides=[2, 1, 2], pads_begin=[1, 1, 1], pads_end=[0, 1, 1])),  # 3 batch levels
    ((1, 2, 3, 4, 5, 6), (3, 2, 2, 2, 3, 3), dict(pads_begin=[1, 0, 1, 1], pads_end=[0, 1, 1, 1])),  # 4 spatial axes
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("x_shape,w_shape,props", CONV3D_CASES)
def test_convolution_3d(x_shape, w_shape, props, bias, cache_dir) -> None:  # type: ignore[no-untyped-def]
    consts = [rand(*w_shape, seed=1)] + ([rand(w_shape[0], seed=2)] if bias else [])
    check_op(Convolution, [rand(*x_shape)], consts, cache_dir, **props)


def test_convolution_3d_runtime_weights(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """Weights fed at run time are read in place as the GEMM's A (not packed)."""
    check_op(Convolution, [rand(1, 4, 4, 6, 6), rand(6, 2, 3, 3, 3, seed=3)], [], cache_dir,
             group=2, pads_begin=[1, 1, 1], pads_end=[1, 1, 1])


def test_depthwise_3d_then_relu(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """The depthwise path sums its taps before a following ReLU (not fused into the taps)."""
    b = ModelBuilder()
    x = b.input("x", (1, 6, 5, 6, 6), np.float32)
    conv = b.add(Convolution, [x, b.constant(rand(6, 1, 3, 3, 3, seed=4), "w"), b.constant(rand(6, seed=5), "b")],
                 group=6, pads_begin=[1, 1, 1], pads_end=[1, 1, 1])
    b.output(b.add(ReLU, [conv.results[0]]).results[0], "y")
    model = b.finish()
    feeds = {"x": rand(1, 6, 5, 6, 6, seed=6)}
    np.testing.assert_allclose(run_cpu(model, feeds, cache_dir)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)


def test_convolution_3d_fused_add_relu(cache_dir) -> None:  # type: ignore[no-untyped-def]
    """A residual Add and a ReLU after a 3-D convolution stay in the GEMM's epilogue."""
    b = ModelBuilder()
    x = b.input("x", (2, 4, 4, 6, 5), np.float32)
    r = b.input("r", (2, 5, 4, 6, 5), np.float32)
    conv = b.add(Convolution, [x, b.constant(rand(5, 4, 3, 3, 3, seed=4), "w"), b.constant(rand(5, seed=5), "b")],
                 pads_begin=[1, 1, 1], pads_end=[1, 1, 1])
    add = b.add(Eltwise, [conv.results[0], r], operation="sum")
    b.output(b.add(ReLU, [add.results[0]]).results[0], "y")
    model = b.finish()
    feeds = {"x": rand(2, 4, 4, 6, 5, seed=6), "r": rand(2, 5, 4, 6, 5, seed=7)}
    np.testing.assert_allclose(run_cpu(model, feeds, cache_dir)["y"], run(model, feeds)["y"], rtol=1e-4, atol=1e-5)


DECONV3D_CASES = [
    # (N, C, D, H, W), (C, O/g, kd, kh, kw), props
    ((1, 4, 3, 4, 5), (4, 3, 2, 2, 2), dict(strides=[2, 2, 2])),  # 3-D UNet's up-convolution
    ((2, 4, 3, 3, 4), (4, 2, 3, 3, 3), dict(strides=[2, 1, 2], pads_begin=[1, 1, 0], pads_end=[1, 0, 1], output_padding=[1, 0, 0])),
    ((1, 6, 2, 3, 3), (6, 1, 3, 2, 3), dict(group=3, dilations=[2, 1, 2], strides=[1, 3, 1])),
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("x_shape,w_shape,props", DECONV3D_CASES)
def test_deconvolution_3d(x_shape, w_shape, props, bias, cache_dir) -> None:  # type: ignore[no-untyped-def]
    o = w_shape[1] * props.get("group", 1)
    consts = [rand(*w_shape, seed=1)] + ([rand(o, seed=2)] if bias else [])
    check_op(Deconvolution, [rand(*x_shape)], consts, cache_dir, **props)


POOL3D_CASES = [
    ((1, 3, 5, 7, 8), dict(kernel=[2, 3, 3], strides=[2, 2, 2])),
    ((2, 2, 6, 9, 9), dict(kernel=[3, 3, 3], strides=[2, 2, 2], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ((1, 2, 7, 8, 6), dict(kernel=[3, 2, 3], strides=[2, 2, 2], pads_begin=[1, 0, 1], pads_end=[1, 0, 1], rounding_type="ceil")),
    ((1, 2, 9, 7, 7), dict(kernel=[2, 2, 3], strides=[1, 1, 1], dilations=[3, 2, 1], pads_begin=[1, 1, 0], pads_end=[0, 1, 2])),
    ((1, 3, 5, 5, 5, 4), dict(kernel=[2, 2, 2, 2], strides=[1, 2, 1, 2])),  # 4 spatial axes
]


@pytest.mark.parametrize("method,exclude_pad", [("max", True), ("avg", True), ("avg", False)])
@pytest.mark.parametrize("x_shape,props", POOL3D_CASES)
def test_pooling_3d(x_shape, props, method, exclude_pad, cache_dir) -> None:  # type: ignore[no-untyped-def]
    check_op(Pooling, [rand(*x_shape)], [], cache_dir, method=method, exclude_pad=exclude_pad, **props)


@pytest.mark.parametrize("x_shape,w_shape,props", [
    ((2, 3, 5, 6, 7), (4, 3, 3, 3, 3), dict(strides=[2, 1, 1], pads_begin=[1, 1, 1], pads_end=[1, 1, 1])),
    ((2, 4, 5, 5, 6), (6, 2, 2, 1, 1), dict(group=2, pads_begin=[1, 0, 0], pads_end=[0, 0, 0])),
])
def test_convolution_3d_in_chunks(x_shape, w_shape, props, cache_dir, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Scratch bounded: one output depth slice per unfold / im2col / GEMM round (c_offset)."""
    from irforge.backends.cpu.ops import volumetric

    monkeypatch.setattr(volumetric, "SCRATCH_BYTES", 1)
    check_op(Convolution, [rand(*x_shape)], [rand(*w_shape, seed=1), rand(w_shape[0], seed=2)], cache_dir, **props)
