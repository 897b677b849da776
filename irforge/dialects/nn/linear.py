"""Linear ops: FullyConnected, MatMul, ScaleShift, BatchNormalization (inference) and Power.

FullyConnected and MatMul contract the last axis; ScaleShift and BatchNormalization are
per-channel affine maps (foldable into a preceding FullyConnected or Convolution); Power is
the element-wise scale * x^power + shift of the Model Optimizer.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, FloatAttr, IntegerAttr, TensorType, f32, i64
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, result_def

from irforge.dialects.nn.activation import UnaryNNOp
from irforge.dialects.nn.base import NNOp, Shape, broadcast_shapes, known, normalize_axis, tensor


def show(dims: Shape) -> str:
    """A shape as `[2, ?, 4]` (`?` where dynamic)."""
    return "[" + ", ".join(str(d) if known(d) else "?" for d in dims) + "]"


def check_vector(op: NNOp, index: int, what: str, size: int) -> None:
    """Operand `index` must be 1-D with `size` values (either may be dynamic)."""
    shape = op.operand_shape(index)
    if len(shape) == 1 and (not known(shape[0], size) or shape[0] == size):
        return
    raise op.error(f"{what} must have shape {show((size,))}, got {show(shape)}")


def check_rank(op: NNOp, what: str, shape: Shape, minimum: int, layout: str = "") -> None:
    if len(shape) < minimum:
        raise op.error(f"{what} must have rank >= {minimum}{layout}, got {len(shape)}")


@irdl_op_definition
class FullyConnected(NNOp):
    """y[..., o] = sum over k of x[..., k] * w[o, k] + b[o]  (y = x @ W^T + b).

    The input's last axis holds the K features; weights are [O, K] and the bias [O].
    """

    name = "nn.fully_connected"
    SAME_ELEMENT_TYPE: ClassVar = ('input', 'weights', 'bias')
    input = operand_def(TensorType)
    weights = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        x, w = self.operand_shape(0), self.operand_shape(1)
        check_rank(self, "input", x, 1)
        if len(w) != 2:
            raise self.error(f"weights must have rank 2 ([out, in]), got {len(w)}")
        if known(x[-1], w[1]) and x[-1] != w[1]:
            raise self.error(f"input has {x[-1]} features but weights expect {w[1]}")
        if self.bias is not None:
            check_vector(self, 2, "bias", w[0])
        return [tensor((*x[:-1], w[0]), self.operand_type(0).element_type)]


@irdl_op_definition
class MatMul(NNOp):
    """y = op(a) @ op(b) with numpy matmul semantics, op = swap of the last two axes when
    transpose_a / transpose_b is set (ignored for 1-D operands).

    A 1-D a is a row [1, K] and a 1-D b a column [K, 1], whose added axis is then dropped;
    the axes before the last two broadcast: y[*batch, m, n] = sum over k of a[*batch, m, k] *
    b[*batch, k, n].
    """

    name = "nn.matmul"
    SAME_ELEMENT_TYPE: ClassVar = ('a', 'b')
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    output = result_def(TensorType)
    transpose_a = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    transpose_b = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    def matrix(self, index: int, prop: str) -> Shape:
        """Operand `index` as a (batch..., rows, cols) shape after its transpose."""
        shape = self.operand_shape(index)
        check_rank(self, "a" if index == 0 else "b", shape, 1)
        if len(shape) == 1:
            return (1, shape[0]) if index == 0 else (shape[0], 1)
        if self.bool_prop(prop):
            return (*shape[:-2], shape[-1], shape[-2])
        return shape

    def infer_shapes(self) -> list[TensorType]:
        a, b = self.matrix(0, "transpose_a"), self.matrix(1, "transpose_b")
        if known(a[-1], b[-2]) and a[-1] != b[-2]:
            raise self.error(
                f"a has {a[-1]} columns but b has {b[-2]} rows "
                f"(after transpose_a={self.bool_prop('transpose_a')}, "
                f"transpose_b={self.bool_prop('transpose_b')})"
            )
        batch = broadcast_shapes(self, a[:-2], b[:-2])
        rows = (a[-2],) if len(self.operand_shape(0)) > 1 else ()
        cols = (b[-1],) if len(self.operand_shape(1)) > 1 else ()
        return [tensor((*batch, *rows, *cols), self.operand_type(0).element_type)]


@irdl_op_definition
class ScaleShift(NNOp):
    """y = x * scale[c] + shift[c], where c is the index along `axis` (default 1, may be
    negative); scale and shift hold one value per element of that axis."""

    name = "nn.scale_shift"
    SAME_ELEMENT_TYPE: ClassVar = ('input', 'scale', 'shift')
    input = operand_def(TensorType)
    scale = operand_def(TensorType)
    shift = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))

    def channel_axis(self) -> int:
        return normalize_axis(self, self.int_prop("axis"), len(self.operand_shape(0)))

    def verify_attributes(self) -> None:
        self.channel_axis()

    def infer_shapes(self) -> list[TensorType]:
        channels = self.operand_shape(0)[self.channel_axis()]
        check_vector(self, 1, "scale", channels)
        check_vector(self, 2, "shift", channels)
        return [self.operand_type(0)]


@irdl_op_definition
class BatchNormalization(NNOp):
    """Inference batch normalization over the channel axis 1 of an [N, C, ...] input:
    y = gamma[c] * (x - mean[c]) / sqrt(variance[c] + epsilon) + beta[c]."""

    name = "nn.batch_norm"
    SAME_ELEMENT_TYPE: ClassVar = ('input', 'gamma', 'beta', 'mean', 'variance')
    input = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    output = result_def(TensorType)
    epsilon = opt_prop_def(FloatAttr, default_value=FloatAttr(1e-5, f32))

    def verify_attributes(self) -> None:
        if not self.float_prop("epsilon") > 0:
            raise self.error(f"epsilon must be > 0, got {self.float_prop('epsilon'):g}")

    def infer_shapes(self) -> list[TensorType]:
        x = self.operand_shape(0)
        check_rank(self, "input", x, 2, " (N, C, ...)")
        for index, what in enumerate(("gamma", "beta", "mean", "variance"), start=1):
            check_vector(self, index, what, x[1])
        return [self.operand_type(0)]


@irdl_op_definition
class Power(UnaryNNOp):
    """y = scale * x^power + shift, element by element."""

    name = "nn.power"
    power = opt_prop_def(FloatAttr, default_value=FloatAttr(1.0, f32))
    scale = opt_prop_def(FloatAttr, default_value=FloatAttr(1.0, f32))
    shift = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))
