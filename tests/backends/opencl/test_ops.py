"""Every op with an OpenCL kernel against the reference interpreter (rtol 1e-4, f32), over
grids of shapes and properties; each test compiles its grid as one model."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.opencl.codegen.pointwise import BINARY_FLOAT, COMPARE, UNARY
from irforge.dialects.nn import (
    GRN, MVN, Activation, ArgMax, BatchNormalization, Clamp, Concat, Convert, Convolution, Deconvolution, Eltwise,
    Flatten, FullyConnected, Gather, Identity, MatMul, Norm, Normalize, Pad, Permute, Pooling, Power, PReLU, Reduce,
    ReLU, Resample, Reshape, ScaleShift, Select, Slice, SoftMax, Split, Squeeze, Tile, Unsqueeze,
)
from irforge.weights.dtypes import to_xdsl
from tests.backends.opencl.support import case, check_cases
from tests.helpers import rand

CONV_GRID = [
    # (x shape, w shape, props)
    ((1, 3, 7, 7), (4, 3, 3, 3), {}),
    ((2, 6, 9, 11), (8, 3, 3, 3), {"group": 2, "strides": [2, 1], "pads_begin": [1, 0], "pads_end": [0, 2], "dilations": [1, 2]}),
    ((1, 5, 13, 10), (7, 5, 5, 3), {"strides": [3, 2], "pads_begin": [2, 1], "pads_end": [1, 0]}),
    ((2, 16, 6, 6), (33, 16, 1, 1), {}),
    ((1, 8, 7, 9), (12, 8, 1, 1), {"strides": [2, 2]}),
    ((1, 12, 5, 5), (12, 1, 3, 3), {"group": 12, "pads_begin": [1, 1], "pads_end": [1, 1]}),
    ((2, 7, 11, 9), (7, 1, 3, 5), {"group": 7, "strides": [2, 2], "pads_begin": [0, 2], "pads_end": [1, 1], "dilations": [2, 1]}),
    ((1, 4, 8, 8), (4, 1, 3, 3), {"group": 4, "auto_pad": "same_upper", "strides": [2, 2]}),
    ((1, 3, 17), (5, 3, 4), {"strides": [2], "pads_begin": [1], "pads_end": [2]}),
    ((1, 2, 4, 5, 6), (3, 2, 2, 3, 2), {"pads_begin": [1, 0, 1], "pads_end": [0, 1, 0]}),
    ((3, 70, 5, 5), (130, 70, 3, 3), {"pads_begin": [1, 1], "pads_end": [1, 1]}),
]


@pytest.mark.parametrize("bias", [False, True])
def test_convolution(bias: bool):
    cases = []
    for i, (x, w, props) in enumerate(CONV_GRID):
        consts = [rand(*w, seed=i + 1)] + ([rand(w[0], seed=i + 50)] if bias else [])
        cases.append(case(Convolution, [rand(*x, seed=i)], consts, **props))
    check_cases(cases)


def test_deconvolution():
    grid = [
        ((1, 4, 5, 5), (4, 3, 3, 3), {"strides": [2, 2], "pads_begin": [1, 1], "pads_end": [0, 1]}),
        ((2, 4, 3, 4), (4, 2, 2, 3), {"group": 2, "strides": [1, 2], "dilations": [2, 1], "output_padding": [0, 1]}),
        ((1, 3, 6), (3, 5, 3), {"strides": [3], "auto_pad": "same_upper"}),
    ]
    cases = [case(Deconvolution, [rand(*x, seed=i)], [rand(*w, seed=i + 9), rand(w[1] * p.get("group", 1), seed=i)], **p) for i, (x, w, p) in enumerate(grid)]
    check_cases(cases)


def test_pooling():
    x4, x3 = rand(2, 3, 9, 8), rand(1, 2, 11)
    cases = [
        case(Pooling, [x4], method="max", kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1]),
        case(Pooling, [x4], method="max", kernel=[2, 3], strides=[2, 2], rounding_type="ceil"),
        case(Pooling, [x4], method="avg", kernel=[3, 3], strides=[2, 2], pads_begin=[1, 0], pads_end=[1, 2]),
        case(Pooling, [x4], method="avg", kernel=[3, 2], strides=[2, 1], pads_begin=[1, 1], pads_end=[0, 1], exclude_pad=False),
        case(Pooling, [x4], method="avg", kernel=[3, 3], strides=[2, 2], rounding_type="ceil", exclude_pad=False),
        case(Pooling, [x4], method="max", kernel=[2, 2], dilations=[2, 2]),
        case(Pooling, [x4], method="avg", global_pool=True),
        case(Pooling, [x4], method="max", global_pool=True),
        case(Pooling, [x3], method="avg", kernel=[4], strides=[3], auto_pad="same_lower"),
    ]
    check_cases(cases)


def test_fully_connected_and_matmul():
    cases = [
        case(FullyConnected, [rand(1, 37)], [rand(10, 37, seed=1), rand(10, seed=2)]),
        case(FullyConnected, [rand(5, 64)], [rand(130, 64, seed=1)]),
        case(FullyConnected, [rand(2, 3, 19)], [rand(7, 19, seed=3), rand(7, seed=4)]),
        case(FullyConnected, [rand(3, 9), rand(4, 9, seed=5)]),
        case(MatMul, [rand(5, 7), rand(7, 3, seed=1)]),
        case(MatMul, [rand(2, 3, 6, 4), rand(4, 9, seed=1)], transpose_a=False),
        case(MatMul, [rand(4, 6), rand(2, 1, 9, 4, seed=1)], transpose_a=True, transpose_b=True),
        case(MatMul, [rand(3, 1, 5, 8), rand(1, 2, 8, 6, seed=1)]),
        case(MatMul, [rand(8), rand(2, 8, 3, seed=1)]),
        case(MatMul, [rand(2, 4, 8), rand(8, seed=1)]),
        case(MatMul, [rand(33, 65), rand(65, 70, seed=1)]),
    ]
    check_cases(cases)


def test_activations():
    x = rand(2, 3, 5, 7, low=-4, high=4)
    positive = rand(3, 11, low=0.1, high=5)
    cases = [case(Activation, [positive if k in ("log", "sqrt") else x], kind=k, alpha=0.7, beta=0.3) for k in UNARY]
    cases += [
        case(ReLU, [x]), case(ReLU, [x], negative_slope=0.2), case(Clamp, [x], min=-1.5, max=2.0),
        case(Clamp, [x], min=0.0, max=3.4028234663852886e38), case(PReLU, [x, rand(3, seed=1)]),
        case(PReLU, [rand(4, 6), rand(6, seed=1)]), case(Power, [positive], power=0.5, scale=2.0, shift=-1.0),
        case(Power, [x], power=2.0, scale=0.5, shift=1.0), case(Identity, [x]),
        case(Activation, [rand(3, 4) > 0], kind="not"),
    ]
    check_cases(cases)


def test_eltwise_broadcasts():
    a, b = rand(2, 3, 4, 5), rand(3, 1, 5, seed=1, low=0.5, high=2)
    cases = [case(Eltwise, [a, b], operation=op) for op in BINARY_FLOAT if op != "pow"]
    cases += [case(Eltwise, [rand(2, 6, low=0.1, high=3), rand(6, seed=2)], operation="pow")]
    cases += [case(Eltwise, [np.round(a), np.round(rand(1, 3, 4, 1, seed=3))], operation=op) for op in COMPARE]
    cases += [case(Eltwise, [a > 0, rand(4, 5, seed=4) > 0], operation=op) for op in ("and", "or", "xor")]
    cases += [case(Select, [rand(3, 1, 5, seed=5) > 0, a, rand(1, 4, 1, seed=6)])]
    check_cases(cases)


def test_linear_elementwise_and_convert():
    x = rand(2, 4, 3, 5)
    cases = [
        case(ScaleShift, [x, rand(4, seed=1), rand(4, seed=2)]),
        case(ScaleShift, [rand(3, 6), rand(6, seed=1), rand(6, seed=2)], axis=1),
        case(BatchNormalization, [x, rand(4, seed=1), rand(4, seed=2), rand(4, seed=3), rand(4, seed=4, low=0.1)], epsilon=1e-3),
    ]
    for target in (np.float16, np.int32, np.int64, np.bool_):
        cases.append(case(Convert, [x * 10], destination_type=to_xdsl(np.dtype(target))))
    cases.append(case(Convert, [(x * 10).astype(np.float16)], destination_type=to_xdsl(np.dtype(np.float32))))
    cases.append(case(Convert, [(x * 10).astype(np.int64)], destination_type=to_xdsl(np.dtype(np.float32))))
    check_cases(cases)


def test_reductions_and_normalisations():
    x = rand(2, 5, 4, 3)
    cases = [case(Reduce, [x], operation=op, axes=[1, 3]) for op in ("mean", "sum", "max", "min", "prod", "l1", "l2", "sum_square", "log_sum_exp")]
    cases += [
        case(Reduce, [rand(2, 5, 4, 3, low=0.1)], operation="log_sum", axes=[0, 2], keep_dims=False),
        case(Reduce, [x], operation="max", axes=[0, 1, 2, 3], keep_dims=False),
        case(ArgMax, [x], axis=1), case(ArgMax, [np.round(x)], axis=2, mode="min", select_last_index=True, keep_dims=False),
        case(SoftMax, [x], axis=1), case(SoftMax, [x * 30], axis=-1, log=True), case(SoftMax, [rand(3, 1000)], axis=1),
        case(MVN, [x], axes=[2, 3]), case(MVN, [x], axes=[1, 2, 3], eps_mode="outside_sqrt", eps=1e-3),
        case(MVN, [x], axes=[0, 2], normalize_variance=False),
        case(Normalize, [x]), case(Normalize, [x, rand(5, seed=1)], across_spatial=True),
        case(Normalize, [x, rand(1, seed=1)], channel_shared=True),
        case(GRN, [x], bias=0.5),
        case(Norm, [rand(2, 7, 4, 5)], size=5, alpha=1e-2, beta=0.75, bias=2.0),
        case(Norm, [rand(1, 3, 6, 5)], size=3, region="same", alpha=0.1),
    ]
    check_cases(cases)


def test_data_movement():
    x = rand(2, 3, 4, 5)
    cases = [
        case(Permute, [x], order=[0, 2, 3, 1]), case(Permute, [x.astype(np.int64)], order=[3, 1, 0, 2]),
        case(Slice, [x], begins=[1, 0], ends=[3, 5], axes=[1, 3], steps=[1, 2]),
        case(Slice, [x], begins=[-1], ends=[-100], axes=[2], steps=[-2]),
        case(Tile, [x[0]], repeats=[2, 1, 3]),
        case(Pad, [x], pads_begin=[0, 1, 2, 0], pads_end=[1, 0, 1, 3], value=-2.5),
        case(Pad, [x], pads_begin=[0, 0, 3, 1], pads_end=[0, 0, 2, 4], mode="reflect"),
        case(Pad, [x], pads_begin=[0, 0, 4, 1], pads_end=[0, 0, 2, 5], mode="symmetric"),
        case(Pad, [x], pads_begin=[0, 2, 1, 0], pads_end=[1, 0, 3, 2], mode="edge"),
        case(Concat, [x, rand(2, 1, 4, 5, seed=1), rand(2, 2, 4, 5, seed=2)], axis=1),
        case(Split, [x], results=3, axis=3, split_lengths=[1, 3, 1]),
        case(Gather, [x, np.array([[2, -1], [0, 1]], np.int64)], axis=2),
        case(Gather, [x, np.array([[1, 0, 2], [2, 2, 0]], np.int32)], axis=1, batch_dims=1),
        case(Reshape, [x], shape=[6, 20]), case(Flatten, [x], axis=2), case(Squeeze, [rand(3, 1, 4)], axes=[1]),
        case(Unsqueeze, [rand(3, 4)], axes=[0, 2]),
    ]
    check_cases(cases)


def test_resample():
    x = rand(1, 2, 5, 6)
    cases = [
        case(Resample, [x], mode="nearest", scales=[1.0, 1.0, 2.0, 1.5]),
        case(Resample, [x], mode="nearest", sizes=[1, 2, 3, 4], coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
        case(Resample, [x], mode="linear", scales=[1.0, 1.0, 1.6, 0.5]),
        case(Resample, [x], mode="linear", sizes=[1, 2, 9, 11], coordinate_transformation_mode="align_corners"),
        case(Resample, [x], mode="cubic", scales=[1.0, 1.0, 2.0, 2.0]),
    ]
    check_cases(cases)


def test_volumetric_windows():
    """3-D pooling (ceil mode, both divisors, dilations), a 3-D transposed convolution (the
    3-D UNet's up-convolution) and grouped / depthwise / (k,1,1) 3-D convolutions."""
    x = rand(1, 3, 7, 8, 6)
    cases = [
        case(Pooling, [x], method="max", kernel=[3, 2, 3], strides=[2, 2, 2], pads_begin=[1, 0, 1], pads_end=[1, 0, 1], rounding_type="ceil"),
        case(Pooling, [x], method="avg", kernel=[2, 3, 3], strides=[1, 2, 2], dilations=[2, 1, 1], pads_begin=[1, 1, 1], pads_end=[0, 1, 1]),
        case(Pooling, [x], method="avg", kernel=[3, 3, 2], strides=[2, 2, 1], pads_begin=[1, 1, 0], pads_end=[1, 1, 1], exclude_pad=False),
        case(Deconvolution, [rand(1, 4, 3, 4, 5, seed=2)], [rand(4, 3, 2, 2, 2, seed=3), rand(3, seed=4)], strides=[2, 2, 2]),
        case(Deconvolution, [rand(2, 4, 3, 3, 4, seed=5)], [rand(4, 2, 3, 3, 3, seed=6)], group=2, strides=[2, 1, 2],
             pads_begin=[1, 1, 0], pads_end=[1, 0, 1], output_padding=[1, 0, 0]),
        case(Convolution, [rand(1, 6, 5, 7, 7, seed=7)], [rand(6, 1, 3, 3, 3, seed=8)], group=6, strides=[1, 2, 2],
             pads_begin=[1, 1, 1], pads_end=[1, 1, 1]),
        case(Convolution, [rand(1, 6, 6, 5, 5, seed=9)], [rand(4, 6, 3, 1, 1, seed=10), rand(4, seed=11)], strides=[2, 1, 1],
             pads_begin=[1, 0, 0], pads_end=[1, 0, 0]),
    ]
    check_cases(cases)
