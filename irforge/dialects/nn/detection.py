"""Object-detection layers of the IR catalog: PriorBox, PriorBoxClustered, DetectionOutput.

Prior boxes depend only on the sizes of a feature map [N, C, H, W] and of the image
[N, C, IH, IW]; they come as [1, 2, H * W * P * 4]: channel 0 holds P boxes per cell as
normalised (xmin, ymin, xmax, ymax), channel 1 their variances. DetectionOutput decodes
location predictions against the priors, runs per-class non-maximum suppression and gives
[1, 1, N * keep_top_k, 7] rows (image_id, label, score, xmin, ymin, xmax, ymax).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, FloatAttr, IntegerAttr, StringAttr, TensorType, f32, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from irforge.dialects.nn.base import DYN, FloatArrayAttr, NNOp, Shape, known, product, tensor

CODE_TYPES = frozenset(
    {"caffe.PriorBoxParameter.CORNER", "caffe.PriorBoxParameter.CENTER_SIZE", "caffe.PriorBoxParameter.CORNER_SIZE"}
)


def prior_output(op: NNOp, priors_per_cell: int) -> list[TensorType]:
    """[1, 2, H * W * priors * 4] for a feature map [N, C, H, W] and an image of rank 4."""
    for index, what in ((0, "input"), (1, "image")):
        if len(op.operand_shape(index)) != 4:
            raise op.error(f"{what} must have rank 4 (N, C, H, W), got {len(op.operand_shape(index))}")
    h, w = op.operand_shape(0)[2:]
    return [tensor((1, 2, product((h, w, priors_per_cell, 4))), f32)]


def check_positive(op: NNOp, prop: str, values: tuple[float, ...]) -> None:
    if any(not v > 0 for v in values):
        raise op.error(f"{prop} values must be > 0, got [{', '.join(f'{v:g}' for v in values)}]")


def check_variance(op: NNOp) -> None:
    variance = op.floats("variance")
    if len(variance) not in (0, 1, 4):
        raise op.error(f"variance needs 1 or 4 values, got {len(variance)}")
    check_positive(op, "variance", variance)


class PriorOp(NNOp):
    """Shared operands and properties of the prior-box generators."""

    input = operand_def(TensorType)
    image = operand_def(TensorType)
    output = result_def(TensorType)
    clip = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    offset = opt_prop_def(FloatAttr, default_value=FloatAttr(0.5, f32))
    variance = opt_prop_def(FloatArrayAttr)
    img_h = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))
    img_w = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))

    def variances(self) -> tuple[float, float, float, float]:
        """The four variances (one given value repeats; none given means 0.1, as Caffe)."""
        values = self.floats("variance") or (0.1,)
        return (values * 4)[:4] if len(values) == 1 else values  # type: ignore[return-value]

    def image_size(self, image: Shape) -> tuple[int, int]:
        """(height, width) of the image: img_h/img_w when set, else the image operand's."""
        return self.int_prop("img_h") or image[2], self.int_prop("img_w") or image[3]

    def verify_prior(self) -> None:
        check_variance(self)
        if self.int_prop("img_h") < 0 or self.int_prop("img_w") < 0:
            raise self.error("img_h and img_w must be >= 0")


@irdl_op_definition
class PriorBox(PriorOp):
    """SSD prior boxes. At cell (h, w), the centre is ((w + offset) * step_w, (h + offset) *
    step_h) with step = `step` or else image size / feature size. For each min_size s: a box
    s x s, then (with max_size m) sqrt(s * m) square, then s * sqrt(r) x s / sqrt(r) for each
    aspect ratio r != 1 (duplicates dropped; with flip, 1 / r too). Coordinates are
    (centre -+ size / 2) / image size, clipped to [0, 1] with clip."""

    name = "nn.prior_box"
    min_size = prop_def(FloatArrayAttr)
    max_size = opt_prop_def(FloatArrayAttr)
    aspect_ratio = opt_prop_def(FloatArrayAttr)
    flip = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    step = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))

    def aspect_ratios(self) -> list[float]:
        """1, then each given ratio not yet listed (and its inverse with flip)."""
        ratios = [1.0]
        for r in self.floats("aspect_ratio"):
            if any(abs(r - known_r) < 1e-6 for known_r in ratios):
                continue
            ratios.append(r)
            if self.bool_prop("flip"):
                ratios.append(1.0 / r)
        return ratios

    def priors_per_cell(self) -> int:
        return len(self.aspect_ratios()) * len(self.floats("min_size")) + len(self.floats("max_size"))

    def verify_attributes(self) -> None:
        self.verify_prior()
        minimum, maximum = self.floats("min_size"), self.floats("max_size")
        if not minimum:
            raise self.error("min_size must not be empty")
        check_positive(self, "min_size", minimum)
        check_positive(self, "aspect_ratio", self.floats("aspect_ratio"))
        if maximum and (len(maximum) != len(minimum) or any(m <= s for s, m in zip(minimum, maximum))):
            raise self.error("max_size needs one value per min_size, each larger than it")
        if self.float_prop("step") < 0:
            raise self.error(f"step must be >= 0, got {self.float_prop('step'):g}")

    def infer_shapes(self) -> list[TensorType]:
        return prior_output(self, self.priors_per_cell())


@irdl_op_definition
class PriorBoxClustered(PriorOp):
    """Prior boxes of given sizes: at cell (h, w) with centre ((w + offset) * step_w,
    (h + offset) * step_h) (steps default to image size / feature size), box i spans
    width[i] x height[i]: ((cx -+ width[i] / 2) / IW, (cy -+ height[i] / 2) / IH)."""

    name = "nn.prior_box_clustered"
    width = prop_def(FloatArrayAttr)
    height = prop_def(FloatArrayAttr)
    step_w = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))
    step_h = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))

    def verify_attributes(self) -> None:
        self.verify_prior()
        widths, heights = self.floats("width"), self.floats("height")
        if not widths or len(widths) != len(heights):
            raise self.error(f"width and height need the same, non-zero number of values, got {len(widths)} and {len(heights)}")
        check_positive(self, "width", widths)
        check_positive(self, "height", heights)
        if self.float_prop("step_w") < 0 or self.float_prop("step_h") < 0:
            raise self.error("step_w and step_h must be >= 0")

    def infer_shapes(self) -> list[TensorType]:
        return prior_output(self, len(self.floats("width")))


@irdl_op_definition
class DetectionOutput(NNOp):
    """SSD detection output for location [N, P * L * 4], confidence [N, P * num_classes] and
    priors [1 or N, 2, P * 4] (or [., 1, P * 4] with variance_encoded_in_target); L is 1 with
    share_location, else num_classes.

    Per image: boxes are decoded from the priors by code_type (CENTER_SIZE: centre
    p_c + d_c * var * p_size, size exp(d_size * var) * p_size; CORNER: p + d * var;
    CORNER_SIZE: corners p + d * var * p_size; var = 1 when variance_encoded_in_target). For
    each class but background_label_id, the boxes scoring above confidence_threshold, best
    first and at most top_k of them (-1: all), are kept unless their IoU with a box kept
    before exceeds nms_threshold. Of all kept, the keep_top_k best (-1: all) are output,
    ordered by label, then score. With clip_before_nms the decoded boxes are clipped to
    [0, 1] before NMS (Caffe-SSD's `clip`), with clip_after_nms only the output boxes. Rows: (image_id, label, score, xmin, ymin, xmax, ymax);
    unused rows are (-1, 0, 0, 0, 0, 0, 0). Output rows: N * keep_top_k (if > 0), else
    N * top_k (if > 0), else N * P * num_classes.
    """

    name = "nn.detection_output"
    # OpenVINO's operand names (`location` is taken by xDSL's source locations)
    box_logits = operand_def(TensorType)
    class_preds = operand_def(TensorType)
    proposals = operand_def(TensorType)
    output = result_def(TensorType)
    num_classes = prop_def(IntegerAttr.constr(type=i64))
    background_label_id = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))
    top_k = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(-1, i64))
    keep_top_k = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(-1, i64))
    code_type = opt_prop_def(StringAttr, default_value=StringAttr("caffe.PriorBoxParameter.CORNER"))
    share_location = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    variance_encoded_in_target = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    nms_threshold = prop_def(FloatAttr)
    confidence_threshold = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))
    clip_before_nms = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    clip_after_nms = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    STRING_CHOICES: ClassVar = {"code_type": CODE_TYPES}

    def location_classes(self) -> int:
        return 1 if self.bool_prop("share_location") else self.int_prop("num_classes")

    def verify_attributes(self) -> None:
        classes = self.int_prop("num_classes")
        if classes < 1:
            raise self.error(f"num_classes must be >= 1, got {classes}")
        if not -1 <= self.int_prop("background_label_id") < classes:
            raise self.error(f"background_label_id must be -1 or a class below {classes}, got {self.int_prop('background_label_id')}")
        for prop in ("top_k", "keep_top_k"):
            if self.int_prop(prop) == 0 or self.int_prop(prop) < -1:
                raise self.error(f"{prop} must be -1 or positive, got {self.int_prop(prop)}")
        if not 0 <= self.float_prop("nms_threshold") <= 1:
            raise self.error(f"nms_threshold must be in [0, 1], got {self.float_prop('nms_threshold'):g}")

    def rows_per_image(self, num_priors: int) -> int:
        for prop in ("keep_top_k", "top_k"):
            if self.int_prop(prop) > 0:
                return self.int_prop(prop)
        return product((num_priors, self.int_prop("num_classes")))

    def num_priors(self) -> int:
        priors = self.operand_shape(2)
        if len(priors) != 3:
            raise self.error(f"priors must have rank 3 ([1 or N, 2, P * 4]), got {len(priors)}")
        rows = (1, 2) if self.bool_prop("variance_encoded_in_target") else (2,)
        if known(priors[1]) and priors[1] not in rows:
            raise self.error(f"priors must have {' or '.join(map(str, rows))} rows (boxes, variances), got {priors[1]}")
        if known(priors[2]) and priors[2] % 4:
            raise self.error(f"priors hold {priors[2]} values, not a multiple of 4")
        return priors[2] // 4 if known(priors[2]) else DYN

    def check_predictions(self, index: int, what: str, per_prior: int, num_priors: int) -> None:
        shape = self.operand_shape(index)
        values = product(shape[1:])
        expected = product((num_priors, per_prior))
        if len(shape) < 2 or (known(values, expected) and values != expected):
            raise self.error(f"{what} must hold {per_prior} values per prior ({expected} per image), got shape {list(shape)}")

    def infer_shapes(self) -> list[TensorType]:
        num_priors = self.num_priors()
        self.check_predictions(0, "location", 4 * self.location_classes(), num_priors)
        self.check_predictions(1, "confidence", self.int_prop("num_classes"), num_priors)
        batch = self.operand_shape(0)[0]
        if known(batch, self.operand_shape(1)[0]) and batch != self.operand_shape(1)[0]:
            raise self.error(f"location and confidence batch sizes differ: {batch} vs {self.operand_shape(1)[0]}")
        rows = product((batch, self.rows_per_image(num_priors)))
        return [tensor((1, 1, rows, 7), self.operand_type(0).element_type)]
