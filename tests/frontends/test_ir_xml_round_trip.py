"""XML -> nn -> XML for every op the IR XML writer emits: the model read back computes the
same, and a file the writer wrote reads back into a model that writes the same file."""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.ir_xml import EMITTERS, write_ir_xml
from irforge.backends.reference import run
from irforge.dialects import nn
from irforge.frontends.ir_xml import read_ir_xml
from tests.backends.ir_xml_support import assert_close
from tests.backends.test_ir_xml_detection import MAPS, NORMALISED, PROPOSAL, ROIS, detection_inputs
from tests.backends.test_ir_xml_indexing import INDEXING_CASES
from tests.backends.test_ir_xml_ops import CASES as OP_CASES
from tests.backends.test_ir_xml_ops import case
from tests.backends.test_ir_xml_unpool import UNPOOL_CASES
from tests.helpers import one_op_model, rand

FEATURE, IMAGE = rand(1, 2, 3, 5, seed=40), rand(1, 3, 24, 40, seed=41)
CENTER_SIZE = "caffe.PriorBoxParameter.CENTER_SIZE"


def detection_cases():  # type: ignore[no-untyped-def]
    yield case(nn.PriorBox, [FEATURE, IMAGE], min_size=[4.0], id="prior_box")
    yield case(nn.PriorBox, [FEATURE, IMAGE], min_size=[4.0, 9.0], max_size=[8.0, 15.0], aspect_ratio=[2.0, 3.0], flip=True, clip=True, id="prior_box-max-flip")
    yield case(nn.PriorBox, [FEATURE, IMAGE], min_size=[10.0], aspect_ratio=[0.5], step=8.0, offset=0.25, variance=[0.1, 0.1, 0.2, 0.2], img_h=32, img_w=48, id="prior_box-step-image")
    yield case(nn.PriorBoxClustered, [FEATURE, IMAGE], width=[5.0, 12.0, 7.5], height=[9.0, 4.0, 7.5], step_w=10.0, step_h=6.0, variance=[0.2], id="prior_box_clustered")
    yield case(nn.PriorBoxClustered, [FEATURE, IMAGE], width=[30.0, 8.0], height=[9.0, 40.0], clip=True, offset=0.3, id="prior_box_clustered-clip")
    yield case(nn.PriorBoxClustered, [FEATURE, IMAGE], width=[5.0], height=[9.0], step_w=10.0, id="prior_box_clustered-one-step")
    two = detection_inputs(2, 40, 3, seed=2)
    yield case(nn.DetectionOutput, detection_inputs(1, 40, 3, seed=1), num_classes=3, nms_threshold=0.45, top_k=30, keep_top_k=12, confidence_threshold=0.05, code_type=CENTER_SIZE, id="detection_output")
    yield case(nn.DetectionOutput, [rand(2, 40 * 3 * 4, seed=3), *two[1:]], num_classes=3, nms_threshold=0.45, keep_top_k=30, share_location=False, background_label_id=-1, id="detection_output-per-class")
    yield case(nn.DetectionOutput, two[:2], [two[2][:, :1]], num_classes=3, nms_threshold=0.3, keep_top_k=20, variance_encoded_in_target=True, id="detection_output-encoded")
    yield case(nn.DetectionOutput, two, num_classes=3, nms_threshold=0.3, keep_top_k=20, variance_encoded_in_target=True, id="detection_output-encoded-variances-row")
    yield case(nn.DetectionOutput, detection_inputs(1, 40, 3, seed=4), num_classes=3, nms_threshold=0.45, keep_top_k=12, code_type=CENTER_SIZE, clip_before_nms=True, id="detection_output-clipped")
    scores, deltas = rand(1, 12, 6, 8, seed=1, low=0.0, high=1.0), rand(1, 24, 6, 8, seed=11, low=-0.4, high=0.4)
    yield case(nn.Proposal, [scores, deltas, np.array([96.0, 128.0, 1.0], np.float32)], **PROPOSAL, id="proposal")
    yield case(nn.Proposal, [scores, deltas, np.array([[96.0, 128.0, 1.0, 2.0]], np.float32)], **{**PROPOSAL, "normalize": True, "clip_after_nms": True}, id="proposal-caffe-info")
    yield case(nn.Proposal, [scores, deltas, np.array([96.0, 128.0, 1.0], np.float32)], num_results=2, **PROPOSAL, id="proposal-scores")
    yield case(nn.ROIPooling, [MAPS, ROIS], pooled_h=3, pooled_w=4, spatial_scale=1.0, id="roi_pooling")
    yield case(nn.ROIPooling, [MAPS, NORMALISED], pooled_h=3, pooled_w=5, spatial_scale=1.0, method="bilinear", id="roi_pooling-bilinear")
    yield case(nn.PSROIPooling, [MAPS, ROIS], output_dim=2, group_size=2, spatial_scale=1.0, id="psroi_pooling")
    yield case(nn.PSROIPooling, [MAPS, NORMALISED], output_dim=2, group_size=3, spatial_scale=1.0, mode="bilinear", spatial_bins_x=2, spatial_bins_y=2, id="psroi_pooling-bilinear")
    yield case(nn.RegionYolo, [rand(2, 18, 5, 6, seed=5)], coords=4, classes=4, num=2, axis=2, end_axis=3, anchors=[1.0, 2.0, 3.0, 4.0], id="region_yolo")
    yield case(nn.RegionYolo, [rand(2, 16, 5, 6, seed=5)], coords=4, classes=3, num=3, mask=[0, 2], do_softmax=False, id="region_yolo-mask")
    yield case(nn.ReorgYolo, [rand(2, 18, 6, 9, seed=6)], stride=3, id="reorg_yolo")


DETECTION_CASES = list(detection_cases())
CASES = [*OP_CASES, *DETECTION_CASES, *INDEXING_CASES, *UNPOOL_CASES]
REWRITTEN = {
    # one op written as several layers, read back as several nn ops (then a fixed point)
    "activation-reciprocal", "deconv-same-short", "pool-avg-ceil-pads", "power", "power-scale-only",
    "normalize", "normalize-across-shared", "reduce-log_sum", "reduce-log_sum_exp", "argmin-drop",
    "argmax-last", "argmax-last-drop", "relu-leaky",
    # the priors' variances row cut off by a StridedSlice, read back as nn.slice (Slice-8)
    "detection_output-encoded-variances-row",
    # known dims: ShapeOf read back as a constant, Broadcast of a constant target as a Tile
    "shape_of", "broadcast_to-both-ways",
    # a Tile of zeros, reshapes and ScatterElementsUpdate (OpenVINO has no unpooling)
    "max_unpool", "max_unpool-i32-const",
}  # fmt: skip


@pytest.mark.parametrize("cls, inputs, constants, num_results, props", CASES)
def test_every_op_reads_back(request, tmp_path, cls, inputs, constants, num_results, props):
    """nn -> XML -> nn computes the same; XML -> nn -> XML gives the same file (from the
    first write on, but for the ops written as layers of other nn ops)."""
    model = one_op_model(cls, inputs, constants, num_results, **props)
    feeds = {f"x{i}": x for i, x in enumerate(inputs)}
    write_ir_xml(model, tmp_path / "a.xml")
    again = read_ir_xml(tmp_path / "a.xml")
    want = run(model, feeds)
    for name, value in run(again, feeds).items():
        assert_close(value, want[name], rtol=1e-5, what=name)
    write_ir_xml(again, tmp_path / "b.xml")
    if request.node.callspec.id not in REWRITTEN:
        assert (tmp_path / "a.xml").read_text() == (tmp_path / "b.xml").read_text()
    write_ir_xml(read_ir_xml(tmp_path / "b.xml"), tmp_path / "c.xml")
    assert (tmp_path / "b.xml").read_text() == (tmp_path / "c.xml").read_text()
    assert (tmp_path / "b.bin").read_bytes() == (tmp_path / "c.bin").read_bytes()


def test_every_op_with_an_emitter_is_read_back_here():
    """A new nn op with an IR XML writer but no case here (so maybe no reader) fails this."""
    # If / Loop (ops with bodies, not one-op models): tests/backends/test_ir_xml_control_flow.py
    written = {op for op in nn.OPS if op in EMITTERS and op not in (nn.Constant, nn.If, nn.Loop)}
    assert written - {p.values[0] for p in CASES} == set()
