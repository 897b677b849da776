"""Normalisations: SoftMax, LRN (Norm), MVN, Normalize (SSD L2) and GRN.

All of them keep the shape and element type of their input.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, FloatAttr, IntegerAttr, StringAttr, TensorType, f32, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, prop_def, result_def

from irforge.dialects.nn.activation import UnaryNNOp
from irforge.dialects.nn.base import IntArrayAttr, NNOp, normalize_axis
from irforge.dialects.nn.linear import check_rank, check_vector

LRN_REGIONS = frozenset({"across", "same"})
EPS_MODES = frozenset({"inside_sqrt", "outside_sqrt"})


def check_non_negative(op: NNOp, prop: str) -> None:
    value = op.float_prop(prop)
    if not value >= 0:
        raise op.error(f"{prop} must be >= 0, got {value:g}")


@irdl_op_definition
class SoftMax(UnaryNNOp):
    """y = exp(x) / sum over `axis` of exp(x); with `log`, y = x - log(sum over `axis` of
    exp(x)) (log-softmax). `axis` defaults to 1 and may be negative."""

    name = "nn.softmax"
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))
    log = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    def softmax_axis(self) -> int:
        return normalize_axis(self, self.int_prop("axis"), len(self.operand_shape(0)))

    def verify_attributes(self) -> None:
        self.softmax_axis()


@irdl_op_definition
class Norm(UnaryNNOp):
    """Local response normalization (ONNX LRN), over an [N, C, ...] input:

    y = x / (bias + alpha / n * sum over the window of x^2)^beta.

    The window around an element spans `size` positions per windowed axis, from
    floor((size - 1) / 2) before it to ceil((size - 1) / 2) after it, clipped to the input.
    region "across": the channel axis only, n = size. region "same": every spatial axis
    (2, 3, ...) within a channel, n = size^(number of spatial axes).
    """

    name = "nn.lrn"
    alpha = opt_prop_def(FloatAttr, default_value=FloatAttr(1e-4, f32))
    beta = opt_prop_def(FloatAttr, default_value=FloatAttr(0.75, f32))
    bias = opt_prop_def(FloatAttr, default_value=FloatAttr(1.0, f32))
    size = prop_def(IntegerAttr.constr(type=i64))
    region = opt_prop_def(StringAttr, default_value=StringAttr("across"))

    STRING_CHOICES: ClassVar = {"region": LRN_REGIONS}

    def window_axes(self) -> tuple[int, ...]:
        """The axes the window spans."""
        if self.str_prop("region") == "across":
            return (1,)
        return tuple(range(2, len(self.operand_shape(0))))

    def window_extent(self) -> tuple[int, int]:
        """How many positions the window reaches before and after its centre."""
        size = self.int_prop("size")
        return (size - 1) // 2, size // 2

    def verify_attributes(self) -> None:
        if self.int_prop("size") < 1:
            raise self.error(f"size must be >= 1, got {self.int_prop('size')}")

    def infer_shapes(self) -> list[TensorType]:
        if self.str_prop("region") == "across":
            check_rank(self, "input", self.operand_shape(0), 2, " (N, C, ...)")
        else:
            check_rank(self, "input", self.operand_shape(0), 3, " (N, C, spatial...) for region same")
        return [self.operand_type(0)]


@irdl_op_definition
class MVN(UnaryNNOp):
    """Mean-variance normalization over `axes` (mean and variance per slice of the others):

    y = (x - mean) / sqrt(variance + eps)    (eps_mode inside_sqrt, the default)
    y = (x - mean) / (sqrt(variance) + eps)  (eps_mode outside_sqrt)
    y = x - mean                             (normalize_variance false)

    with mean and variance (the biased one, mean of squared deviations) over `axes`.
    """

    name = "nn.mvn"
    axes = prop_def(IntArrayAttr)
    normalize_variance = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    eps = opt_prop_def(FloatAttr, default_value=FloatAttr(1e-9, f32))
    eps_mode = opt_prop_def(StringAttr, default_value=StringAttr("inside_sqrt"))

    STRING_CHOICES: ClassVar = {"eps_mode": EPS_MODES}

    def reduced_axes(self) -> tuple[int, ...]:
        """The normalised axes, non-negative and sorted."""
        given = self.ints("axes")
        if not given:
            raise self.error("axes must not be empty")
        rank = len(self.operand_shape(0))
        axes = [normalize_axis(self, a, rank, "axes") for a in given]
        repeated = sorted({a for a in axes if axes.count(a) > 1})
        if repeated:
            raise self.error(f"axes names axis {repeated[0]} more than once, got {list(given)}")
        return tuple(sorted(axes))

    def verify_attributes(self) -> None:
        check_non_negative(self, "eps")
        self.reduced_axes()


@irdl_op_definition
class Normalize(NNOp):
    """SSD-style L2 normalization of an [N, C, ...] input:

    y = x / sqrt(sum of x^2 + eps) * scale[c],

    the sum running over the channels C at each position (across_spatial false) or over all
    of C, H, W, ... per sample (across_spatial true). The optional scale holds one value per
    channel, or a single value when channel_shared.
    """

    name = "nn.normalize"
    input = operand_def(TensorType)
    scale = opt_operand_def(TensorType)
    output = result_def(TensorType)
    across_spatial = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    channel_shared = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    eps = opt_prop_def(FloatAttr, default_value=FloatAttr(1e-10, f32))

    def norm_axes(self) -> tuple[int, ...]:
        """The axes the squares are summed over."""
        if self.bool_prop("across_spatial"):
            return tuple(range(1, len(self.operand_shape(0))))
        return (1,)

    def verify_attributes(self) -> None:
        check_non_negative(self, "eps")

    def infer_shapes(self) -> list[TensorType]:
        x = self.operand_shape(0)
        check_rank(self, "input", x, 2, " (N, C, ...)")
        if self.scale is not None:
            check_vector(self, 1, "scale", 1 if self.bool_prop("channel_shared") else x[1])
        return [self.operand_type(0)]


@irdl_op_definition
class GRN(UnaryNNOp):
    """Global response normalization over the channels of an [N, C, ...] input:
    y = x / sqrt(sum over C of x^2 + bias)."""

    name = "nn.grn"
    bias = opt_prop_def(FloatAttr, default_value=FloatAttr(1.0, f32))

    def verify_attributes(self) -> None:
        check_non_negative(self, "bias")

    def infer_shapes(self) -> list[TensorType]:
        check_rank(self, "input", self.operand_shape(0), 2, " (N, C, ...)")
        return [self.operand_type(0)]
