"""Caffe's Faster R-CNN, R-FCN and YOLO layers (Proposal, ROIPooling, PSROIPooling,
RegionYolo, ReorgYolo): small prototxts imported and run, against the loop implementations
of the original layers in tests/dialects/test_rcnn.py and test_yolo.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from irforge.dialects.nn import Proposal, RegionYolo
from irforge.errors import IrforgeError
from irforge.frontends.caffe import import_caffe
from tests.dialects.test_rcnn import faster_rcnn_proposal, fast_rcnn_roi_pool, rfcn_psroi_pool
from tests.dialects.test_yolo import darknet_region, darknet_reorg
from tests.frontends.caffe.caffe_files import write_caffe
from tests.frontends.caffe.test_caffe_layers import run_layers
from tests.helpers import rand

RPN = """
layer { name: "rpn_cls_score_reshape" type: "Reshape" bottom: "rpn_cls_score" top: "rpn_cls_score_reshape"
        reshape_param { shape { dim: 0 dim: 2 dim: -1 dim: 0 } } }
layer { name: "rpn_cls_prob" type: "Softmax" bottom: "rpn_cls_score_reshape" top: "rpn_cls_prob" }
layer { name: "rpn_cls_prob_reshape" type: "Reshape" bottom: "rpn_cls_prob" top: "rpn_cls_prob_reshape"
        reshape_param { shape { dim: 0 dim: 12 dim: -1 dim: 0 } } }
layer { name: "proposal" type: "Proposal" bottom: "rpn_cls_prob_reshape" bottom: "rpn_bbox_pred" bottom: "im_info" top: "rois"
        proposal_param { feat_stride: 8 base_size: 8 min_size: 6 ratio: 0.5 ratio: 1 ratio: 2 scale: 2 scale: 4
                         pre_nms_topn: 100 post_nms_topn: 10 nms_thresh: 0.6 } }
layer { name: "roi_pool5" type: "ROIPooling" bottom: "conv5" bottom: "rois" top: "pool5"
        roi_pooling_param { pooled_w: 3 pooled_h: 2 spatial_scale: 0.125 } }
"""


def rpn_softmax(score: np.ndarray) -> np.ndarray:
    """Caffe's Reshape [N, 2, A * H, W] -> Softmax over axis 1 -> Reshape back."""
    n, c, h, w = score.shape
    s = score.reshape(n, 2, -1, w).astype(np.float64)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(n, c, h, w)


def test_faster_rcnn_head(tmp_path: Path) -> None:
    inputs = {
        "rpn_cls_score": rand(1, 12, 5, 7, seed=1, low=-3.0, high=3.0),
        "rpn_bbox_pred": rand(1, 24, 5, 7, seed=2, low=-0.4, high=0.4),
        "im_info": np.array([[40.0, 56.0, 1.0]], np.float32),
        "conv5": rand(1, 4, 5, 7, seed=3),
    }
    got = run_layers(tmp_path, RPN, inputs)
    props = dict(base_size=8, feat_stride=8, min_size=6, ratio=[0.5, 1.0, 2.0], scale=[2.0, 4.0], pre_nms_topn=100, post_nms_topn=10, nms_thresh=0.6)
    rois = faster_rcnn_proposal(rpn_softmax(inputs["rpn_cls_score"]), inputs["rpn_bbox_pred"], [40.0, 56.0, 1.0], **props)
    assert (rois[:, 0] == 0).all()  # ten proposals, no end marker
    want = fast_rcnn_roi_pool(inputs["conv5"], rois, 2, 3, 0.125)
    np.testing.assert_allclose(got["pool5"], want, rtol=1e-5, atol=1e-6)


def test_proposal_defaults_and_second_top(tmp_path: Path) -> None:
    header = 'input: "s"\ninput_shape { dim: 1 dim: 18 dim: 4 dim: 4 }\ninput: "d"\ninput_shape { dim: 1 dim: 36 dim: 4 dim: 4 }\ninput: "i"\ninput_shape { dim: 1 dim: 3 }\n'
    layer = 'layer { name: "proposal" type: "Proposal" bottom: "s" bottom: "d" bottom: "i" top: "rois" %s }'
    model, _ = write_caffe(tmp_path, "net", header + layer % "", {})
    (op,) = [o for o in import_caffe(model).func.body.block.ops if isinstance(o, Proposal)]
    # caffe.proto's defaults, and py-faster-rcnn's anchors (9: the 18 score channels)
    assert (op.int_prop("feat_stride"), op.int_prop("base_size"), op.int_prop("post_nms_topn")) == (16, 16, 300)
    assert op.floats("ratio") == (0.5, 1.0, 2.0) and op.floats("scale") == (8.0, 16.0, 32.0)
    assert op.output.type.get_shape() == (300, 5)
    # a second top: the rois' object scores, [rows, 1] (OpenCV's Proposal layer gives the same)
    model, _ = write_caffe(tmp_path, "two", header + layer % 'top: "scores"', {})
    two = import_caffe(model)
    assert [t.get_shape() for t in two.func.function_type.outputs.data] == [(300, 5), (300, 1)]
    model, _ = write_caffe(tmp_path, "three", header + layer % 'top: "scores" top: "more"', {})
    with pytest.raises(IrforgeError, match="has 3 tops; a proposal layer gives rois and, optionally, their scores"):
        import_caffe(model)


def test_roi_pooling_without_pooled_size_is_an_error(tmp_path: Path) -> None:
    layers = 'layer { name: "pool" type: "ROIPooling" bottom: "x" bottom: "r" top: "y" roi_pooling_param { pooled_w: 2 } }'
    with pytest.raises(IrforgeError, match="pooled_h must be >= 1, got 0 .*Caffe layer 'pool' of type ROIPooling"):
        run_layers(tmp_path, layers, {"x": rand(1, 2, 4, 4), "r": np.zeros((1, 5), np.float32)})


def test_rfcn_psroi_pooling(tmp_path: Path) -> None:
    rois = np.array([[0, 2, 4, 40, 30], [1, 10.4, 3.6, 25.5, 60.2], [0, 0, 0, 63, 63]], np.float32)
    inputs = {"rfcn_cls": rand(2, 3 * 9, 16, 16, seed=4), "rois": rois}
    layers = """layer { name: "psroipooled_cls_rois" type: "PSROIPooling" bottom: "rfcn_cls" bottom: "rois" top: "psroipooled_cls_rois"
                psroi_pooling_param { spatial_scale: 0.25 output_dim: 3 group_size: 3 } }"""
    got = run_layers(tmp_path, layers, inputs)
    want = rfcn_psroi_pool(inputs["rfcn_cls"], rois, 3, 3, 0.25)
    np.testing.assert_allclose(got["psroipooled_cls_rois"], want, rtol=1e-5, atol=1e-7)


YOLO_V2 = """
layer { name: "reorg" type: "ReorgYolo" bottom: "passthrough" top: "reorg" reorg_yolo_param { stride: 2 } }
layer { name: "concat" type: "Concat" bottom: "reorg" bottom: "head" top: "concat" }
layer { name: "region" type: "RegionYolo" bottom: "concat" top: "region"
        region_yolo_param { coords: 4 classes: 3 num: 3 do_softmax: true anchors: 1.3 anchors: 1.7 anchors: 3.2 anchors: 4.0 anchors: 5 anchors: 6 }
        flatten_param { axis: 1 end_axis: 2 } }
"""


def test_yolo_v2_reorg_and_region(tmp_path: Path) -> None:
    # 4 * 4 reorganised channels + 8 head channels = 3 regions of 4 + 1 + 3 values
    inputs = {"passthrough": rand(1, 4, 6, 8, seed=5, low=-3.0, high=3.0), "head": rand(1, 8, 3, 4, seed=6, low=-3.0, high=3.0)}
    got = run_layers(tmp_path, YOLO_V2, inputs)
    concat = np.concatenate([darknet_reorg(inputs["passthrough"], 2), inputs["head"]], axis=1)
    want = darknet_region(concat, 4, 3, 3, softmax=True).reshape(1, 24 * 3, 4)
    np.testing.assert_allclose(got["region"], want, rtol=1e-6, atol=1e-7)


def test_yolo_v3_region_with_mask(tmp_path: Path) -> None:
    layers = """layer { name: "yolo" type: "RegionYolo" bottom: "x" top: "yolo"
                region_yolo_param { coords: 4 classes: 2 num: 6 do_softmax: false mask: 0 mask: 1 mask: 2
                                    anchors: 10 anchors: 13 anchors: 16 anchors: 30 anchors: 33 anchors: 23
                                    anchors: 30 anchors: 61 anchors: 62 anchors: 45 anchors: 59 anchors: 119 } }"""
    x = rand(2, 21, 3, 5, seed=7, low=-3.0, high=3.0)
    model, _ = write_caffe(tmp_path, "net", 'input: "x"\ninput_shape { dim: 2 dim: 21 dim: 3 dim: 5 }\n' + layers, {})
    (op,) = [o for o in import_caffe(model).func.body.block.ops if isinstance(o, RegionYolo)]
    assert op.ints("mask") == (0, 1, 2) and len(op.floats("anchors")) == 12
    got = run_layers(tmp_path, layers, {"x": x})
    np.testing.assert_allclose(got["yolo"], darknet_region(x, 4, 2, 3, softmax=False), rtol=1e-6, atol=1e-7)
