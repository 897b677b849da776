"""Indexing ops: gathers and scatters by index tensors, OneHot, NonZero, TopK, and ShapeOf,
BroadcastTo, ReshapeTo, SliceTo and PadBy for shapes computed at run time.

They read or write elements at positions given by an integer tensor (i32 or i64; negative
indices count from the end of their axis). NonZero's output size depends on the data: its
second dim is dynamic (`?`), as OpenVINO's NonZero-3 declares it.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, FloatAttr, IntegerAttr, StringAttr, TensorType, f32, i1, i32, i64
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, prop_def, result_def

from irforge.dialects.nn.base import DYN, IntArrayAttr, NNOp, known, normalize_axis, product, tensor
from irforge.dialects.nn.shape import PAD_MODES

SCATTER_REDUCTIONS = frozenset({"none", "add", "mul", "max", "min"})
"""How a scatter combines an update with the element it lands on (ONNX's names)."""


def check_indices(op: NNOp, index: int) -> None:
    if op.operand_type(index).element_type not in (i32, i64):
        raise op.error(f"indices must be i32 or i64, got {op.operand_type(index).element_type}")


def same_dims(op: NNOp, a: tuple[int, ...], b: tuple[int, ...], what: str) -> None:
    if len(a) != len(b) or any(known(x, y) and x != y for x, y in zip(a, b)):
        raise op.error(f"{what}: shapes {list(a)} and {list(b)} differ")


@irdl_op_definition
class GatherElements(NNOp):
    """out[i][j][k] = data[indices[i][j][k]][j][k] along `axis` (here 0): the output has the
    indices' shape; data and indices have the same rank and the same dims but along `axis`
    (as OpenVINO's GatherElements; the ONNX importer slices a larger data first)."""

    name = "nn.gather_elements"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))

    def infer_shapes(self) -> list[TensorType]:
        data, indices = self.operand_shape(0), self.operand_shape(1)
        check_indices(self, 1)
        if len(data) != len(indices):
            raise self.error(f"data {list(data)} and indices {list(indices)} must have the same rank")
        axis = normalize_axis(self, self.int_prop("axis"), len(data))
        same_dims(self, data[:axis] + data[axis + 1 :], indices[:axis] + indices[axis + 1 :], f"dims other than axis {axis}")
        return [tensor(indices, self.operand_type(0).element_type)]


@irdl_op_definition
class GatherND(NNOp):
    """out[b, i] = data[b, indices[b, i]] where the last dim of indices (size m) indexes the m
    dims of data after the `batch_dims` leading dims shared by both; the output shape is
    indices[:-1] + data[batch_dims + m:]."""

    name = "nn.gather_nd"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    output = result_def(TensorType)
    batch_dims = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))

    def infer_shapes(self) -> list[TensorType]:
        data, indices = self.operand_shape(0), self.operand_shape(1)
        check_indices(self, 1)
        b = self.int_prop("batch_dims")
        if not indices or not known(indices[-1]):
            raise self.error(f"the last dim of indices {list(indices)} must be known")
        m = indices[-1]
        if b < 0 or b >= min(len(data), len(indices)) or b + m > len(data):
            raise self.error(f"batch_dims {b} and index depth {m} do not fit data {list(data)} and indices {list(indices)}")
        same_dims(self, data[:b], indices[:b], f"the first {b} (batch) dims")
        return [tensor((*indices[:-1], *data[b + m :]), self.operand_type(0).element_type)]


@irdl_op_definition
class ScatterND(NNOp):
    """A copy of data where data[indices[i]] = updates[i] (combined by `reduction`): the last
    dim of indices (size m) indexes the first m dims of data; updates has the shape
    indices[:-1] + data[m:]."""

    name = "nn.scatter_nd"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    output = result_def(TensorType)
    reduction = opt_prop_def(StringAttr, default_value=StringAttr("none"))

    STRING_CHOICES: ClassVar = {"reduction": SCATTER_REDUCTIONS}

    def infer_shapes(self) -> list[TensorType]:
        data, indices, updates = (self.operand_shape(i) for i in range(3))
        check_indices(self, 1)
        if not indices or not known(indices[-1]) or indices[-1] > len(data):
            raise self.error(f"the last dim of indices {list(indices)} must be known and at most the rank of data {list(data)}")
        same_dims(self, updates, (*indices[:-1], *data[indices[-1] :]), "updates vs indices[:-1] + data[m:]")
        if self.operand_type(2).element_type != self.operand_type(0).element_type:
            raise self.error("updates must have the element type of data")
        return [self.operand_type(0)]


@irdl_op_definition
class ScatterElements(NNOp):
    """A copy of data where, along `axis` (here 0), data[indices[i][j]][j] = updates[i][j]
    (combined by `reduction`); indices and updates have one shape, of data's rank."""

    name = "nn.scatter_elements"
    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))
    reduction = opt_prop_def(StringAttr, default_value=StringAttr("none"))

    STRING_CHOICES: ClassVar = {"reduction": SCATTER_REDUCTIONS}

    def infer_shapes(self) -> list[TensorType]:
        data, indices, updates = (self.operand_shape(i) for i in range(3))
        check_indices(self, 1)
        same_dims(self, indices, updates, "indices vs updates")
        if len(indices) != len(data):
            raise self.error(f"data {list(data)} and indices {list(indices)} must have the same rank")
        normalize_axis(self, self.int_prop("axis"), len(data))
        if self.operand_type(2).element_type != self.operand_type(0).element_type:
            raise self.error("updates must have the element type of data")
        return [self.operand_type(0)]


@irdl_op_definition
class OneHot(NNOp):
    """out = on_value where the position along the new axis `axis` equals the index, else
    off_value; `depth` positions; indices outside [-depth, depth) give an all-off row."""

    name = "nn.one_hot"
    indices = operand_def(TensorType)
    on_value = operand_def(TensorType)
    off_value = operand_def(TensorType)
    output = result_def(TensorType)
    depth = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(-1, i64))

    def infer_shapes(self) -> list[TensorType]:
        indices = list(self.operand_shape(0))
        check_indices(self, 0)
        if self.operand_shape(1) or self.operand_shape(2):
            raise self.error("on_value and off_value must be scalars")
        if self.operand_type(1).element_type != self.operand_type(2).element_type:
            raise self.error("on_value and off_value must have one element type")
        depth = self.int_prop("depth")
        if depth < 1:
            raise self.error(f"depth must be positive, got {depth}")
        axis = normalize_axis(self, self.int_prop("axis"), len(indices) + 1)
        indices.insert(axis, depth)
        return [tensor(indices, self.operand_type(1).element_type)]


@irdl_op_definition
class NonZero(NNOp):
    """The coordinates of the nonzero elements of x in row-major order, as an i64
    [rank, count] tensor; count is known only at run time."""

    name = "nn.non_zero"
    input = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        return [tensor((len(self.operand_shape(0)), DYN), i64)]


@irdl_op_definition
class TopK(NNOp):
    """The k largest (mode "max") or smallest ("min") elements along `axis` and their i64
    indices, in value order (sort "value", ties by lower index) or index order ("index").
    k is the property, or the optional operand `k_value` (an integer scalar known only at run
    time, as OpenVINO's TopK-11 takes it: the axis's size in the results is then dynamic, `?`)."""

    name = "nn.top_k"
    input = operand_def(TensorType)
    k_value = opt_operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    k = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(1, i64))
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(-1, i64))
    mode = opt_prop_def(StringAttr, default_value=StringAttr("max"))
    sort = opt_prop_def(StringAttr, default_value=StringAttr("value"))

    STRING_CHOICES: ClassVar = {"mode": frozenset({"max", "min"}), "sort": frozenset({"value", "index"})}

    def infer_shapes(self) -> list[TensorType]:
        x = list(self.operand_shape(0))
        axis = normalize_axis(self, self.int_prop("axis"), len(x))
        if len(self.operands) > 1:
            k_type = self.operand_type(1)
            if k_type.element_type not in (i32, i64) or k_type.get_shape():
                raise self.error(f"k_value must be an i32 or i64 scalar, got {k_type}")
            x[axis] = DYN
            return [tensor(x, self.operand_type(0).element_type), tensor(x, i64)]
        k = self.int_prop("k")
        if k < 0 or (known(x[axis]) and k > x[axis]):
            raise self.error(f"k {k} must be in [0, {x[axis]}] (the size of axis {axis})")
        x[axis] = k
        return [tensor(x, self.operand_type(0).element_type), tensor(x, i64)]


@irdl_op_definition
class CumSum(NNOp):
    """Running sums along `axis`: inclusive (or exclusive: each sum without its own element),
    from the start (or from the end, with reverse)."""

    name = "nn.cum_sum"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    axis = opt_prop_def(IntegerAttr.constr(type=i64), default_value=IntegerAttr(0, i64))
    exclusive = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))
    reverse = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(False))

    def infer_shapes(self) -> list[TensorType]:
        normalize_axis(self, self.int_prop("axis"), len(self.operand_shape(0)))
        return [self.operand_type(0)]


@irdl_op_definition
class Range(NNOp):
    """start, start + delta, ... while before limit (three scalars of one element type); the
    length is known only at run time unless the importer folds it."""

    name = "nn.range"
    start = operand_def(TensorType)
    limit = operand_def(TensorType)
    delta = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        if any(self.operand_shape(i) for i in range(3)):
            raise self.error("start, limit and delta must be scalars")
        types = {self.operand_type(i).element_type for i in range(3)}
        if len(types) != 1:
            raise self.error("start, limit and delta must have one element type")
        return [tensor((DYN,), self.operand_type(0).element_type)]


@irdl_op_definition
class IsNaN(NNOp):
    """out = (x is NaN), as i1."""

    name = "nn.is_nan"
    input = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        return [tensor(self.operand_shape(0), i1)]


@irdl_op_definition
class IsInf(NNOp):
    """out = (x is +inf and detect_positive) or (x is -inf and detect_negative), as i1."""

    name = "nn.is_inf"
    input = operand_def(TensorType)
    output = result_def(TensorType)
    detect_negative = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))
    detect_positive = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))

    def infer_shapes(self) -> list[TensorType]:
        return [tensor(self.operand_shape(0), i1)]


@irdl_op_definition
class ShapeOf(NNOp):
    """The dims of x as an i64 [rank] tensor (OpenVINO's ShapeOf-3). Importers fold it to a
    constant when the dims are known; it stays an op only for dims that depend on the data
    (the count of NonZero's or NonMaxSuppression's results)."""

    name = "nn.shape_of"
    input = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        return [tensor((len(self.operand_shape(0)),), i64)]


@irdl_op_definition
class BroadcastTo(NNOp):
    """x broadcast (numpy rules, both ways: OpenVINO's Broadcast-3 "bidirectional", ONNX's
    Expand) with the dims held by `target_shape`, a 1-D i64 tensor computed at run time
    (a constant target is a Tile at import). ONNX's ConstantOfShape of a run-time shape is
    its scalar value broadcast so. The result's dims are dynamic, but where x has a dim
    other than 1 (as OpenVINO infers them)."""

    name = "nn.broadcast_to"
    input = operand_def(TensorType)
    target_shape = operand_def(TensorType)
    output = result_def(TensorType)

    def infer_shapes(self) -> list[TensorType]:
        target = self.operand_shape(1)
        if len(target) != 1 or not known(target[0]) or self.operand_type(1).element_type not in (i32, i64):
            raise self.error(f"target_shape must be a 1-D i32 or i64 tensor of known length, got {self.operand_type(1)}")
        x = self.operand_shape(0)
        rank = max(target[0], len(x))
        dims = [DYN] * (rank - len(x)) + [d if known(d) and d != 1 else DYN for d in x]
        # a dim of x other than 1 is the result's whatever the target holds there (1 or it);
        # dims beyond x's rank come from the target alone
        return [tensor(dims, self.operand_type(0).element_type)]


@irdl_op_definition
class ReshapeTo(NNOp):
    """nn.reshape with the target shape computed at run time: `target_shape` is a 1-D i32 or
    i64 tensor of known length (OpenVINO's Reshape-1 with a non-constant shape input, ONNX's
    Reshape whose shape comes from data-dependent sizes). Its values follow nn.reshape's
    rules: -1 (at most once) keeps the element count, 0 copies the input dim at the same
    index when special_zero, else it is a size of 0. A constant target is nn.reshape at
    import. The result's rank is the target's length and its dims are dynamic."""

    name = "nn.reshape_to"
    input = operand_def(TensorType)
    target_shape = operand_def(TensorType)
    output = result_def(TensorType)
    special_zero = opt_prop_def(BoolAttr, default_value=BoolAttr.from_bool(True))

    def infer_shapes(self) -> list[TensorType]:
        target = self.operand_shape(1)
        if len(target) != 1 or not known(target[0]) or self.operand_type(1).element_type not in (i32, i64):
            raise self.error(f"target_shape must be a 1-D i32 or i64 tensor of known length, got {self.operand_type(1)}")
        return [tensor(self.output_dims(known_elements(self.target_shape)), self.operand_type(0).element_type)]

    def output_dims(self, spec: list[int]) -> tuple[int, ...]:
        """The result's dims from the target elements known before it runs (DYN where not),
        as OpenVINO infers them: a known size is itself, a 0 copies the input dim (with
        special_zero), -1 is known when every other size and the input's are."""
        if any(known(v) and v < -1 for v in spec) or spec.count(-1) > 1:
            raise self.error(f"target_shape values must be >= -1 with at most one -1, got {list(spec)}")
        x = self.operand_shape(0)
        zero = self.bool_prop("special_zero")
        dims = [x[i] if v == 0 and zero and i < len(x) else (DYN if v == -1 else v) for i, v in enumerate(spec)]
        if spec.count(-1) == 1 and known(*x) and all(known(d) for i, d in enumerate(dims) if spec[i] != -1):
            rest = product(d for i, d in enumerate(dims) if spec[i] != -1)
            if rest and product(x) % rest == 0:
                dims[spec.index(-1)] = product(x) // rest
        return tuple(dims)


def known_elements(value: SSAValue) -> list[int]:
    """The elements of a shape vector (1-D, or a scalar) known before it runs, DYN where
    not: OpenVINO's partial value propagation through the ops that build a run-time shape
    (torch writes Concat(Unsqueeze(Gather(Shape(x), i)), constants)), so a reshape to
    [count, 2, 2] keeps its static dims."""
    from irforge.dialects.nn.constant import Constant
    from irforge.dialects.nn.shape import Concat, Gather, Slice, Unsqueeze

    shape = value.type.get_shape() if isinstance(value.type, TensorType) else (DYN,)
    size = product(shape) if len(shape) <= 1 else DYN
    unknown = [DYN] * size if known(size) else []
    op = value.owner
    if isinstance(op, Constant) and op.value is not None:
        return [int(v) for v in op.inline_array().reshape(-1)]
    if isinstance(op, ShapeOf):
        return list(op.operand_shape(0))
    if isinstance(op, Concat):
        parts = [known_elements(v) for v in op.operands]
        return [d for p in parts for d in p] if sum(map(len, parts)) == len(unknown) else unknown
    if isinstance(op, Unsqueeze):
        return known_elements(op.operands[0]) or unknown
    if isinstance(op, Slice) and len(op.operand_shape(0)) == 1:
        # a part of a shape (dynamo's k^T reads [-1, S, E] and [.., E, S] as slices of
        # Shape(k)): OpenVINO infers the parts' known sizes, so irforge must too, else an IR
        # whose sizes contradict each other is written without a word (a [5, 5] q times a
        # [?, 2, 8, ?] k^T: OpenVINO refused to read it)
        data = known_elements(op.operands[0])
        (start, stop, step), = op.bounds((len(data),)) if data else ((0, 0, 0),)
        part = data[start:stop:step] if data and step > 0 else []
        return part if len(part) == len(unknown) else unknown
    if isinstance(op, Gather) and op.int_prop("axis") == 0 and op.int_prop("batch_dims") == 0:
        data, index = known_elements(op.operands[0]), known_elements(op.operands[1])
        if data and index and all(known(i) and -len(data) <= i < len(data) for i in index) and len(index) == len(unknown):
            return [data[i] for i in index]
    return unknown


@irdl_op_definition
class SliceTo(NNOp):
    """nn.slice with begins and ends computed at run time: `begins` and `ends` are 1-D i32
    or i64 tensors of one value per entry of `axes` (OpenVINO's Slice-8 with non-constant
    start/stop inputs; ONNX Slice whose bounds come from data-dependent sizes, as
    torchvision's RoI heads slice the first `num_boxes` rows). `axes` and `steps` are
    constant; the values follow nn.slice's rules (negative counts from the end, then
    clamped). A constant begin/end pair is nn.slice at import. Sliced dims are dynamic."""

    name = "nn.slice_to"
    input = operand_def(TensorType)
    begins = operand_def(TensorType)
    ends = operand_def(TensorType)
    output = result_def(TensorType)
    axes = prop_def(IntArrayAttr)
    steps = opt_prop_def(IntArrayAttr)

    def verify_attributes(self) -> None:
        n = len(self.ints("axes"))
        if self.steps is not None and len(self.ints("steps")) != n:
            raise self.error(f"steps needs {n} values (one per axis), got {len(self.ints('steps'))}")
        if 0 in self.ints("steps"):
            raise self.error(f"steps must not be 0, got {list(self.ints('steps'))}")

    def sliced_axes(self) -> tuple[int, ...]:
        from irforge.dialects.nn.shape import unique_axes

        return unique_axes(self, self.ints("axes"), len(self.operand_shape(0)))

    def step_values(self) -> tuple[int, ...]:
        return self.ints("steps") or (1,) * len(self.ints("axes"))

    def infer_shapes(self) -> list[TensorType]:
        n = len(self.ints("axes"))
        for index, what in ((1, "begins"), (2, "ends")):
            shape = self.operand_shape(index)
            if len(shape) != 1 or shape[0] != n or self.operand_type(index).element_type not in (i32, i64):
                raise self.error(f"{what} must be a 1-D i32 or i64 tensor of {n} values (one per axis), got {self.operand_type(index)}")
        out = list(self.operand_shape(0))
        for axis in self.sliced_axes():
            out[axis] = DYN
        return [tensor(out, self.operand_type(0).element_type)]


@irdl_op_definition
class PadBy(NNOp):
    """nn.pad with the pads computed at run time: `pads` is a 1-D i32 or i64 tensor
    [begin_0, ..., begin_{r-1}, end_0, ..., end_{r-1}] (ONNX Pad's layout; OpenVINO's Pad-12
    takes the halves as two inputs), filled as `mode` says (nn.pad's modes) with `value` in
    constant mode. A negative pad crops that many elements (as OpenVINO's Pad-12 and
    onnxruntime do). Ultralytics YOLO exported with nms=True pads its detections to a fixed
    count by the number it kept. Constant pads are nn.pad at import. A padded dim is dynamic
    unless its pads are known before the model runs (known_elements)."""

    name = "nn.pad_by"
    input = operand_def(TensorType)
    pads = operand_def(TensorType)
    output = result_def(TensorType)
    mode = opt_prop_def(StringAttr, default_value=StringAttr("constant"))
    value = opt_prop_def(FloatAttr, default_value=FloatAttr(0.0, f32))

    STRING_CHOICES: ClassVar = {"mode": PAD_MODES}

    def infer_shapes(self) -> list[TensorType]:
        shape = self.operand_shape(0)
        rank = len(shape)
        pads = self.operand_shape(1)
        if len(pads) != 1 or pads[0] != 2 * rank or self.operand_type(1).element_type not in (i32, i64):
            raise self.error(f"pads must be a 1-D i32 or i64 tensor of {2 * rank} values (a begin and an end per dim), got {self.operand_type(1)}")
        values = known_elements(self.pads)
        out = []
        for axis, d in enumerate(shape):
            begin, end = values[axis], values[rank + axis]
            out.append(max(d + begin + end, 0) if known(d, begin, end) else DYN)
        return [tensor(out, self.operand_type(0).element_type)]
