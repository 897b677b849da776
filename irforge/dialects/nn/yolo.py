"""YOLO layers of the IR catalog: RegionYolo (YOLOv2/v3 region heads) and ReorgYolo."""

from __future__ import annotations

from xdsl.dialects.builtin import BoolAttr, IntegerAttr, TensorType, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, result_def

from irforge.dialects.nn.base import DYN, FloatArrayAttr, IntArrayAttr, NNOp, known, normalize_axis, product, tensor


def check_rank4(op: NNOp) -> tuple[int, ...]:
    shape = op.operand_shape(0)
    if len(shape) != 4:
        raise op.error(f"input must have rank 4 (N, C, H, W), got {len(shape)}")
    return shape


@irdl_op_definition
class RegionYolo(NNOp):
    """Activations of a YOLO region head [N, C, H, W], C = regions * (coords + 1 + classes):
    each region's channels are coords box values, an objectness score, then class scores.

    In every region the first two box values (x, y) and the objectness go through a
    sigmoid; the class scores through a softmax over the classes (do_softmax, YOLOv2:
    regions = num) or each through a sigmoid (YOLOv3: regions = len(mask)); the other box
    values (w, h) are unchanged. With do_softmax the result is flattened from axis to
    end_axis (both included), like Caffe's Flatten; without, it keeps the input's shape.
    `anchors` are carried for the post-processing that follows; they change nothing here.
    """

    name = "nn.region_yolo"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    coords = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(4, i64))
    classes = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(20, i64))
    num = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))
    do_softmax = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    mask = opt_prop_def(IntArrayAttr)
    anchors = opt_prop_def(FloatArrayAttr)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))
    end_axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(-1, i64))

    def num_regions(self) -> int:
        return self.int_prop("num") if self.bool_prop("do_softmax") else len(self.ints("mask"))

    def channels_per_region(self) -> int:
        return self.int_prop("coords") + 1 + self.int_prop("classes")

    def verify_attributes(self) -> None:
        # x and y are the first two box values: fewer than 2 would make the objectness one
        for prop, minimum in (("coords", 2), ("classes", 1), ("num", 1)):
            if self.int_prop(prop) < minimum:
                raise self.error(f"{prop} must be >= {minimum}, got {self.int_prop(prop)}")
        mask = self.ints("mask")
        if not self.bool_prop("do_softmax") and not mask:
            raise self.error("mask must not be empty without do_softmax (it selects the regions)")
        if any(not 0 <= m < self.int_prop("num") for m in mask):
            raise self.error(f"mask values must be in [0, num = {self.int_prop('num')}), got {list(mask)}")

    def flattened(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        first = normalize_axis(self, self.int_prop("axis"), len(shape))
        last = normalize_axis(self, self.int_prop("end_axis"), len(shape), "end_axis")
        if last < first:
            raise self.error(f"end_axis {self.int_prop('end_axis')} comes before axis {self.int_prop('axis')}")
        return (*shape[:first], product(shape[first : last + 1]), *shape[last + 1 :])

    def infer_shapes(self) -> list[TensorType]:
        shape = check_rank4(self)
        channels = self.num_regions() * self.channels_per_region()
        if known(shape[1]) and shape[1] != channels:
            what = "num" if self.bool_prop("do_softmax") else "len(mask)"
            raise self.error(f"input must have {what} * (coords + 1 + classes) = {channels} channels, got {shape[1]}")
        out = self.flattened(shape) if self.bool_prop("do_softmax") else shape
        return [tensor(out, self.operand_type(0).element_type)]


@irdl_op_definition
class ReorgYolo(NNOp):
    """YOLOv2's reorg (Darknet's reorg_cpu, run backwards as Darknet's own layer does):
    [N, C, H, W] -> [N, C * s^2, H / s, W / s] for stride s. With the output's elements
    seen as [N, C, H, W], element (n, c, h, w) is element (n, c mod C', h * s + (c div C')
    div s, w * s + (c div C') mod s) of the input's seen as [N, C', H * s, W * s], C' = C / s^2.
    """

    name = "nn.reorg_yolo"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    stride = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))

    def verify_attributes(self) -> None:
        if self.int_prop("stride") < 1:
            raise self.error(f"stride must be >= 1, got {self.int_prop('stride')}")

    def infer_shapes(self) -> list[TensorType]:
        n, c, h, w = check_rank4(self)
        s = self.int_prop("stride")
        if known(c) and c % (s * s):
            raise self.error(f"input channels ({c}) must be a multiple of stride^2 = {s * s}")
        for what, size in (("height", h), ("width", w)):
            if known(size) and size % s:
                raise self.error(f"input {what} ({size}) must be a multiple of stride {s}")
        shape = (n, product((c, s, s)), h // s if known(h) else DYN, w // s if known(w) else DYN)
        return [tensor(shape, self.operand_type(0).element_type)]
