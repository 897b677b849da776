"""Layers in the forms OpenVINO itself writes (built with its opset API, saved by
`openvino.save_model`): read by irforge, they compute in the reference interpreter what they
compute in OpenVINO. Those `nn` cannot express give one-line errors."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import openvino as ov
import openvino.opset1 as o1
import openvino.opset2 as o2
import openvino.opset8 as o8
import openvino.opset11 as o11
import openvino.opset12 as o12
import pytest

from irforge.backends.reference import run
from irforge.frontends.ir_xml import read_ir_xml
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import rand

X = rand(2, 3, 6, 7, seed=1, low=-2.0, high=2.0)
Build = Callable[[ov.Node], "ov.Node | list[ov.Output]"]


def save(tmp_path, build: Build, x: np.ndarray = X):  # type: ignore[no-untyped-def]
    """A model of `build` applied to one input `x`, saved by OpenVINO; its outputs y0, y1..."""
    param = o1.parameter(list(x.shape), x.dtype, name="x")
    param.output(0).get_tensor().set_names({"x"})
    built = build(param)
    outputs = built if isinstance(built, list) else [built.output(i) for i in range(built.get_output_size())]
    results = []
    for i, out in enumerate(outputs):
        out.get_tensor().set_names({f"y{i}"})
        results.append(o1.result(out))
    xml = tmp_path / "ov.xml"
    ov.save_model(ov.Model(results, [param], "m"), str(xml))
    return xml


def assert_reads_like_openvino(tmp_path, build: Build, x: np.ndarray = X, rtol: float = 1e-5) -> None:  # type: ignore[no-untyped-def]
    xml = save(tmp_path, build, x)
    want = run_openvino(xml, {"x": x}, check_dims=False)
    got = run(read_ir_xml(xml), {"x": x})
    assert set(got) == {name for name in want if name.startswith("y")}
    for name, value in got.items():
        assert_close(value, want[name], rtol=rtol, what=name)


def ints(values: list[int]) -> ov.Node:
    return o1.constant(np.array(values, np.int64))


@pytest.mark.parametrize("across", [False, True])
@pytest.mark.parametrize("variance", [False, True])
def test_mvn_1(tmp_path, across, variance) -> None:
    assert_reads_like_openvino(tmp_path, lambda x: o2.mvn(x, across_channels=across, normalize_variance=variance, eps=0.5))


@pytest.mark.parametrize("axes", [[1], [2, 3], [1, 2, 3], [-1]])
@pytest.mark.parametrize("mode", ["add", "max"])
def test_normalize_l2(tmp_path, axes, mode) -> None:
    x = X * np.array([1.0, 0.01, 1.0], np.float32).reshape(1, 3, 1, 1)  # small sums, where eps shows
    assert_reads_like_openvino(tmp_path, lambda p: o1.normalize_l2(p, o1.constant(np.array(axes, np.int64)), 0.05, mode), x)


@pytest.mark.parametrize("outputs", [[0], [1], [0, 1]], ids=["values", "indices", "both"])
@pytest.mark.parametrize("mode", ["max", "min"])
def test_top_k_1(tmp_path, outputs, mode) -> None:
    x = np.round(X * 2)  # ties: the first index wins

    def build(p: ov.Node) -> list[ov.Output]:
        top = o11.topk(p, o1.constant(np.array(1, np.int64)), 2, mode, "value", "i64", stable=True)
        return [top.output(i) for i in outputs]

    assert_reads_like_openvino(tmp_path, build, x)


@pytest.mark.parametrize(("mode", "sort"), [("max", "value"), ("min", "index")])
def test_top_k_above_1_reads_as_nn_top_k(tmp_path, mode, sort) -> None:
    def build(p: ov.Node) -> list[ov.Output]:
        top = o11.topk(p, o1.constant(np.array(3, np.int64)), 1, mode, sort, "i32", stable=True)
        return [top.output(0), top.output(1)]

    assert_reads_like_openvino(tmp_path, build, X)


@pytest.mark.parametrize(
    ("mode", "calculation", "target", "pads"),
    [
        ("nearest", "scales", np.array([2.0, 1.5], np.float32), ([0, 0, 1, 0], [0, 0, 1, 2])),
        ("linear_onnx", "sizes", np.array([9, 5], np.int64), ([0, 0, 2, 1], [0, 0, 0, 1])),
        ("cubic", "scales", np.array([0.5, 2.0], np.float32), ([0, 1, 0, 0], [0, 0, 2, 0])),
    ],
)
def test_interpolate_with_pads(tmp_path, mode, calculation, target, pads) -> None:
    def build(p: ov.Node) -> ov.Node:
        return o11.interpolate(p, o1.constant(target), mode, calculation, pads[0], pads[1], axes=ints([2, 3]))

    assert_reads_like_openvino(tmp_path, build)


STRIDED = [
    dict(begin=[0, 1], end=[0, 3], strides=[1, 1], begin_mask=[1, 0], end_mask=[1, 0]),
    dict(begin=[1, 0, -1], end=[2, 0, 0], strides=[1, 1, -2], begin_mask=[0, 1, 0], end_mask=[0, 1, 1], shrink_axis_mask=[1, 0, 0]),
    dict(begin=[0, 0, 0, 2], end=[0, 0, 0, 5], strides=[1, 1, 1, 2], begin_mask=[1, 0, 1, 0], end_mask=[1, 0, 1, 0], new_axis_mask=[0, 1, 0, 0]),
    dict(begin=[0, -2], end=[0, 0], strides=[1, 1], begin_mask=[0, 0], end_mask=[0, 1], ellipsis_mask=[1, 0]),
    dict(begin=[1, 0, 0, -3], end=[0, 0, 0, 0], strides=[1, 1, 1, 1], begin_mask=[0, 0, 0, 0], end_mask=[1, 1, 1, 1], shrink_axis_mask=[0, 0, 0, 1], new_axis_mask=[0, 0, 1, 0]),
    dict(begin=[-1, 4], end=[0, 0], strides=[-1, -1], begin_mask=[0, 0], end_mask=[1, 1], ellipsis_mask=[0, 0]),
    dict(begin=[0, 1, 0], end=[0, 2, 0], strides=[1, 1, 1], begin_mask=[0, 0, 0], end_mask=[0, 0, 0], new_axis_mask=[1, 0, 0], shrink_axis_mask=[0, 0, 1], ellipsis_mask=[0, 0, 0]),
]


@pytest.mark.parametrize("spec", STRIDED)
def test_strided_slice(tmp_path, spec) -> None:
    """Against OpenVINO's reference evaluation: its CPU plugin returns wrong values for some
    new-axis and shrink combinations (x[None, 1:2, 0] among them) in 2026.4."""
    spec = dict(spec)
    bounds = [np.array(spec.pop(k), np.int64) for k in ("begin", "end", "strides")]
    node = o1.strided_slice(o1.constant(X), *(o1.constant(b) for b in bounds), **spec)
    want = [ov.Tensor(np.zeros(node.get_output_shape(0), np.float32))]
    assert node.evaluate(want, [ov.Tensor(X), *(ov.Tensor(b) for b in bounds)])
    xml = save(tmp_path, lambda p: o1.strided_slice(p, *(o1.constant(b) for b in bounds), **spec))
    np.testing.assert_array_equal(run(read_ir_xml(xml), {"x": X})["y0"], want[0].data)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
@pytest.mark.parametrize(("begin", "end"), [([0, -1, 2, -2], [0, 1, -3, 1]), ([0, 0, -1, -2], [-1, 0, 0, -3])])
def test_negative_pad(tmp_path, mode, begin, end) -> None:
    value = o1.constant(np.array(1.5, np.float32))
    assert_reads_like_openvino(tmp_path, lambda p: o12.pad(p, ints(begin), ints(end), mode, value if mode == "constant" else None))


@pytest.mark.parametrize(
    ("output_shape", "options"),
    [
        ([12, 14], {}),
        ([11, 13], {}),
        ([13, 16], dict(auto_pad="same_lower")),
        ([12, 15], dict(auto_pad="same_upper")),
        ([14, 15], {}),  # larger than the transposed convolution gives: zeros appended
        ([12, 13], dict(output_padding=[1, 0])),
        ([14, 16], dict(pads_begin=[1, 0], pads_end=[0, 0])),  # zeros appended
        ([10, 12], dict(auto_pad="same_upper")),
        ([10, 12], dict(auto_pad="same_lower")),
    ],
)
@pytest.mark.parametrize("group", [1, 3])
def test_deconvolution_with_output_shape(tmp_path, output_shape, options, group) -> None:
    w = rand(3, 2, 3, 3, seed=2)

    def build(p: ov.Node) -> ov.Node:
        shape = ints(output_shape)
        if group == 1:
            return o1.convolution_backprop_data(p, o1.constant(w), [2, 2], shape, **options)
        grouped = o1.constant(w.reshape(3, 1, 2, 3, 3))
        return o1.group_convolution_backprop_data(p, grouped, [2, 2], shape, **{"auto_pad": "explicit", **options})

    assert_reads_like_openvino(tmp_path, build)


FEATURE, IMAGE = [3, 5], [24, 40]


@pytest.mark.parametrize("unsqueezed", [False, True])
def test_prior_boxes_of_openvino(tmp_path, unsqueezed) -> None:
    """PriorBox-8 and PriorBoxClustered-1 as OpenVINO writes them: [2, ...] or unsqueezed."""
    boxes = {"min_size": [4.0, 9.0], "max_size": [8.0, 15.0], "aspect_ratio": [2.0], "flip": True, "clip": True, "offset": 0.5, "variance": [0.1, 0.1, 0.2, 0.2]}
    clustered = {"width": [5.0, 12.0], "height": [9.0, 4.0], "step_w": 10.0, "step_h": 6.0, "offset": 0.5, "variance": [0.2]}

    def build(p: ov.Node) -> list[ov.Output]:
        sizes = (ints(FEATURE), ints(IMAGE))
        priors = [o8.prior_box(*sizes, boxes), o1.prior_box_clustered(*sizes, clustered)]
        return [(o1.unsqueeze(n, ints([0])) if unsqueezed else n).output(0) for n in priors]

    assert_reads_like_openvino(tmp_path, build)


def test_roi_pooling_of_openvino(tmp_path) -> None:
    rois = np.array([[0, 1, 2, 5, 4], [1, 0, 0, 6, 5]], np.float32)
    assert_reads_like_openvino(tmp_path, lambda p: o2.roi_pooling(p, o1.constant(rois), [2, 3], 1.0, "max"))
