"""The indexing ops alone in a model, written as IR XML and run by OpenVINO: outputs match
the reference interpreter, written ports the shapes OpenVINO infers (-1 where data decides)."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.dialects import nn
from tests.backends.ir_xml_support import assert_op_runs_in_openvino_like_the_reference
from tests.backends.test_ir_xml_ops import case
from tests.helpers import rand

X = rand(3, 4, 5, seed=60)
IDX = np.array([[[0, 2, 1, 0, 2], [1, 1, 0, 2, -1]]], np.int64).repeat(3, axis=0)  # [3, 2, 5] along axis 1 of size 4
SPECIAL = np.array([[1.0, np.nan, -np.inf], [np.inf, 0.0, -2.0]], np.float32)


def indexing_cases():  # type: ignore[no-untyped-def]
    yield case(nn.GatherElements, [X, IDX], axis=1, id="gather_elements")
    yield case(nn.GatherElements, [X], [np.array([4, 0, -2, 1, 3, 3], np.int32).reshape(1, 1, 6).repeat(4, 1).repeat(3, 0)], axis=-1, id="gather_elements-i32-last")
    yield case(nn.GatherND, [X, np.array([[0, 1], [2, 3], [1, -1]], np.int64)], id="gather_nd")
    yield case(nn.GatherND, [X], [np.array([[1], [3]], np.int64).reshape(1, 2, 1).repeat(3, 0)], batch_dims=1, id="gather_nd-batch")
    nd_idx = np.array([[0, 1], [2, 3]], np.int64)
    yield case(nn.ScatterND, [X, nd_idx, rand(2, 5, seed=61)], id="scatter_nd")
    yield case(nn.ScatterND, [X], [nd_idx, rand(2, 5, seed=62)], reduction="add", id="scatter_nd-add")
    yield case(nn.ScatterND, [X], [nd_idx, rand(2, 5, seed=63)], reduction="mul", id="scatter_nd-mul")
    el_idx = np.array([[[0, 3, 1, 2, 0]]], np.int64).repeat(3, 0)
    yield case(nn.ScatterElements, [X, el_idx, rand(3, 1, 5, seed=64)], axis=1, id="scatter_elements")
    yield case(nn.ScatterElements, [X], [el_idx, rand(3, 1, 5, seed=65)], axis=1, reduction="max", id="scatter_elements-max")
    on, off = np.array(5.0, np.float32), np.array(-1.0, np.float32)
    yield case(nn.OneHot, [np.array([[0, 3], [-1, 2]], np.int64)], [on, off], depth=4, axis=1, id="one_hot")
    yield case(nn.OneHot, [np.array([1, 0, 2], np.int32)], [on, off], depth=3, id="one_hot-last")
    yield case(nn.NonZero, [np.round(X)], id="non_zero")
    yield case(nn.TopK, [X], num_results=2, k=3, axis=2, id="top_k")
    yield case(nn.TopK, [X], num_results=2, k=2, axis=1, mode="min", sort="index", id="top_k-min-index")
    yield case(nn.TopK, [X, np.array(3, np.int64)], num_results=2, axis=1, id="top_k-run-time-k")
    yield case(nn.CumSum, [X], axis=1, id="cum_sum")
    yield case(nn.CumSum, [X], axis=-1, exclusive=True, reverse=True, id="cum_sum-exclusive-reverse")
    yield case(nn.Range, [np.array(1.5, np.float32), np.array(7.0, np.float32), np.array(0.75, np.float32)], id="range")
    yield case(nn.Range, [np.array(10, np.int64), np.array(-3, np.int64), np.array(-4, np.int64)], id="range-i64-down")
    yield case(nn.ShapeOf, [X], id="shape_of")
    yield case(nn.BroadcastTo, [rand(3, 1, seed=70), np.array([2, 3, 4], np.int64)], id="broadcast_to")
    yield case(nn.BroadcastTo, [X], [np.array([4, 1], np.int64)], id="broadcast_to-both-ways")
    yield case(nn.ReshapeTo, [X, np.array([0, -1, 2], np.int64)], id="reshape_to")
    yield case(nn.ReshapeTo, [X, np.array([-1, 5], np.int64)], special_zero=False, id="reshape_to-no-special-zero")
    yield case(nn.SliceTo, [X, np.array([1, -4], np.int64), np.array([3, 100], np.int64)], axes=[0, 2], id="slice_to")
    yield case(nn.SliceTo, [X, np.array([3], np.int32), np.array([-5], np.int32)], axes=[-2], steps=[-2], id="slice_to-i32-backwards")
    yield case(nn.PadBy, [X, np.array([1, -2, 0, 0, 3, 2], np.int64)], value=0.5, id="pad_by-crop")
    yield case(nn.PadBy, [X, np.array([0, 3, 4, 2, 0, 1], np.int32)], mode="reflect", id="pad_by-i32-reflect")
    yield case(nn.PadBy, [X, np.array([2, 0, 1, 0, 5, 0], np.int64)], mode="edge", id="pad_by-edge")
    repeated = np.round(rand(3, 4, seed=71) * 1.5)  # few distinct values, repeated
    yield case(nn.Unique, [repeated], num_results=4, id="unique")
    yield case(nn.Unique, [repeated], num_results=4, sorted=False, id="unique-unsorted")
    rows = np.array([[2, 1, 2, 0], [5, 3, 5, 3], [2, 1, 2, 0]], np.int64)
    yield case(nn.Unique, [rows], num_results=4, axis=0, id="unique-axis")
    yield case(nn.Unique, [rows], num_results=4, axis=-1, sorted=False, id="unique-axis-unsorted")
    ints = np.array([[5, -3, 12, 7], [0, 1, -128, 64]], np.int32)
    for operation in ("and", "or", "xor"):
        yield case(nn.Bitwise, [ints, np.array([6, -1, 3, 12], np.int32)], operation=operation, id=f"bitwise-{operation}")
    yield case(nn.Bitwise, [ints], operation="not", id="bitwise-not")
    bytes_ = np.array([[1, 2, 128], [255, 7, 16]], np.uint8)
    yield case(nn.Bitwise, [bytes_, np.array([3, 1, 0], np.uint8)], operation="left_shift", id="bitwise-left_shift")
    yield case(nn.Bitwise, [bytes_], [np.array([1, 0, 4], np.uint8)], operation="right_shift", id="bitwise-right_shift")
    yield case(nn.IsNaN, [SPECIAL], id="is_nan")
    yield case(nn.IsInf, [SPECIAL], id="is_inf")
    yield case(nn.IsInf, [SPECIAL], detect_negative=False, id="is_inf-positive")
    feature = rand(2, 3, 8, 10, seed=66)
    rois = np.array([[1.0, 1.5, 6.0, 5.0], [0.0, 0.0, 9.0, 7.0], [3.2, 2.1, 3.9, 2.8]], np.float32)
    batch = np.array([0, 1, 1], np.int64)
    yield case(nn.ROIAlign, [feature, rois, batch], pooled_h=2, pooled_w=3, sampling_ratio=2, spatial_scale=1.0, id="roi_align")
    yield case(nn.ROIAlign, [feature, rois * 2, batch], pooled_h=3, pooled_w=2, spatial_scale=0.5, aligned_mode="asymmetric", id="roi_align-adaptive-asymmetric")
    centres = rand(2, 6, 2, seed=67, low=0.0, high=4.0)
    boxes = np.concatenate([centres, centres + rand(2, 6, 2, seed=68, low=0.5, high=2.0)], axis=2)
    scores = rand(2, 2, 6, seed=69, low=0.0, high=1.0)
    yield case(nn.NonMaxSuppression, [boxes, scores], max_output_boxes_per_class=3, iou_threshold=0.3, score_threshold=0.1, id="non_max_suppression")
    yield case(nn.NonMaxSuppression, [boxes, scores], max_output_boxes_per_class=10, iou_threshold=0.5, center_point_box=True, id="non_max_suppression-center")


INDEXING_CASES = list(indexing_cases())


@pytest.mark.parametrize("cls, inputs, constants, num_results, props", INDEXING_CASES)
def test_indexing_op_runs_in_openvino_like_the_reference(tmp_path, cls, inputs, constants, num_results, props):
    assert_op_runs_in_openvino_like_the_reference(tmp_path, cls, inputs, constants, num_results, props)


def test_every_indexing_op_is_run_here():
    from irforge.dialects.nn import bitwise, boxes, indexing, unique

    ops = {op for op in nn.OPS if op.__module__ in (indexing.__name__, boxes.__name__, unique.__name__, bitwise.__name__)}
    assert ops - {p.values[0] for p in INDEXING_CASES} == set()
