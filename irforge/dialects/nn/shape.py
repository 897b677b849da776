"""Data movement ops that change shapes but not values: Concat, Split, Reshape, Flatten,
Permute, Squeeze, Unsqueeze, Slice (also Crop), Tile, Pad and Gather.

Shape-like parameters are properties (importers fold constant shape inputs into them). Every
op keeps the element type of its data input, whatever it is (float, integer or i1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    f32,
    i32,
    i64,
)
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)

from irforge.dialects.nn.base import (
    DYN,
    IntArrayAttr,
    NNOp,
    Shape,
    known,
    normalize_axis,
    product,
    tensor,
)

PAD_MODES = frozenset({"constant", "edge", "reflect", "symmetric"})
"""`nn.pad` modes: constant (`value`), edge (repeat the border element), reflect (mirror
without repeating the border: 3 2 | 1 2 3 | 2 1) and symmetric (mirror with it: 2 1 | 1 2 3)."""


def show(dims: Sequence[int]) -> str:
    """A shape as `[2, ?, 4]` (`?` where dynamic)."""
    return "[" + ", ".join(str(d) if known(d) else "?" for d in dims) + "]"


def unique_axes(op: NNOp, axes: Sequence[int], rank: int, prop: str = "axes") -> tuple[int, ...]:
    """`axes` made non-negative for `rank`; each axis may be named once."""
    normalized = [normalize_axis(op, a, rank, prop) for a in axes]
    repeated = sorted({a for a in normalized if normalized.count(a) > 1})
    if repeated:
        raise op.error(f"{prop} names axis {repeated[0]} more than once, got {list(axes)}")
    return tuple(normalized)


def merge_dims(sizes: Sequence[int]) -> int | None:
    """The size that all of `sizes` stand for (DYN where none is known), None if they differ."""
    known_sizes = {d for d in sizes if known(d)}
    if len(known_sizes) > 1:
        return None
    return known_sizes.pop() if known_sizes else DYN


def slice_bounds(size: int, begin: int, end: int, step: int) -> tuple[int, int]:
    """Start and stop of `begin:end:step` over `size` elements as in ONNX Slice: negative
    values count from the end, then both are clamped to [0, size] for a positive step and to
    [0, size - 1] (start) and [-1, size - 1] (stop) for a negative one."""
    if size == 0:
        return 0, 0
    begin = begin + size if begin < 0 else begin
    end = end + size if end < 0 else end
    if step > 0:
        return max(0, min(begin, size)), max(0, min(end, size))
    return max(0, min(begin, size - 1)), max(-1, min(end, size - 1))


def slice_length(start: int, stop: int, step: int) -> int:
    """Number of elements of `start:stop:step` (bounds already clamped)."""
    return max(0, -(-(stop - start) // step))


@irdl_op_definition
class Concat(NNOp):
    """out = the inputs joined along `axis` (negative counts from the end).

    All inputs have the same rank and element type, and the same sizes outside `axis`; the
    output size along `axis` is the sum of theirs.
    """

    name = "nn.concat"
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))

    def verify_attributes(self) -> None:
        if not self.inputs:
            raise self.error("needs at least one input")

    def infer_shapes(self) -> list[TensorType]:
        first = self.operand_type(0)
        shapes = [self.operand_shape(i) for i in range(len(self.inputs))]
        rank = len(shapes[0])
        axis = normalize_axis(self, self.int_prop("axis"), rank)
        for i, shape in enumerate(shapes):
            if self.operand_type(i).element_type != first.element_type:
                raise self.error(
                    f"input #{i} has element type {self.operand_type(i).element_type}, "
                    f"expected {first.element_type}"
                )
            if len(shape) != rank:
                raise self.error(f"input #{i} has rank {len(shape)}, expected {rank}")
        out = []
        for d in range(rank):
            column = [shape[d] for shape in shapes]
            size = (sum(column) if known(*column) else DYN) if d == axis else merge_dims(column)
            if size is None:
                shown = ", ".join(show(s) for s in shapes)
                raise self.error(f"input shapes {shown} differ outside axis {axis}")
            out.append(size)
        return [tensor(out, first.element_type)]


@irdl_op_definition
class Split(NNOp):
    """outputs[k] = input[..., o_k : o_k + split_lengths[k], ...] along `axis`, where o_k is
    the sum of the lengths before k; the lengths sum to the size of `axis`."""

    name = "nn.split"
    input = operand_def(TensorType)
    outputs = var_result_def(TensorType)
    axis = prop_def(IntegerAttr.constr(type=i64))
    split_lengths = prop_def(IntArrayAttr)

    def verify_attributes(self) -> None:
        lengths = self.ints("split_lengths")
        if not lengths:
            raise self.error("split_lengths must not be empty")
        if any(n < 0 for n in lengths):
            raise self.error(f"split_lengths must be >= 0, got {list(lengths)}")

    def infer_shapes(self) -> list[TensorType]:
        shape = self.operand_shape(0)
        axis = normalize_axis(self, self.int_prop("axis"), len(shape))
        lengths = self.ints("split_lengths")
        if known(shape[axis]) and sum(lengths) != shape[axis]:
            raise self.error(
                f"split_lengths {list(lengths)} sum to {sum(lengths)}, "
                f"but axis {axis} has size {shape[axis]}"
            )
        element = self.operand_type(0).element_type
        return [tensor(shape[:axis] + (n,) + shape[axis + 1 :], element) for n in lengths]


@irdl_op_definition
class Reshape(NNOp):
    """out = the input's elements (in row-major order) in a new shape.

    In `shape`, -1 (at most once) is the size that keeps the element count; 0 copies the
    input size at the same index when special_zero, else it is a size of 0.
    """

    name = "nn.reshape"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    shape = prop_def(IntArrayAttr)
    special_zero = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))

    def verify_attributes(self) -> None:
        spec = self.ints("shape")
        if any(v < -1 for v in spec) or spec.count(-1) > 1:
            raise self.error(f"shape values must be >= -1 with at most one -1, got {list(spec)}")
        if not self.bool_prop("special_zero") and -1 in spec and 0 in spec:
            raise self.error(f"shape cannot hold both -1 and a size 0, got {list(spec)}")

    def target_shape(self, in_shape: Shape) -> Shape:
        """The output shape for an input of `in_shape` (DYN where it depends on run time)."""
        spec = self.ints("shape")
        copied = {i for i, v in enumerate(spec) if v == 0 and self.bool_prop("special_zero")}
        if any(i >= len(in_shape) for i in copied):
            raise self.error(f"shape {list(spec)} copies a dim (0) beyond the input rank {len(in_shape)}")
        out = [in_shape[i] if i in copied else v for i, v in enumerate(spec)]
        # copied sizes appear on both sides: leave them out, they may be dynamic
        rest_in = product(d for i, d in enumerate(in_shape) if i not in copied)
        rest_out = product(v for i, v in enumerate(spec) if i not in copied and v != -1)
        if -1 in spec:
            fits = not known(rest_in) or rest_in % rest_out == 0
            out[spec.index(-1)] = rest_in // rest_out if known(rest_in) and fits else DYN
        else:
            fits = not known(rest_in) or rest_in == rest_out
        if not fits:
            raise self.error(f"shape {list(spec)} cannot hold the elements of input {show(in_shape)}")
        return tuple(out)

    def infer_shapes(self) -> list[TensorType]:
        return [tensor(self.target_shape(self.operand_shape(0)), self.operand_type(0).element_type)]


@irdl_op_definition
class Flatten(NNOp):
    """out = the input as a matrix [prod(dims[:axis]), prod(dims[axis:])] (ONNX Flatten);
    `axis` is in [-rank, rank], negative counting from the end."""

    name = "nn.flatten"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))

    def flatten_axis(self) -> int:
        rank, axis = len(self.operand_shape(0)), self.int_prop("axis")
        if not -rank <= axis <= rank:
            raise self.error(f"axis {axis} is out of range [{-rank}, {rank}] for rank {rank}")
        return axis + rank if axis < 0 else axis

    def infer_shapes(self) -> list[TensorType]:
        shape, axis = self.operand_shape(0), self.flatten_axis()
        out = (product(shape[:axis]), product(shape[axis:]))
        return [tensor(out, self.operand_type(0).element_type)]


@irdl_op_definition
class Permute(NNOp):
    """Transpose: out[i_0, ..., i_{r-1}] = x[j] with j[order[k]] = i_k, so output dim k is
    input dim order[k]."""

    name = "nn.permute"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    order = prop_def(IntArrayAttr)

    def infer_shapes(self) -> list[TensorType]:
        shape, order = self.operand_shape(0), self.ints("order")
        if sorted(order) != list(range(len(shape))):
            raise self.error(f"order must be a permutation of 0..{len(shape) - 1}, got {list(order)}")
        return [tensor((shape[k] for k in order), self.operand_type(0).element_type)]


@irdl_op_definition
class Squeeze(NNOp):
    """out = the input without the size-1 dims named by `axes` (negative from the end).

    Without `axes` (or with an empty list), all dims of size 1 in the input type are removed;
    dynamic dims are kept. A dynamic dim named by `axes` must be 1 at run time.
    """

    name = "nn.squeeze"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axes = opt_prop_def(IntArrayAttr)

    def squeezed_axes(self) -> tuple[int, ...]:
        shape = self.operand_shape(0)
        if not self.ints("axes"):
            return tuple(i for i, d in enumerate(shape) if d == 1)
        axes = unique_axes(self, self.ints("axes"), len(shape))
        for a in axes:
            if known(shape[a]) and shape[a] != 1:
                raise self.error(f"axes names dim {a} of size {shape[a]}, which is not 1")
        return axes

    def infer_shapes(self) -> list[TensorType]:
        axes = self.squeezed_axes()
        shape = (d for i, d in enumerate(self.operand_shape(0)) if i not in axes)
        return [tensor(shape, self.operand_type(0).element_type)]


@irdl_op_definition
class Unsqueeze(NNOp):
    """out = the input with size-1 dims inserted at `axes`, positions in the output
    (rank + len(axes) dims; negative counts from its end)."""

    name = "nn.unsqueeze"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axes = prop_def(IntArrayAttr)

    def verify_attributes(self) -> None:
        if not self.ints("axes"):
            raise self.error("axes must not be empty")

    def expanded_shape(self, in_shape: Shape) -> Shape:
        rank = len(in_shape) + len(self.ints("axes"))
        axes = unique_axes(self, self.ints("axes"), rank)
        dims = iter(in_shape)
        return tuple(1 if i in axes else next(dims) for i in range(rank))

    def infer_shapes(self) -> list[TensorType]:
        out = self.expanded_shape(self.operand_shape(0))
        return [tensor(out, self.operand_type(0).element_type)]


@irdl_op_definition
class Slice(NNOp):
    """out = x[begins[k]:ends[k]:steps[k]] along axes[k] (ONNX Slice; also Crop).

    `axes` defaults to 0..len(begins)-1 and `steps` to all 1. Negative begins/ends count from
    the end; they are then clamped (see `slice_bounds`), so INT64 max/min mean "to the end"
    (to the start for a negative step). Unnamed axes are kept whole.
    """

    name = "nn.slice"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    begins = prop_def(IntArrayAttr)
    ends = prop_def(IntArrayAttr)
    axes = opt_prop_def(IntArrayAttr)
    steps = opt_prop_def(IntArrayAttr)

    def verify_attributes(self) -> None:
        n = len(self.ints("begins"))
        for prop in ("ends", "axes", "steps"):
            count = len(self.ints(prop))
            if count != n and (prop == "ends" or getattr(self, prop) is not None):
                raise self.error(f"{prop} needs {n} values (one per begin), got {count}")
        if 0 in self.ints("steps"):
            raise self.error(f"steps must not be 0, got {list(self.ints('steps'))}")

    def slice_specs(self) -> dict[int, tuple[int, int, int]]:
        """(begin, end, step) by sliced axis."""
        rank, begins = len(self.operand_shape(0)), self.ints("begins")
        if self.axes is None and len(begins) > rank:
            raise self.error(f"begins has {len(begins)} values, more than the input rank {rank}")
        given = self.ints("axes") if self.axes is not None else range(len(begins))
        axes = unique_axes(self, given, rank)
        steps = self.ints("steps") or (1,) * len(begins)
        return {a: spec for a, spec in zip(axes, zip(begins, self.ints("ends"), steps))}

    def bounds(self, in_shape: Shape) -> list[tuple[int, int, int]]:
        """(start, stop, step) per dim of a known `in_shape`, clamped as in ONNX Slice."""
        specs = self.slice_specs()
        out = []
        for axis, size in enumerate(in_shape):
            begin, end, step = specs.get(axis, (0, size, 1))
            out.append((*slice_bounds(size, begin, end, step), step))
        return out

    def infer_shapes(self) -> list[TensorType]:
        specs, out = self.slice_specs(), list(self.operand_shape(0))
        for axis, (begin, end, step) in specs.items():
            if known(out[axis]):
                out[axis] = slice_length(*slice_bounds(out[axis], begin, end, step), step)
        return [tensor(out, self.operand_type(0).element_type)]


@irdl_op_definition
class Tile(NNOp):
    """out = x repeated repeats[k] times along each dim k (ONNX Tile: one value per dim),
    so out[i] = x[i mod dims]."""

    name = "nn.tile"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    repeats = prop_def(IntArrayAttr)

    def verify_attributes(self) -> None:
        if any(r < 0 for r in self.ints("repeats")):
            raise self.error(f"repeats must be >= 0, got {list(self.ints('repeats'))}")

    def infer_shapes(self) -> list[TensorType]:
        shape, repeats = self.operand_shape(0), self.ints("repeats")
        if len(repeats) != len(shape):
            raise self.error(f"repeats needs {len(shape)} values (one per dim), got {len(repeats)}")
        out = (0 if r == 0 else product((d, r)) for d, r in zip(shape, repeats))
        return [tensor(out, self.operand_type(0).element_type)]


@irdl_op_definition
class Pad(NNOp):
    """out = x with pads_begin[k] elements before and pads_end[k] after it along each dim k,
    filled as `mode` says (see PAD_MODES); `value` is cast to the element type.

    reflect needs pads below the dim size, symmetric pads up to it, edge a non-empty dim.
    """

    name = "nn.pad"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    pads_begin = prop_def(IntArrayAttr)
    pads_end = prop_def(IntArrayAttr)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("constant"))
    value = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))

    STRING_CHOICES: ClassVar = {"mode": PAD_MODES}

    def verify_attributes(self) -> None:
        for prop in ("pads_begin", "pads_end"):
            if any(p < 0 for p in self.ints(prop)):
                raise self.error(f"{prop} values must be >= 0, got {list(self.ints(prop))}")

    def check_mode(self, shape: Shape) -> None:
        """The pads must fit the known dims for the mirroring and edge modes."""
        mode = self.str_prop("mode")
        for axis, (size, b, e) in enumerate(zip(shape, self.ints("pads_begin"), self.ints("pads_end"))):
            pad = max(b, e)
            if not known(size) or pad == 0:
                continue
            if (
                (mode == "reflect" and pad >= size)
                or (mode == "symmetric" and pad > size)
                or (mode == "edge" and size == 0)
            ):
                raise self.error(f"{mode} padding of {pad} does not fit dim {axis} of size {size}")

    def infer_shapes(self) -> list[TensorType]:
        shape = self.operand_shape(0)
        for prop in ("pads_begin", "pads_end"):
            count = len(self.ints(prop))
            if count != len(shape):
                raise self.error(f"{prop} needs {len(shape)} values (one per dim), got {count}")
        self.check_mode(shape)
        pads = zip(self.ints("pads_begin"), self.ints("pads_end"))
        out = (d + b + e if known(d) else DYN for d, (b, e) in zip(shape, pads))
        return [tensor(out, self.operand_type(0).element_type)]


@irdl_op_definition
class Gather(NNOp):
    """out[b, p, i, s] = data[b, p, indices[b, i], s], where b are the first `batch_dims` dims
    (shared by data and indices), p the other dims of data before `axis`, i the other dims of
    indices and s the dims of data after `axis`: the output shape is
    data[:axis] + indices[batch_dims:] + data[axis+1:].

    Indices (i32 or i64) may be negative, counting from the end of `axis`; a negative
    `batch_dims` counts from the end of the indices' dims.
    """

    name = "nn.gather"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))
    batch_dims = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))

    def gather_axes(self) -> tuple[int, int]:
        """(axis, batch_dims), both non-negative."""
        data_rank, indices_rank = len(self.operand_shape(0)), len(self.operand_shape(1))
        axis = normalize_axis(self, self.int_prop("axis"), data_rank)
        batch_dims = self.int_prop("batch_dims")
        batch_dims = batch_dims + indices_rank if batch_dims < 0 else batch_dims
        if not 0 <= batch_dims <= min(axis, indices_rank):
            raise self.error(
                f"batch_dims {self.int_prop('batch_dims')} must be in [0, {min(axis, indices_rank)}] "
                f"(at most axis {axis} and the indices rank {indices_rank})"
            )
        return axis, batch_dims

    def infer_shapes(self) -> list[TensorType]:
        data, indices = self.operand_shape(0), self.operand_shape(1)
        if self.operand_type(1).element_type not in (i32, i64):
            raise self.error(f"indices must be i32 or i64, got {self.operand_type(1).element_type}")
        axis, batch_dims = self.gather_axes()
        batch = []
        for d, i in zip(data[:batch_dims], indices[:batch_dims]):
            size = merge_dims((d, i))
            if size is None:
                raise self.error(
                    f"the first {batch_dims} dims of data {show(data)} and indices {show(indices)} differ"
                )
            batch.append(size)
        out = (*batch, *data[batch_dims:axis], *indices[batch_dims:], *data[axis + 1 :])
        return [tensor(out, self.operand_type(0).element_type)]
