"""nn.pooling: shape inference, verifier and numerics against onnxruntime's MaxPool,
AveragePool, GlobalMaxPool and GlobalAveragePool."""

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Pooling
from irforge.dialects.nn.base import DYN
from tests.helpers import onnx_run, rand, run_op

CEIL = {"rounding_type": "ceil"}
CASES = [
    # (input shape, props shared by max and avg)
    ((1, 3, 8, 8), {"kernel": [2, 2], "strides": [2, 2]}),
    ((2, 2, 9, 7), {"kernel": [3, 3], "strides": [2, 2], "pads_begin": [1, 0], "pads_end": [0, 1]}),
    ((1, 2, 9, 10), {"kernel": [3, 2], "strides": [2, 3], "pads_begin": [1, 1], "pads_end": [1, 1]}),
    ((1, 2, 10, 9), {"kernel": [3, 3], "strides": [2, 2], **CEIL}),
    ((1, 2, 7, 8), {"kernel": [3, 2], "strides": [2, 3], "pads_begin": [1, 1], "pads_end": [1, 0], **CEIL}),
    ((1, 2, 5, 6), {"kernel": [2, 2], "strides": [2, 2], "pads_begin": [1, 1], "pads_end": [1, 1], **CEIL}),
    ((1, 3, 13, 12), {"kernel": [3, 4], "strides": [2, 3], "auto_pad": "same_upper"}),
    ((1, 3, 13, 12), {"kernel": [4, 3], "strides": [3, 2], "auto_pad": "same_lower"}),
    ((1, 3, 10, 11), {"kernel": [3, 3], "strides": [2, 2], "auto_pad": "valid"}),
    ((1, 2, 6, 7), {"kernel": [3, 3], "strides": [2, 2], "auto_pad": "valid", **CEIL}),
    ((3, 2, 17), {"kernel": [4], "strides": [3], "pads_begin": [2], "pads_end": [1]}),
    ((1, 2, 6, 5, 7), {"kernel": [2, 3, 2], "strides": [2, 1, 2], "pads_begin": [1, 0, 1], "pads_end": [0, 1, 1]}),
]

ONNX_AUTO_PAD = {"same_upper": "SAME_UPPER", "same_lower": "SAME_LOWER", "valid": "VALID"}


def onnx_attrs(props: dict) -> dict:
    n = len(props["kernel"])
    attrs = {"kernel_shape": props["kernel"], "strides": props.get("strides", [1] * n)}
    attrs["ceil_mode"] = int(props.get("rounding_type") == "ceil")
    if "dilations" in props:
        attrs["dilations"] = props["dilations"]
    if "auto_pad" in props:
        attrs["auto_pad"] = ONNX_AUTO_PAD[props["auto_pad"]]
    else:
        attrs["pads"] = props.get("pads_begin", [0] * n) + props.get("pads_end", [0] * n)
    return attrs


@pytest.mark.parametrize("x_shape, props", CASES)
def test_max_pooling_matches_onnxruntime(x_shape, props):
    x = rand(*x_shape, seed=1)
    (got,) = run_op(Pooling, [x], method="max", **props)
    (want,) = onnx_run("MaxPool", [x], **onnx_attrs(props))
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("x_shape, props", CASES)
@pytest.mark.parametrize("exclude_pad", [True, False])
def test_avg_pooling_matches_onnxruntime(x_shape, props, exclude_pad):
    x = rand(*x_shape, seed=1)
    (got,) = run_op(Pooling, [x], method="avg", exclude_pad=exclude_pad, **props)
    attrs = onnx_attrs(props) | {"count_include_pad": int(not exclude_pad)}
    (want,) = onnx_run("AveragePool", [x], **attrs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "x_shape, props",
    [
        ((1, 2, 11, 10), {"kernel": [3, 2], "dilations": [2, 3], "strides": [1, 2]}),
        ((2, 2, 12, 9), {"kernel": [3, 3], "dilations": [2, 2], "pads_begin": [2, 1], "pads_end": [1, 2]}),
        ((1, 1, 10), {"kernel": [2], "dilations": [3], "strides": [2], **CEIL}),
    ],
)
@pytest.mark.parametrize("method, onnx_op", [("max", "MaxPool"), ("avg", "AveragePool")])
def test_dilated_pooling_matches_onnxruntime(x_shape, props, method, onnx_op):
    x = rand(*x_shape, seed=2)
    (got,) = run_op(Pooling, [x], method=method, **props)
    (want,) = onnx_run(onnx_op, [x], opset=19, **onnx_attrs(props))  # AveragePool dilations: opset 19
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("method, onnx_op", [("max", "GlobalMaxPool"), ("avg", "GlobalAveragePool")])
@pytest.mark.parametrize("x_shape", [(2, 3, 7), (1, 4, 5, 6), (2, 2, 3, 4, 5)])
def test_global_pooling_matches_onnxruntime(method, onnx_op, x_shape):
    x = rand(*x_shape, seed=3)
    (got,) = run_op(Pooling, [x], method=method, global_pool=True)
    (want,) = onnx_run(onnx_op, [x])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_max_pooling_of_integers_pads_with_the_lowest_value():
    x = -np.arange(1, 10, dtype=np.int32).reshape(1, 1, 9)
    (got,) = run_op(Pooling, [x], method="max", kernel=[3], strides=[3], pads_begin=[1], pads_end=[1])
    np.testing.assert_array_equal(got, [[[-1, -3, -6]]])


def infer(x_shape, **props):
    b = ModelBuilder()
    return tuple(b.add(Pooling, [b.input("x", x_shape)], **props).output.type.get_shape())


def test_pooling_infers_dynamic_dims():
    assert infer((DYN, 3, 9, 9), method="max", kernel=[3, 3], strides=[2, 2]) == (DYN, 3, 4, 4)
    assert infer((DYN, 3, 9, 9), method="avg", kernel=[2, 2], strides=[2, 2], **CEIL) == (DYN, 3, 5, 5)
    same = {"auto_pad": "same_upper", "strides": [2, 2]}
    assert infer((1, DYN, DYN, 7), method="avg", kernel=[3, 3], **same) == (1, DYN, DYN, 4)
    assert infer((DYN, DYN, DYN, DYN), method="max", global_pool=True) == (DYN, DYN, 1, 1)


@pytest.mark.parametrize(
    "props",
    [
        {"method": "max", "kernel": [3, 2], "strides": [2, 3], "auto_pad": "same_lower"},
        {"method": "avg", "kernel": [3, 3], "strides": [2, 2], "rounding_type": "ceil", "exclude_pad": False},
    ],
)
def test_pooling_runs_with_dynamic_spatial_dims(props):
    # pads and output sizes come from the run-time sizes, not the `?` of the input type
    x = rand(2, 3, 11, 7, seed=5)
    b = ModelBuilder()
    b.output(b.add(Pooling, [b.input("x", (DYN, 3, DYN, DYN))], **props).output, "y")
    (want,) = run_op(Pooling, [x], **props)
    np.testing.assert_array_equal(run(b.finish(), {"x": x})["y"], want)


def test_ceil_rounding_drops_a_window_starting_in_the_end_padding():
    # 5 + 2 padding, kernel 2, stride 2: a 4th window would start at the end padding
    pads = {"pads_begin": [1], "pads_end": [1]}
    assert infer((1, 1, 5), method="max", kernel=[2], strides=[2], **pads, **CEIL) == (1, 1, 3)


@pytest.mark.parametrize(
    "x_shape, props, message",
    [
        ((1, 3, 8, 8), {"method": "max"}, "kernel is required unless global_pool is set"),
        ((1, 3, 8, 8), {"method": "max", "kernel": [2]}, "kernel needs 2 values"),
        ((1, 3, 8, 8), {"method": "max", "kernel": [2, 0]}, "kernel values must be >= 1"),
        ((1, 3, 8, 8), {"method": "max", "kernel": [2, 2], "strides": [0, 1]}, "strides values must be >= 1"),
        ((1, 3, 8, 8), {"method": "max", "kernel": [2, 2], "pads_end": [1]}, "pads_end needs 2 values"),
        ((1, 3, 8, 8), {"method": "min", "kernel": [2, 2]}, "method must be one of avg, max, got 'min'"),
        ((1, 3, 8, 8), {"method": "max", "kernel": [2, 2], "rounding_type": "round"}, "rounding_type must be"),
        ((1, 3, 8, 8), {"method": "max", "kernel": [2, 2], "pads_begin": [2, 0]}, "pads must be smaller than"),
        ((1, 3, 8, 8), {"method": "avg", "global_pool": True, "kernel": [2, 2]}, "global_pool takes no kernel"),
        ((1, 3, 8, 8), {"method": "avg", "global_pool": True, "auto_pad": "valid"}, "takes no auto_pad"),
        ((1, 3, 2, 8), {"method": "max", "kernel": [3, 3]}, "output spatial size .* is empty"),
        ((1, 8), {"method": "max", "global_pool": True}, "input must have rank >= 3"),
    ],
)
def test_pooling_rejects(x_shape, props, message):
    with pytest.raises(VerifyException, match=message):
        run_op(Pooling, [rand(*x_shape)], name="pool1", **props)
