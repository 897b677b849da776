"""nn.deconvolution: shape inference, verifier and numerics against onnxruntime's ConvTranspose."""

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects.nn import Deconvolution
from irforge.dialects.nn.base import DYN
from tests.helpers import onnx_run, rand, run_op

CASES = [
    # (input shape, weight shape [Cin, Cout/group, *k], props)
    ((1, 3, 5, 5), (3, 4, 3, 3), {}),
    ((2, 4, 4, 5), (4, 3, 3, 2), {"strides": [2, 3], "pads_begin": [1, 0], "pads_end": [0, 1]}),
    ((1, 4, 3, 4), (4, 2, 3, 3), {"group": 2, "strides": [2, 2], "output_padding": [1, 0]}),
    ((1, 6, 5, 5), (6, 1, 3, 3), {"group": 6, "dilations": [2, 1], "pads_begin": [2, 1], "pads_end": [1, 1]}),
    ((1, 2, 4, 5), (2, 3, 3, 4), {"strides": [2, 3], "dilations": [2, 1], "output_padding": [1, 2]}),
    ((1, 3, 5, 4), (3, 2, 3, 3), {"strides": [2, 2], "auto_pad": "same_upper"}),
    ((1, 3, 5, 4), (3, 2, 4, 3), {"strides": [2, 3], "auto_pad": "same_lower"}),
    ((1, 3, 5, 4), (3, 2, 3, 3), {"strides": [2, 2], "auto_pad": "same_upper", "output_padding": [1, 1]}),
    ((1, 3, 4, 4), (3, 2, 2, 3), {"strides": [3, 2], "auto_pad": "valid"}),
    ((3, 2, 7), (2, 3, 3), {"strides": [2], "pads_begin": [1], "pads_end": [2]}),
    ((1, 2, 3, 4, 3), (2, 2, 2, 3, 2), {"strides": [2, 1, 2], "pads_begin": [0, 1, 1], "pads_end": [1, 0, 0]}),
]

ONNX_AUTO_PAD = {"same_upper": "SAME_UPPER", "same_lower": "SAME_LOWER", "valid": "VALID"}


def onnx_attrs(props: dict, kernel: tuple[int, ...]) -> dict:
    n = len(kernel)
    attrs = {"kernel_shape": list(kernel), "group": props.get("group", 1)}
    attrs["strides"] = props.get("strides", [1] * n)
    attrs["dilations"] = props.get("dilations", [1] * n)
    attrs["output_padding"] = props.get("output_padding", [0] * n)
    if "auto_pad" in props:
        attrs["auto_pad"] = ONNX_AUTO_PAD[props["auto_pad"]]
    else:
        attrs["pads"] = props.get("pads_begin", [0] * n) + props.get("pads_end", [0] * n)
    return attrs


@pytest.mark.parametrize("x_shape, w_shape, props", CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_deconvolution_matches_onnxruntime(x_shape, w_shape, props, with_bias):
    x, w = rand(*x_shape, seed=1), rand(*w_shape, seed=2)
    out_channels = w_shape[1] * props.get("group", 1)
    consts = [w] + ([rand(out_channels, seed=3)] if with_bias else [])
    (got,) = run_op(Deconvolution, [x], consts, **props)
    (want,) = onnx_run("ConvTranspose", [x], consts, **onnx_attrs(props, w_shape[2:]))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_deconvolution_same_pads_out_a_short_output_with_zeros():
    # a 1-tap kernel with stride 2 yields 2*in - 1 values: same_upper keeps in*s, zero-filled
    x = rand(1, 1, 3, seed=4)
    (got,) = run_op(Deconvolution, [x], [np.ones((1, 1, 1), np.float32)], strides=[2], auto_pad="same_upper")
    np.testing.assert_array_equal(got[0, 0], [x[0, 0, 0], 0, x[0, 0, 1], 0, x[0, 0, 2], 0])


def infer(x_shape, w_shape, **props):
    b = ModelBuilder()
    x = b.input("x", x_shape)
    w = b.input("w", w_shape)
    return tuple(b.add(Deconvolution, [x, w], **props).output.type.get_shape())


def test_deconvolution_infers_dynamic_dims():
    assert infer((DYN, 4, 5, 5), (4, 2, 3, 3), strides=[2, 2], group=2) == (DYN, 4, 11, 11)
    assert infer((1, 4, DYN, 5), (4, 2, 3, 3), strides=[2, 2], auto_pad="same_lower") == (1, 2, DYN, 10)
    assert infer((DYN, DYN, 5), (4, DYN, 3), pads_begin=[1], pads_end=[1]) == (DYN, DYN, 5)


def test_deconvolution_runs_with_dynamic_spatial_dims():
    x, w = rand(2, 3, 5, 4, seed=5), rand(3, 2, 3, 4, seed=6)
    props = {"strides": [2, 3], "auto_pad": "same_upper", "output_padding": [1, 0]}
    b = ModelBuilder()
    y = b.add(Deconvolution, [b.input("x", (DYN, 3, DYN, DYN)), b.constant(w, "w")], **props).output
    b.output(y, "y")
    (want,) = run_op(Deconvolution, [x], [w], **props)
    np.testing.assert_allclose(run(b.finish(), {"x": x})["y"], want, rtol=1e-6)


@pytest.mark.parametrize(
    "x_shape, w_shape, props, message",
    [
        ((1, 3, 4, 4), (4, 2, 3, 3), {}, "input has 3 channels but weights expect 4"),
        ((1, 3, 4, 4), (3, 2, 3, 3), {"group": 2}, "3 input channels are not divisible by group 2"),
        ((1, 3, 4, 4), (3, 2, 3), {}, "weights must have rank 4, got 3"),
        ((1, 3, 4, 4), (3, 2, 3, 3), {"output_padding": [1]}, "output_padding needs 2 values"),
        ((1, 3, 4, 4), (3, 2, 3, 3), {"output_padding": [-1, 0]}, "output_padding values must be >= 0"),
        ((1, 3, 4, 4), (3, 2, 3, 3), {"strides": [2, 2], "output_padding": [2, 0]}, "smaller than stride"),
        ((1, 3, 4, 4), (3, 2, 3, 3), {"pads_begin": [3, 3], "pads_end": [3, 3]}, "is empty"),
        ((1, 3, 4, 4), (3, 2, 3, 3), {"group": 0}, "group must be >= 1"),
        ((1, 3, 4), (3, 2, 3), {"auto_pad": "full"}, "auto_pad must be one of"),
    ],
)
def test_deconvolution_rejects(x_shape, w_shape, props, message):
    with pytest.raises(VerifyException, match=message):
        run_op(Deconvolution, [rand(*x_shape)], [rand(*w_shape)], name="deconv1", **props)


def test_deconvolution_rejects_wrong_bias():
    with pytest.raises(VerifyException, match=r"bias must have shape \[4\]"):
        run_op(Deconvolution, [rand(1, 4, 4)], [rand(4, 2, 3), rand(3)], group=2)
