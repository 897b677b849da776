"""Box ops of the ONNX/torchvision detection heads: ROIAlign and NonMaxSuppression.

ROIs travel as [R, 4] (x1, y1, x2, y2) with a separate [R] batch index, as ONNX's RoiAlign and
OpenVINO's ROIAlign-9 take them. NonMaxSuppression's output size depends on the data: its
first dim is dynamic (`?`), as in OpenVINO's NonMaxSuppression-9.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, FloatAttr, IntegerAttr, StringAttr, TensorType, f32, i32, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from irforge.dialects.nn.base import DYN, NNOp, known, tensor

ROI_ALIGN_MODES = frozenset({"half_pixel", "asymmetric"})
"""half_pixel: ROI corners shifted by -0.5 after scaling (ONNX's half_pixel, torchvision's
aligned=True); asymmetric: not shifted, the ROI at least 1 x 1 (ONNX's output_half_pixel)."""


@irdl_op_definition
class ROIAlign(NNOp):
    """Average of bilinear samples of a feature map [N, C, H, W] over each ROI [R, 4] (of
    image batch_indices[r]) into [R, C, pooled_h, pooled_w] (Mask R-CNN's RoIAlign).

    Each bin takes sampling_ratio x sampling_ratio samples (0: ceil(roi size / pooled size)
    per direction) at the centres of a regular grid; a sample beyond one pixel outside the
    map counts as 0, others are clamped to the map. mode "max" instead takes, per bin, the
    largest of its samples' weighted corner terms (w_i * v_i of the 4 bilinear neighbours, not
    their sum): onnxruntime's RoiAlign max mode, which OpenVINO's ROIAlign-9 max mode does not
    reproduce.
    """

    name = "nn.roi_align"
    input = operand_def(TensorType)
    rois = operand_def(TensorType)
    batch_indices = operand_def(TensorType)
    output = result_def(TensorType)
    pooled_h = prop_def(IntegerAttr.constr(type=i64))
    pooled_w = prop_def(IntegerAttr.constr(type=i64))
    spatial_scale = opt_prop_def(FloatAttr, default_value=FloatAttr(1.0, f32))
    sampling_ratio = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))
    aligned_mode = opt_prop_def(StringAttr, default_value=StringAttr("half_pixel"))
    mode = opt_prop_def(StringAttr, default_value=StringAttr("avg"))

    STRING_CHOICES: ClassVar = {"aligned_mode": ROI_ALIGN_MODES, "mode": frozenset({"avg", "max"})}

    def verify_attributes(self) -> None:
        for prop in ("pooled_h", "pooled_w"):
            if self.int_prop(prop) < 1:
                raise self.error(f"{prop} must be >= 1, got {self.int_prop(prop)}")
        if self.int_prop("sampling_ratio") < 0:
            raise self.error(f"sampling_ratio must be >= 0, got {self.int_prop('sampling_ratio')}")

    def infer_shapes(self) -> list[TensorType]:
        feature, rois, batch = self.operand_shape(0), self.operand_shape(1), self.operand_shape(2)
        if len(feature) != 4:
            raise self.error(f"input must have rank 4 (N, C, H, W), got {len(feature)}")
        if len(rois) != 2 or (known(rois[1]) and rois[1] != 4):
            raise self.error(f"rois must be [R, 4] (x1, y1, x2, y2), got shape {list(rois)}")
        if len(batch) != 1 or (known(batch[0], rois[0]) and batch[0] != rois[0]):
            raise self.error(f"batch_indices must be [R] for rois {list(rois)}, got shape {list(batch)}")
        if self.operand_type(2).element_type not in (i32, i64):
            raise self.error("batch_indices must be i32 or i64")
        out = (rois[0], feature[1], self.int_prop("pooled_h"), self.int_prop("pooled_w"))
        return [tensor(out, self.operand_type(0).element_type)]


@irdl_op_definition
class NonMaxSuppression(NNOp):
    """Per image and class, boxes [N, B, 4] by descending score (scores [N, C, B]) kept when
    their score exceeds score_threshold and their IoU with every box kept before is at most
    iou_threshold, at most max_output_boxes_per_class of them: the i64 rows (image, class,
    box) of those kept, image by image, class by class, in the order kept (ONNX's
    NonMaxSuppression). Boxes are corners (y1, x1, y2, x2, either order) or, with
    center_point_box, (x_center, y_center, width, height)."""

    name = "nn.non_max_suppression"
    boxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    output = result_def(TensorType)
    max_output_boxes_per_class = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))
    iou_threshold = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))
    score_threshold = opt_prop_def(FloatAttr, default_value=FloatAttr(float("-inf"), f32))
    center_point_box = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    def infer_shapes(self) -> list[TensorType]:
        boxes, scores = self.operand_shape(0), self.operand_shape(1)
        if len(boxes) != 3 or (known(boxes[2]) and boxes[2] != 4):
            raise self.error(f"boxes must be [N, B, 4], got shape {list(boxes)}")
        if len(scores) != 3 or any(known(a, b) and a != b for a, b in ((boxes[0], scores[0]), (boxes[1], scores[2]))):
            raise self.error(f"scores must be [N, C, B] for boxes {list(boxes)}, got shape {list(scores)}")
        return [tensor((DYN, 3), i64)]
