"""Every `nn` op alone in a model, written as IR XML, read, shaped and run by OpenVINO on CPU:
its outputs match the reference interpreter, its ports the shapes OpenVINO infers."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import f16, f32, i32, i64

from irforge.dialects import nn
from irforge.dialects.nn.activation import ACTIVATION_KINDS
from irforge.dialects.nn.elementwise import ARITHMETIC, COMPARISON, LOGICAL
from irforge.dialects.nn.reduce import REDUCE_OPERATIONS
from tests.backends.ir_xml_support import assert_op_runs_in_openvino_like_the_reference
from tests.helpers import rand

X4 = rand(2, 3, 5, 6, seed=1, low=-2.0, high=2.0)
POSITIVE = rand(2, 3, 4, 5, seed=2, low=0.1, high=3.0)
BOOLS = rand(2, 3, 4, seed=3) > 0


def case(cls, inputs, constants=(), num_results=1, id=None, **props):  # type: ignore[no-untyped-def]
    return pytest.param(cls, inputs, constants, num_results, props, id=id or cls.__name__)


def activation_cases():  # type: ignore[no-untyped-def]
    params = {"elu": {"alpha": 0.7}, "selu": {"alpha": 1.67, "beta": 1.05}, "swish": {"alpha": 1.3}, "hsigmoid": {"alpha": 0.2, "beta": 0.5}}
    for kind in sorted(ACTIVATION_KINDS):
        x = BOOLS if kind == "not" else POSITIVE if kind in ("log", "sqrt") else X4 * 2.5
        if kind in ("asin", "acos", "atanh"):
            x = X4 * 0.45  # inside (-1, 1)
        if kind == "acosh":
            x = np.abs(X4) + 1
        if kind == "round":
            x = np.round(X4 * 4) / 2  # halves, where the rounding rule shows
        yield case(nn.Activation, [x], kind=kind, id=f"activation-{kind}", **params.get(kind, {}))


def eltwise_cases():  # type: ignore[no-untyped-def]
    a, b = X4 * 2, rand(3, 1, 6, seed=4, low=0.5, high=2.0)
    for operation in sorted(ARITHMETIC | COMPARISON):
        lhs = np.abs(a) + 0.1 if operation == "pow" else a
        if operation in COMPARISON:
            lhs, rhs = np.round(lhs), np.round(b)
        else:
            rhs = b
        yield case(nn.Eltwise, [lhs, rhs], operation=operation, id=f"eltwise-{operation}")
    for operation in sorted(LOGICAL):
        yield case(nn.Eltwise, [BOOLS, BOOLS[:1]], operation=operation, id=f"eltwise-{operation}")
    ints_a, ints_b = np.array([7, -7, 9, -9, 5], np.int32), np.array([2, 2, -4, -4, 5], np.int32)
    for operation in ("div", "mod", "floor_mod"):
        yield case(nn.Eltwise, [ints_a, ints_b], operation=operation, id=f"eltwise-{operation}-i32")


W_CONV = rand(4, 3, 3, 3, seed=5)
W_DECONV = rand(3, 2, 3, 3, seed=7)
BIAS4 = rand(4, seed=8)


def window_cases():  # type: ignore[no-untyped-def]
    yield case(nn.Convolution, [X4], [W_CONV], pads_begin=[1, 1], pads_end=[1, 1], id="conv")
    yield case(nn.Convolution, [X4], [W_CONV, BIAS4], strides=[2, 2], dilations=[1, 2], id="conv-bias-strided-dilated")
    yield case(nn.Convolution, [X4], [rand(3, 1, 3, 3, seed=9)], group=3, auto_pad="same_upper", id="conv-depthwise-same")
    yield case(nn.Convolution, [rand(1, 4, 7, 7, seed=10)], [rand(6, 2, 2, 2, seed=11), rand(6, seed=12)], group=2, auto_pad="same_lower", strides=[2, 2], id="conv-group-bias")
    yield case(nn.Convolution, [rand(2, 3, 9, seed=13)], [rand(4, 3, 3, seed=14)], auto_pad="valid", id="conv1d")
    yield case(nn.Convolution, [rand(1, 2, 4, 5, 6, seed=15)], [rand(3, 2, 2, 2, 2, seed=16)], pads_begin=[1, 0, 1], pads_end=[0, 1, 1], id="conv3d")
    yield case(nn.Deconvolution, [X4], [W_DECONV], strides=[2, 2], pads_begin=[1, 1], pads_end=[0, 1], output_padding=[1, 0], id="deconv")
    yield case(nn.Deconvolution, [X4], [rand(3, 2, 2, 2, seed=17), rand(6, seed=18)], group=3, strides=[2, 1], id="deconv-group-bias")
    yield case(nn.Deconvolution, [X4], [rand(3, 4, 1, 1, seed=19), BIAS4], strides=[2, 2], auto_pad="same_upper", id="deconv-same-short")
    yield case(nn.Deconvolution, [X4], [W_DECONV], strides=[2, 2], auto_pad="same_lower", id="deconv-same-lower")
    for method in ("max", "avg"):
        yield case(nn.Pooling, [X4], method=method, kernel=[2, 3], strides=[2, 2], id=f"pool-{method}")
        yield case(nn.Pooling, [X4], method=method, kernel=[3, 3], strides=[2, 2], pads_begin=[1, 1], pads_end=[1, 1], rounding_type="ceil", exclude_pad=False, id=f"pool-{method}-ceil-pads")
        yield case(nn.Pooling, [rand(1, 2, 7, 7, seed=20)], method=method, kernel=[2, 2], strides=[3, 3], pads_begin=[1, 1], pads_end=[1, 1], rounding_type="ceil", id=f"pool-{method}-ceil-dropped")
        yield case(nn.Pooling, [X4], method=method, kernel=[3, 3], strides=[2, 2], auto_pad="same_upper", id=f"pool-{method}-same")
        yield case(nn.Pooling, [X4], method=method, global_pool=True, id=f"pool-{method}-global")
    yield case(nn.Pooling, [X4], method="max", kernel=[2, 2], dilations=[2, 2], id="pool-max-dilated")


def linear_cases():  # type: ignore[no-untyped-def]
    x3 = rand(2, 4, 6, seed=21)
    yield case(nn.FullyConnected, [x3], [rand(5, 6, seed=22), rand(5, seed=23)], id="fc-bias")
    yield case(nn.FullyConnected, [rand(3, 6, seed=24)], [rand(5, 6, seed=22)], id="fc")
    yield case(nn.MatMul, [x3, rand(6, 3, seed=25)], id="matmul")
    yield case(nn.MatMul, [rand(4, 2, seed=26), rand(2, 5, 4, seed=27)], transpose_a=True, transpose_b=True, id="matmul-transposed-batch")
    yield case(nn.MatMul, [rand(4, seed=28), x3], id="matmul-vector")
    yield case(nn.MatMul, [x3, rand(6, seed=28)], id="matmul-matrix-vector")
    yield case(nn.ScaleShift, [X4], [rand(3, seed=29), rand(3, seed=30)], id="scale_shift")
    yield case(nn.ScaleShift, [X4], [rand(6, seed=29), rand(6, seed=30)], axis=-1, id="scale_shift-last-axis")
    stats = [rand(3, seed=31, low=0.5, high=1.5), rand(3, seed=32), rand(3, seed=33), rand(3, seed=34, low=0.5, high=1.5)]
    yield case(nn.BatchNormalization, [X4], stats, epsilon=1e-3, id="batch_norm")
    yield case(nn.Power, [POSITIVE], power=1.5, scale=2.0, shift=-0.5, id="power")
    yield case(nn.Power, [X4], scale=3.0, id="power-scale-only")
    yield case(nn.SoftMax, [X4], axis=-1, id="softmax")
    yield case(nn.SoftMax, [X4], axis=1, log=True, id="softmax-log")
    yield case(nn.Norm, [X4], size=3, alpha=1e-2, beta=0.75, bias=2.0, id="lrn-across")
    yield case(nn.Norm, [X4], size=3, alpha=1e-2, region="same", id="lrn-same")
    yield case(nn.MVN, [X4], axes=[2, 3], eps=1e-5, id="mvn")
    yield case(nn.MVN, [X4], axes=[1, 2, 3], eps=1e-3, eps_mode="outside_sqrt", id="mvn-outside")
    yield case(nn.MVN, [X4], axes=[-1], normalize_variance=False, id="mvn-mean-only")
    yield case(nn.Normalize, [X4], [rand(3, seed=35)], eps=1e-6, id="normalize")
    yield case(nn.Normalize, [X4], [np.array([2.0], np.float32)], across_spatial=True, channel_shared=True, id="normalize-across-shared")
    yield case(nn.GRN, [X4], bias=0.5, id="grn")


def reduce_cases():  # type: ignore[no-untyped-def]
    for operation in sorted(REDUCE_OPERATIONS):
        x = POSITIVE if operation in ("log_sum", "prod") else X4
        yield case(nn.Reduce, [x], operation=operation, axes=[1, -1], id=f"reduce-{operation}")
    yield case(nn.Reduce, [X4], operation="mean", keep_dims=False, id="reduce-all-drop")
    ties = np.round(X4)
    yield case(nn.ArgMax, [ties], axis=1, id="argmax")
    yield case(nn.ArgMax, [ties], axis=-1, keep_dims=False, mode="min", id="argmin-drop")
    yield case(nn.ArgMax, [ties], axis=2, select_last_index=True, id="argmax-last")
    yield case(nn.ArgMax, [ties], axis=3, select_last_index=True, keep_dims=False, id="argmax-last-drop")


def resample_cases():  # type: ignore[no-untyped-def]
    yield case(nn.Resample, [X4], scales=[1.0, 1.0, 2.0, 1.5], id="resample-nearest")
    yield case(nn.Resample, [X4], sizes=[2, 3, 7, 4], mode="linear", id="resample-linear-sizes")
    yield case(nn.Resample, [X4], scales=[1.0, 1.0, 2.0, 2.0], mode="linear", coordinate_transformation_mode="align_corners", id="resample-linear-align")
    yield case(nn.ResampleTo, [rand(1, 2, 5, 7, seed=71), np.array([9, 4], np.int64)], axes=[2, 3], mode="linear", id="resample_to")
    yield case(nn.ResampleTo, [rand(1, 2, 5, 7, seed=72), np.array([3, 11], np.int64)], axes=[2, 3], mode="nearest",
               coordinate_transformation_mode="asymmetric", nearest_mode="floor", id="resample_to-nearest")
    yield case(nn.ResampleBy, [rand(1, 2, 5, 7, seed=73), np.array([1.5, 0.6], np.float32)], axes=[2, 3], mode="linear", id="resample_by")
    yield case(nn.Resample, [X4], scales=[1.0, 1.0, 1.5, 0.5], mode="cubic", cubic_coeff_a=-0.5, coordinate_transformation_mode="asymmetric", id="resample-cubic")
    yield case(nn.Resample, [X4], sizes=[2, 3, 9, 9], nearest_mode="floor", coordinate_transformation_mode="tf_half_pixel_for_nn", id="resample-nearest-floor")
    grid = rand(2, 4, 3, 2, seed=5, low=-1.4, high=1.4)  # reaches outside [-1, 1]
    yield case(nn.GridSample, [X4, grid], id="grid_sample-bilinear")
    yield case(nn.GridSample, [X4, grid], mode="bicubic", padding_mode="reflection", align_corners=True, id="grid_sample-bicubic-reflection")
    yield case(nn.GridSample, [X4, grid], mode="nearest", padding_mode="border", id="grid_sample-nearest-border")
    offsets = rand(2, 2 * 3 * 3, 3, 6, seed=91, low=-2.5, high=2.5)  # 3x3 taps, stride (2, 1), pads 1: 3 x 6 outputs
    yield case(nn.DeformableConvolution, [X4, offsets, W_CONV], strides=[2, 1], pads_begin=[1, 1], pads_end=[1, 1], id="deformable_convolution")
    yield case(nn.DeformableConvolution, [X4, offsets, W_CONV, rand(2, 9, 3, 6, seed=92)], strides=[2, 1], pads_begin=[1, 1], pads_end=[1, 1],
               bilinear_interpolation_pad=False, id="deformable_convolution-mask-unpadded")


def shape_cases():  # type: ignore[no-untyped-def]
    yield case(nn.Concat, [X4, X4[:, :2]], axis=1, id="concat")
    yield case(nn.Split, [X4], num_results=3, axis=-1, split_lengths=[1, 3, 2], id="split")
    yield case(nn.Reshape, [X4], shape=[0, -1, 2], id="reshape")
    yield case(nn.Reshape, [X4], shape=[6, 30], special_zero=False, id="reshape-plain")
    yield case(nn.Flatten, [X4], axis=2, id="flatten")
    yield case(nn.Flatten, [X4], axis=0, id="flatten-0")
    yield case(nn.Permute, [X4], order=[0, 2, 3, 1], id="permute")
    yield case(nn.Squeeze, [rand(2, 1, 3, 1, seed=36)], axes=[-1], id="squeeze")
    yield case(nn.Squeeze, [rand(2, 1, 3, 1, seed=36)], id="squeeze-all")
    yield case(nn.Unsqueeze, [X4], axes=[0, -1], id="unsqueeze")
    yield case(nn.Slice, [X4], begins=[1, -1, 0], ends=[3, 0, 100], axes=[1, 3, 2], steps=[1, -2, 2], id="slice")
    yield case(nn.Tile, [X4], repeats=[1, 2, 1, 3], id="tile")
    for mode in ("constant", "edge", "reflect", "symmetric"):
        yield case(nn.Pad, [X4], pads_begin=[0, 1, 2, 0], pads_end=[1, 0, 1, 2], mode=mode, value=1.5, id=f"pad-{mode}")
    indices = np.array([[2, -1], [0, 1]], np.int64)
    yield case(nn.Gather, [X4], [indices], axis=2, id="gather")
    yield case(nn.Gather, [X4], [np.array([[1, 0, 2], [2, 2, 0]], np.int32)], axis=1, batch_dims=1, id="gather-batch")


def misc_cases():  # type: ignore[no-untyped-def]
    yield case(nn.ReLU, [X4], id="relu")
    yield case(nn.ReLU, [X4], negative_slope=0.1, id="relu-leaky")
    yield case(nn.Clamp, [X4], min=-0.5, max=1.25, id="clamp")
    yield case(nn.PReLU, [X4], [rand(3, seed=37)], id="prelu-channels")
    yield case(nn.PReLU, [X4], [rand(5, 6, seed=38)], id="prelu-broadcast")
    for t in (i32, f16, i64):
        yield case(nn.Convert, [X4 * 3], destination_type=t, id=f"convert-{t}")
    yield case(nn.Convert, [np.arange(6, dtype=np.int64)], destination_type=f32, id="convert-i64-f32")
    yield case(nn.Identity, [X4], id="identity")
    yield case(nn.Select, [X4 > 0, rand(3, 5, 1, seed=39)], [np.array(-1.0, np.float32)], id="select")


def attention_cases():  # type: ignore[no-untyped-def]
    q, k, v = rand(2, 3, 5, 8, seed=40), rand(2, 3, 7, 8, seed=41), rand(1, 3, 7, 4, seed=42)
    mask = rand(5, 7, seed=43, low=-3.0, high=0.0)
    yield case(nn.ScaledDotProductAttention, [q, k, v], id="attention")
    yield case(nn.ScaledDotProductAttention, [q, k, v], scale=0.2, id="attention-scale")
    yield case(nn.ScaledDotProductAttention, [q, k, v, mask], scale=0.3, id="attention-mask-scale")
    yield case(nn.ScaledDotProductAttention, [q, k, v], [rand(2, 1, 5, 7, seed=44) > -0.5], id="attention-boolean-mask")
    yield case(nn.ScaledDotProductAttention, [q, k[:, :, :5], v[:, :, :5]], causal=True, id="attention-causal")
    yield case(nn.ScaledDotProductAttention, [q, k, v, mask], causal=True, id="attention-causal-cross")
    yield case(nn.ScaledDotProductAttention, [q, k, v, mask, np.array(0.4, np.float32)], id="attention-scale-input")


def recurrent_cases():  # type: ignore[no-untyped-def]
    x, lengths = rand(2, 5, 3, seed=50), np.array([5, 3], np.int32)
    h1, h2 = rand(2, 1, 4, seed=51), rand(2, 2, 4, seed=52)
    yield case(nn.LSTMSequence, [x, h2, rand(2, 2, 4, seed=53), lengths], [rand(2, 16, 3, seed=54), rand(2, 16, 4, seed=55), rand(2, 16, seed=56)], 3, hidden_size=4, direction="bidirectional", activations="sigmoid,tanh,tanh", clip=0.75, id="lstm_sequence")
    yield case(nn.GRUSequence, [x, h1, lengths], [rand(1, 12, 3, seed=57), rand(1, 12, 4, seed=58), rand(1, 16, seed=59)], 2, hidden_size=4, direction="reverse", activations="sigmoid,relu", linear_before_reset=True, id="gru_sequence")
    yield case(nn.RNNSequence, [x, h1, lengths], [rand(1, 4, 3, seed=60), rand(1, 4, 4, seed=61), rand(1, 4, seed=62)], 2, hidden_size=4, activations="relu", id="rnn_sequence")


def quantize_cases():  # type: ignore[no-untyped-def]
    x = rand(2, 3, 4, 5, seed=63, low=-2.0, high=2.0)
    low, high = np.array(-1.0, np.float32), np.array(1.5, np.float32)
    yield case(nn.FakeQuantize, [x], [low, high, low, high], levels=256, id="fake_quantize")
    per_channel = rand(1, 3, 1, 1, seed=64, low=-1.5, high=-0.5), rand(1, 3, 1, 1, seed=65, low=0.5, high=1.5)
    yield case(nn.FakeQuantize, [x], [*per_channel, np.array(0.0, np.float32), np.array(2.0, np.float32)], levels=16, id="fake_quantize-per-channel")


CASES = [
    *activation_cases(), *eltwise_cases(), *window_cases(), *linear_cases(), *reduce_cases(),
    *resample_cases(), *shape_cases(), *misc_cases(), *attention_cases(), *recurrent_cases(), *quantize_cases(),
]  # fmt: skip


@pytest.mark.parametrize("cls, inputs, constants, num_results, props", CASES)
def test_op_runs_in_openvino_like_the_reference(tmp_path, cls, inputs, constants, num_results, props):
    assert_op_runs_in_openvino_like_the_reference(tmp_path, cls, inputs, constants, num_results, props)


def test_every_nn_op_has_an_emitter():
    from irforge.backends.ir_xml import EMITTERS

    missing = sorted(op.name for op in nn.OPS if op is not nn.Constant and op not in EMITTERS)
    assert not missing, f"nn ops without an IR XML emitter: {missing}"


def test_every_op_of_the_core_families_is_run_here():
    """The families whose emitters live in emitters/{attention,conv,elementwise,linear,shape}.py."""
    from irforge.dialects.nn import activation, attention, conv, elementwise, linear, normalization, reduce, resample, shape

    families = (activation, attention, conv, elementwise, linear, normalization, reduce, resample, shape)
    core = {op for op in nn.OPS if any(op.__module__ == f.__name__ for f in families)}
    assert core - {p.values[0] for p in CASES} == set()
