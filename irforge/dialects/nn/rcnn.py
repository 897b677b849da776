"""Region-based detection layers of the IR catalog: Proposal, ROIPooling, PSROIPooling.

Regions of interest travel as [R, 5] rows (batch index, x1, y1, x2, y2). Proposal makes them
from a region proposal network's scores and box deltas (Faster R-CNN); ROIPooling and
PSROIPooling pool a feature map [N, C, H, W] over each of them into [R, C', PH, PW].
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, FloatAttr, IntegerAttr, StringAttr, TensorType, f32, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, opt_result_def, prop_def, result_def

from irforge.dialects.nn.base import FloatArrayAttr, NNOp, known, product, tensor
from irforge.dialects.nn.detection import check_positive

ROI_POOLING_METHODS = frozenset({"max", "bilinear"})
PSROI_POOLING_MODES = frozenset({"average", "bilinear"})


def check_feature_and_rois(op: NNOp) -> tuple[int, ...]:
    """The feature map's shape, after checking it is [N, C, H, W] and the ROIs [R, 5]."""
    feature, rois = op.operand_shape(0), op.operand_shape(1)
    if len(feature) != 4:
        raise op.error(f"input must have rank 4 (N, C, H, W), got {len(feature)}")
    if len(rois) != 2 or (known(rois[1]) and rois[1] != 5):
        raise op.error(f"rois must be [R, 5] (batch index, x1, y1, x2, y2), got shape {list(rois)}")
    return feature


def check_at_least(op: NNOp, prop: str, minimum: int) -> int:
    value = op.int_prop(prop)
    if value < minimum:
        raise op.error(f"{prop} must be >= {minimum}, got {value}")
    return value


@irdl_op_definition
class Proposal(NNOp):
    """Faster R-CNN's region proposals for scores [N, 2 * A, H, W] (background then object
    score of each of A anchors), deltas [N, 4 * A, H, W] and image info (height, width,
    scale_h[, scale_w]), 3 or 4 values shared by the batch.

    Anchors (Caffe's generate_anchors, centred on ((base_size - 1) / 2, same)): for each
    ratio r, w0 = round(sqrt(base_size^2 / r)), h0 = round(w0 * r); for each scale s, a box
    w0 * s x h0 * s; A = ratios x scales. At cell (h, w) they move by feat_stride * (w, h).
    An anchor (x1, y1, x2, y2) of width w = x2 - x1 + 1 and centre c = x1 + w / 2 becomes
    c' = c + w * dx / box_coordinate_scale, w' = w * exp(dw / box_size_scale) (same in y),
    the box c' -+ w' / 2; with clip_before_nms clipped to [0, width - 1] x [0, height - 1].
    Boxes narrower or lower than min_size * scale (sizes + 1) are dropped; of the rest, the
    pre_nms_topn best (by object score) go through greedy NMS (IoU with +1 pixel areas above
    nms_thresh suppresses) and the first post_nms_topn are output as rows (image index,
    x1, y1, x2, y2), clipped to [0, width] x [0, height] with clip_after_nms and divided by
    the image size with normalize. Unused rows of an image are 0 but for the first, whose
    image index is -1 (the end marker). Output [N * post_nms_topn, 5]; the optional second
    result (OpenVINO Proposal-4's, py-faster-rcnn's second top) holds each row's object
    score, [N * post_nms_topn], 0 in unused rows.
    """

    name = "nn.proposal"
    class_probs = operand_def(TensorType)
    bbox_deltas = operand_def(TensorType)
    image_shape = operand_def(TensorType)
    output = result_def(TensorType)
    scores = opt_result_def(TensorType)
    base_size = prop_def(IntegerAttr.constr(type=i64))
    pre_nms_topn = prop_def(IntegerAttr.constr(type=i64))
    post_nms_topn = prop_def(IntegerAttr.constr(type=i64))
    nms_thresh = prop_def(FloatAttr)
    feat_stride = prop_def(IntegerAttr.constr(type=i64))
    min_size = prop_def(IntegerAttr.constr(type=i64))
    ratio = prop_def(FloatArrayAttr)
    scale = prop_def(FloatArrayAttr)
    clip_before_nms = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    clip_after_nms = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    normalize = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    box_size_scale = opt_prop_def(FloatAttr, default_value=FloatAttr(1.0, f32))
    box_coordinate_scale = opt_prop_def(FloatAttr, default_value=FloatAttr(1.0, f32))

    def num_anchors(self) -> int:
        return len(self.floats("ratio")) * len(self.floats("scale"))

    def verify_attributes(self) -> None:
        for prop in ("base_size", "pre_nms_topn", "post_nms_topn", "feat_stride"):
            check_at_least(self, prop, 1)
        check_at_least(self, "min_size", 0)
        if not 0 <= self.float_prop("nms_thresh") <= 1:
            raise self.error(f"nms_thresh must be in [0, 1], got {self.float_prop('nms_thresh'):g}")
        for prop in ("ratio", "scale"):
            if not self.floats(prop):
                raise self.error(f"{prop} must not be empty")
            check_positive(self, prop, self.floats(prop))
        for prop in ("box_size_scale", "box_coordinate_scale"):
            if not self.float_prop(prop) > 0:
                raise self.error(f"{prop} must be > 0, got {self.float_prop(prop):g}")

    def check_input(self, index: int, what: str, per_anchor: int) -> tuple[int, ...]:
        shape = self.operand_shape(index)
        channels = per_anchor * self.num_anchors()
        if len(shape) != 4 or (known(shape[1]) and shape[1] != channels):
            raise self.error(f"{what} must be [N, {channels}, H, W] ({per_anchor} per anchor), got shape {list(shape)}")
        return shape

    def infer_shapes(self) -> list[TensorType]:
        scores = self.check_input(0, "class_probs", 2)
        deltas = self.check_input(1, "bbox_deltas", 4)
        for axis in (0, 2, 3):
            if known(scores[axis], deltas[axis]) and scores[axis] != deltas[axis]:
                raise self.error(f"class_probs and bbox_deltas differ in dimension {axis}: {scores[axis]} vs {deltas[axis]}")
        info = self.operand_shape(2)
        values = product(info)
        if not 1 <= len(info) <= 2 or (len(info) == 2 and info[0] != 1) or (known(values) and values not in (3, 4)):
            raise self.error(f"image_shape must hold 3 or 4 values ([3], [4], [1, 3] or [1, 4]), got shape {list(info)}")
        rows = product((scores[0], self.int_prop("post_nms_topn")))
        element = self.operand_type(0).element_type
        return [tensor((rows, 5), element), *([tensor((rows,), element)] if len(self.results) > 1 else [])]


@irdl_op_definition
class ROIPooling(NNOp):
    """Max or bilinear pooling of a feature map [N, C, H, W] over ROIs [R, 5] into
    [R, C, pooled_h, pooled_w] (Fast R-CNN).

    max: the ROI's corners are scaled by spatial_scale and rounded (halves away from 0); the
    ROI, at least 1 x 1 with both ends included, is cut into pooled_h x pooled_w bins, bin
    (ph, pw) spanning rows floor(ph * h / pooled_h) to ceil((ph + 1) * h / pooled_h)
    (exclusive) from its top, clipped to the map; the output is the bin's maximum, 0 if it
    is empty. bilinear: corners are normalised ([0, 1]); output (ph, pw) is the bilinear
    interpolation at y = y1 * (H - 1) + ph * (y2 - y1) * (H - 1) / (pooled_h - 1) (the ROI's
    centre when pooled_h is 1), same in x; 0 outside the map.
    """

    name = "nn.roi_pooling"
    input = operand_def(TensorType)
    rois = operand_def(TensorType)
    output = result_def(TensorType)
    pooled_h = prop_def(IntegerAttr.constr(type=i64))
    pooled_w = prop_def(IntegerAttr.constr(type=i64))
    spatial_scale = prop_def(FloatAttr)
    method = opt_prop_def(StringAttr, default_value=StringAttr("max"))

    STRING_CHOICES: ClassVar = {"method": ROI_POOLING_METHODS}

    def verify_attributes(self) -> None:
        check_at_least(self, "pooled_h", 1)
        check_at_least(self, "pooled_w", 1)
        if not self.float_prop("spatial_scale") > 0:
            raise self.error(f"spatial_scale must be > 0, got {self.float_prop('spatial_scale'):g}")

    def infer_shapes(self) -> list[TensorType]:
        feature = check_feature_and_rois(self)
        rois = self.operand_shape(1)[0]
        shape = (rois, feature[1], self.int_prop("pooled_h"), self.int_prop("pooled_w"))
        return [tensor(shape, self.operand_type(0).element_type)]


@irdl_op_definition
class PSROIPooling(NNOp):
    """Position-sensitive ROI pooling (R-FCN) of score maps [N, C, H, W] over ROIs [R, 5]
    into [R, output_dim, group_size, group_size].

    average (C = output_dim * group_size^2): output (c, i, j) reads only channel
    (c * group_size + i) * group_size + j. The ROI, rounded corners with the far ones + 1,
    times spatial_scale, is cut into group_size x group_size bins; bin (i, j) spans rows
    floor(y1 + i * h / group_size) to ceil(y1 + (i + 1) * h / group_size) (clipped to the
    map, exclusive); the output is its mean, 0 if empty. bilinear (C = output_dim *
    spatial_bins_x * spatial_bins_y): the ROI times spatial_scale is normalised; it is cut
    into spatial_bins_y x spatial_bins_x sub-ROIs, sub-ROI b read from channels
    b * output_dim + c and sampled like ROIPooling's bilinear method on a group_size grid;
    the output averages the sub-ROIs' samples (samples outside the map count 0).
    """

    name = "nn.psroi_pooling"
    input = operand_def(TensorType)
    rois = operand_def(TensorType)
    output = result_def(TensorType)
    output_dim = prop_def(IntegerAttr.constr(type=i64))
    group_size = prop_def(IntegerAttr.constr(type=i64))
    spatial_scale = prop_def(FloatAttr)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("average"))
    spatial_bins_x = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))
    spatial_bins_y = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))

    STRING_CHOICES: ClassVar = {"mode": PSROI_POOLING_MODES}

    def verify_attributes(self) -> None:
        for prop in ("output_dim", "group_size", "spatial_bins_x", "spatial_bins_y"):
            check_at_least(self, prop, 1)
        if not self.float_prop("spatial_scale") > 0:
            raise self.error(f"spatial_scale must be > 0, got {self.float_prop('spatial_scale'):g}")

    def bins_per_channel(self) -> int:
        """Input channels per output channel: one per bin (average) or per sub-ROI."""
        if self.str_prop("mode") == "average":
            return self.int_prop("group_size") ** 2
        return self.int_prop("spatial_bins_x") * self.int_prop("spatial_bins_y")

    def infer_shapes(self) -> list[TensorType]:
        feature = check_feature_and_rois(self)
        channels = self.int_prop("output_dim") * self.bins_per_channel()
        if known(feature[1]) and feature[1] != channels:
            raise self.error(f"input must have output_dim * {self.bins_per_channel()} = {channels} channels in {self.str_prop('mode')} mode, got {feature[1]}")
        group = self.int_prop("group_size")
        shape = (self.operand_shape(1)[0], self.int_prop("output_dim"), group, group)
        return [tensor(shape, self.operand_type(0).element_type)]

