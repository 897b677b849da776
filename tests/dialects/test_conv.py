"""nn.convolution: shape inference, verifier and numerics against onnxruntime's Conv."""

import numpy as np
import pytest

from irforge.dialects.nn import Convolution
from tests.helpers import onnx_run, rand, run_op

CASES = [
    # (input shape, weight shape, props)
    ((1, 3, 9, 9), (4, 3, 3, 3), {}),
    ((2, 4, 10, 7), (6, 2, 3, 2), {"group": 2, "strides": [2, 1], "pads_begin": [1, 0], "pads_end": [2, 1]}),
    ((1, 8, 11, 11), (8, 1, 3, 3), {"group": 8, "dilations": [2, 2], "pads_begin": [2, 2], "pads_end": [2, 2]}),
    ((1, 5, 13, 12), (7, 5, 5, 4), {"strides": [3, 2], "auto_pad": "same_upper"}),
    ((1, 5, 13, 12), (7, 5, 4, 4), {"strides": [2, 3], "auto_pad": "same_lower"}),
    ((1, 3, 10, 10), (2, 3, 3, 3), {"auto_pad": "valid", "strides": [2, 2]}),
    ((2, 3, 17), (4, 3, 3), {"strides": [2], "pads_begin": [1], "pads_end": [0]}),
    ((1, 2, 5, 6, 7), (3, 2, 2, 3, 2), {"pads_begin": [1, 0, 1], "pads_end": [0, 1, 1]}),
]

ONNX_AUTO_PAD = {"same_upper": "SAME_UPPER", "same_lower": "SAME_LOWER", "valid": "VALID"}


def onnx_attrs(props: dict, kernel: tuple[int, ...]) -> dict:
    n = len(kernel)
    attrs = {"kernel_shape": list(kernel), "group": props.get("group", 1)}
    attrs["strides"] = props.get("strides", [1] * n)
    attrs["dilations"] = props.get("dilations", [1] * n)
    if "auto_pad" in props:
        attrs["auto_pad"] = ONNX_AUTO_PAD[props["auto_pad"]]
    else:
        attrs["pads"] = props.get("pads_begin", [0] * n) + props.get("pads_end", [0] * n)
    return attrs


@pytest.mark.parametrize("x_shape, w_shape, props", CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_convolution_matches_onnxruntime(x_shape, w_shape, props, with_bias):
    x, w = rand(*x_shape, seed=1), rand(*w_shape, seed=2)
    consts = [w] + ([rand(w_shape[0], seed=3)] if with_bias else [])
    (got,) = run_op(Convolution, [x], consts, **props)
    (want,) = onnx_run("Conv", [x], consts, **onnx_attrs(props, w_shape[2:]))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "x_shape, w_shape, props, message",
    [
        ((1, 3, 8, 8), (4, 2, 3, 3), {}, "input has 3 channels but weights expect 2"),
        ((1, 4, 8, 8), (3, 2, 3, 3), {"group": 2}, "not divisible by group 2"),
        ((1, 3, 8, 8), (4, 3, 3, 3), {"strides": [1]}, "strides needs 2 values"),
        ((1, 3, 8, 8), (4, 3, 3, 3), {"strides": [0, 1]}, "strides values must be >= 1"),
        ((1, 3, 8, 8), (4, 3, 3, 3), {"auto_pad": "full"}, "auto_pad must be one of"),
        ((1, 3, 2, 2), (4, 3, 3, 3), {}, "is empty"),
        ((1, 3, 8, 8), (4, 3, 3, 3), {"group": 0}, "group must be >= 1"),
    ],
)
def test_convolution_rejects(x_shape, w_shape, props, message):
    from xdsl.utils.exceptions import VerifyException

    with pytest.raises(VerifyException, match=message):
        run_op(Convolution, [rand(*x_shape)], [rand(*w_shape)], name="conv1", **props)
