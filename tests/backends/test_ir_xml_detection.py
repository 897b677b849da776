"""The detection ops alone in a model, written as IR XML, read, shaped and run by OpenVINO on
CPU: outputs match the reference interpreter.

Where OpenVINO's semantics differ from the catalog's (Caffe's), the cases stay where both
agree: DetectionOutput packs the detections of all images one after the other and marks the
end with one -1 row (nn pads each image's rows), so the detection rows are compared (it has
no CORNER_SIZE code and no top_k-only row count: the writer refuses those); the
Proposal cases keep at least post_nms_topn boxes after NMS (OpenVINO keeps boxes below
min_size with score 0 instead of dropping them); pooled ROIs lie inside the map (OpenVINO
clamps a bin's start to the map where R-FCN leaves it empty).
"""

from __future__ import annotations

import numpy as np
import pytest

from irforge.backends.ir_xml import write_ir_xml
from irforge.backends.reference import run
from irforge.builder import ModelBuilder
from irforge.dialects import nn
from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from tests.backends.ir_xml_support import assert_close, run_openvino
from tests.helpers import one_op_model, rand


def run_both(tmp_path, cls, inputs, **props):  # type: ignore[no-untyped-def]
    """(reference, OpenVINO) output of a one-op model."""
    model = one_op_model(cls, inputs, **props)
    feeds = {f"x{i}": x for i, x in enumerate(inputs)}
    write_ir_xml(model, tmp_path / "m.xml")
    return run(model, feeds)["y0"], run_openvino(tmp_path / "m.xml", feeds)["y0"]


FEATURE, IMAGE = np.zeros((1, 2, 3, 5), np.float32), np.zeros((1, 3, 24, 40), np.float32)


@pytest.mark.parametrize(
    "props",
    [
        dict(min_size=[4.0]),
        dict(min_size=[4.0, 9.0], max_size=[8.0, 15.0], aspect_ratio=[2.0, 3.0], flip=True, clip=True),
        dict(min_size=[10.0], aspect_ratio=[0.5], step=8.0, offset=0.25, variance=[0.1, 0.1, 0.2, 0.2]),
        dict(min_size=[6.0], img_h=32, img_w=48),
    ],
)
@pytest.mark.parametrize("feature", [FEATURE, np.zeros((1, 2, 3, 4), np.float32)], ids=["square-steps", "steps-8x10"])
def test_prior_box(tmp_path, props, feature) -> None:
    want, got = run_both(tmp_path, nn.PriorBox, [feature, IMAGE], **props)
    assert_close(got, want, rtol=1e-5)


def test_prior_box_of_dynamic_sizes_reads_them_at_run_time(tmp_path) -> None:
    b = ModelBuilder()
    feature, image = b.input("x0", (1, 2, DYN, DYN)), b.input("x1", (1, 3, DYN, DYN))
    b.output(b.add(nn.PriorBox, [feature, image], min_size=[4.0], aspect_ratio=[2.0], flip=True).output, "y0")
    model = b.finish()
    write_ir_xml(model, tmp_path / "m.xml")
    for shapes in (((1, 2, 3, 5), (1, 3, 24, 40)), ((1, 2, 4, 4), (1, 3, 32, 48))):
        feeds = {f"x{i}": np.zeros(s, np.float32) for i, s in enumerate(shapes)}
        assert_close(run_openvino(tmp_path / "m.xml", feeds)["y0"], run(model, feeds)["y0"], rtol=1e-5)


@pytest.mark.parametrize(
    "props",
    [
        dict(width=[5.0, 12.0, 7.5], height=[9.0, 4.0, 7.5], step_w=10.0, step_h=6.0, variance=[0.1, 0.1, 0.2, 0.2]),
        dict(width=[30.0, 8.0], height=[9.0, 40.0], clip=True, offset=0.3),
        dict(width=[5.0, 12.0], height=[9.0, 4.0], step_w=10.0),  # step_h from the sizes
        dict(width=[5.0], height=[9.0], step_h=7.0, img_h=30, img_w=50),
    ],
)
def test_prior_box_clustered(tmp_path, props) -> None:
    want, got = run_both(tmp_path, nn.PriorBoxClustered, [FEATURE, IMAGE], **props)
    assert_close(got, want, rtol=1e-5)


def detection_inputs(batch: int, num_priors: int, classes: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    centres, sizes = rng.uniform(0.2, 0.8, (num_priors, 2)), rng.uniform(0.05, 0.3, (num_priors, 2))
    priors = np.concatenate([centres - sizes / 2, centres + sizes / 2], axis=1).reshape(-1)
    prior_blob = np.stack([priors, np.tile([0.1, 0.1, 0.2, 0.2], num_priors)])[None].astype(np.float32)
    logits = rng.standard_normal((batch, num_priors, classes)) * 2
    conf = (np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)).reshape(batch, -1).astype(np.float32)
    return [rng.standard_normal((batch, num_priors * 4)).astype(np.float32), conf, prior_blob]


def openvino_rows(out: np.ndarray) -> np.ndarray:
    """OpenVINO's detections: the rows before its -1 end marker (what follows is unused)."""
    rows = out.reshape(-1, 7)
    end = np.flatnonzero(rows[:, 0] == -1)
    return rows[: end[0]] if end.size else rows


def reference_rows(out: np.ndarray) -> np.ndarray:
    """nn's detections: the rows not padding an image's list (image id -1)."""
    rows = out.reshape(-1, 7)
    return rows[rows[:, 0] >= 0]


@pytest.mark.parametrize(
    ("batch", "props"),
    [
        (1, dict(nms_threshold=0.45, top_k=30, keep_top_k=12, confidence_threshold=0.05, code_type="caffe.PriorBoxParameter.CENTER_SIZE")),
        (2, dict(nms_threshold=0.3, keep_top_k=40, confidence_threshold=0.1, code_type="caffe.PriorBoxParameter.CENTER_SIZE")),
        (1, dict(nms_threshold=0.5, keep_top_k=20, background_label_id=-1, confidence_threshold=0.2)),
        (2, dict(nms_threshold=0.45, keep_top_k=30, confidence_threshold=0.1, share_location=False)),
        (1, dict(nms_threshold=0.45, keep_top_k=30, confidence_threshold=0.1, variance_encoded_in_target=True, code_type="caffe.PriorBoxParameter.CENTER_SIZE")),
    ],
)
def test_detection_output(tmp_path, batch, props) -> None:
    inputs = detection_inputs(batch, 40, 3, seed=batch)
    if not props.get("share_location", True):  # one box per class
        inputs[0] = rand(batch, 40 * 3 * 4, seed=3)
    if props.get("variance_encoded_in_target"):  # the deltas come scaled
        inputs[0] = inputs[0] * 0.1
    want, got = run_both(tmp_path, nn.DetectionOutput, inputs, num_classes=3, **props)
    assert got.shape == want.shape
    rows = reference_rows(want)
    assert len(rows) > 3
    assert_close(openvino_rows(got), rows, rtol=1e-5)


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (dict(top_k=5), "top_k but no keep_top_k has no OpenVINO equivalent"),
        (dict(keep_top_k=5, code_type="caffe.PriorBoxParameter.CORNER_SIZE"), "CORNER_SIZE has no OpenVINO equivalent"),
    ],
)
def test_detection_output_without_openvino_equivalent_is_refused(tmp_path, props, message) -> None:
    model = one_op_model(nn.DetectionOutput, detection_inputs(1, 10, 3, seed=0), num_classes=3, nms_threshold=0.5, **props)
    with pytest.raises(IrforgeError, match=message):
        write_ir_xml(model, tmp_path / "m.xml")
    assert not (tmp_path / "m.xml").exists()


PROPOSAL = dict(base_size=16, feat_stride=16, min_size=4, ratio=[0.5, 1.0, 2.0], scale=[2.0, 4.0], pre_nms_topn=120, post_nms_topn=12, nms_thresh=0.7)


@pytest.mark.parametrize(
    ("batch", "info", "props"),
    [
        (1, [96.0, 128.0, 1.0], {}),
        (2, [[90.0, 120.0, 1.5]], dict(nms_thresh=0.5, pre_nms_topn=60)),
        (1, [96.0, 128.0, 1.0, 2.0], dict(clip_after_nms=True, normalize=True, box_size_scale=2.0, box_coordinate_scale=4.0)),
    ],
)
def test_proposal(tmp_path, batch, info, props) -> None:
    scores = rand(batch, 12, 6, 8, seed=batch, low=0.0, high=1.0)
    deltas = rand(batch, 24, 6, 8, seed=10 + batch, low=-0.4, high=0.4)
    want, got = run_both(tmp_path, nn.Proposal, [scores, deltas, np.array(info, np.float32)], **{**PROPOSAL, **props})
    assert (want[:, 0] >= 0).all()  # every row filled: the case where both agree
    assert_close(got, want, rtol=1e-4)


ROIS = np.array([[0, 1, 2, 20, 14], [1, 3.4, 0.6, 9.5, 7.5], [1, 0, 0, 23, 15], [0, 12.2, 9.7, 13, 10]], np.float32)
NORMALISED = np.array([[0, 0.1, 0.2, 0.8, 0.6], [1, 0.0, 0.0, 1.0, 1.0], [0, 0.55, 0.3, 0.6, 0.95]], np.float32)
MAPS = rand(2, 8, 16, 24, seed=3)


@pytest.mark.parametrize(
    ("rois", "props"),
    [
        (ROIS, dict(pooled_h=3, pooled_w=4, spatial_scale=1.0)),
        (ROIS * np.array([1, 2, 2, 2, 2], np.float32), dict(pooled_h=2, pooled_w=2, spatial_scale=0.5)),
        (NORMALISED, dict(pooled_h=3, pooled_w=5, spatial_scale=1.0, method="bilinear")),
        (NORMALISED, dict(pooled_h=1, pooled_w=2, spatial_scale=1.0, method="bilinear")),
    ],
)
def test_roi_pooling(tmp_path, rois, props) -> None:
    want, got = run_both(tmp_path, nn.ROIPooling, [MAPS, rois], **props)
    assert_close(got, want, rtol=1e-5)


@pytest.mark.parametrize(
    ("maps", "rois", "props"),
    [
        (MAPS, ROIS, dict(output_dim=2, group_size=2, spatial_scale=1.0)),
        (rand(2, 9, 16, 24, seed=4), ROIS * np.array([1, 2, 2, 2, 2], np.float32), dict(output_dim=1, group_size=3, spatial_scale=0.5)),
        (MAPS, NORMALISED, dict(output_dim=2, group_size=3, spatial_scale=1.0, mode="bilinear", spatial_bins_x=2, spatial_bins_y=2)),
        (MAPS, NORMALISED, dict(output_dim=8, group_size=1, spatial_scale=1.0, mode="bilinear")),
    ],
)
def test_psroi_pooling(tmp_path, maps, rois, props) -> None:
    want, got = run_both(tmp_path, nn.PSROIPooling, [maps, rois], **props)
    assert_close(got, want, rtol=1e-5)


@pytest.mark.parametrize(
    ("channels", "props"),
    [
        (2 * 9, dict(coords=4, classes=4, num=2)),
        (2 * 9, dict(coords=4, classes=4, num=2, axis=2, end_axis=3, anchors=[1.0, 2.0, 3.0, 4.0])),
        (2 * 8, dict(coords=4, classes=3, num=3, mask=[0, 2], do_softmax=False)),
    ],
)
def test_region_yolo(tmp_path, channels, props) -> None:
    want, got = run_both(tmp_path, nn.RegionYolo, [rand(2, channels, 5, 6, seed=5, low=-3.0, high=3.0)], **props)
    assert_close(got, want, rtol=1e-5)


@pytest.mark.parametrize(("shape", "stride"), [((1, 8, 4, 6), 2), ((2, 18, 6, 9), 3), ((1, 3, 2, 2), 1)])
def test_reorg_yolo(tmp_path, shape, stride) -> None:
    want, got = run_both(tmp_path, nn.ReorgYolo, [rand(*shape, seed=6)], stride=stride)
    assert_close(got, want)
