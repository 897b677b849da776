"""ONNX sequence and optional values, resolved at import.

OpenVINO has no sequence or optional type, so these values never reach the IR: a sequence is
an import-time list of tensor values (its length and every position must be known at
conversion time) and an optional is a value known to be present or absent. The ops on them
(SequenceEmpty / Construct / Insert / At / Erase / Length, SplitToSequence,
ConcatFromSequence, SequenceMap, Optional, OptionalHasElement, OptionalGetElement) become
list operations of the importer plus ordinary nn ops (Split, Concat, Unsqueeze, Squeeze) on
the elements. A Loop whose trip count is constant unrolls (control_flow.py), so sequences it
carries grow one append at a time; SequenceMap imports its body once per element.

Where the structure depends on data (a sequence carried through a run-time Loop or If, a
split of a dynamic axis) the node is refused (E195), naming the value that would have to be
known: a trip count, a condition or a position fed as a model input can be frozen
(`import_freezing` does it for the node suite; mo.py's --freeze_placeholder_with_value).

A model output that is a sequence becomes one output per element, named `<name>.<i>`; a
model input that is a sequence or an optional sequence must be bound to tensors first
(`bind_structured_inputs`), since its length is not part of the ONNX type.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper
from xdsl.ir import SSAValue

from irforge.dialects.nn import Concat, Reshape, Squeeze, Unsqueeze
from irforge.dialects.nn.shape import Gather, Split
from irforge.dialects.nn.base import DYN
from irforge.errors import IrforgeError
from irforge.frontends.onnx.registry import NodeContext, onnx_extractor


@dataclass(frozen=True, eq=False)
class SequenceValue:
    """An ONNX sequence whose length is known at import: its elements' values in order."""

    items: tuple[SSAValue, ...]

    def __len__(self) -> int:
        return len(self.items)


@dataclass(frozen=True, eq=False)
class OptionalValue:
    """An ONNX optional known at import to hold `element` (a tensor or a sequence) or nothing."""

    element: SSAValue | SequenceValue | None


@dataclass(frozen=True, eq=False)
class StackedSequence:
    """A sequence of run-time length held as one tensor, its elements stacked on axis 0: what
    a run-time Loop appending one tensor per iteration gives (`sequence_scan.py`)."""

    stacked: SSAValue


Structured = SequenceValue | OptionalValue | StackedSequence
Value = SSAValue | SequenceValue | OptionalValue | StackedSequence


def is_structured(value: object) -> bool:
    return isinstance(value, SequenceValue | OptionalValue | StackedSequence)


def kind(value: object) -> str:
    return "a sequence" if isinstance(value, SequenceValue | StackedSequence) else "an optional" if isinstance(value, OptionalValue) else "a tensor"


def bad_kind(where: str, name: str, value: object, wanted: str) -> IrforgeError:
    return IrforgeError(
        f"'{name}' is {kind(value)} value, but the node reads it as {wanted}",
        where=where,
        fix="the model is malformed (a sequence/optional used as a tensor or the reverse); check it with onnx.checker",
        code="E188",
    )


def sequence_input(ctx: NodeContext, index: int) -> SequenceValue:
    value = ctx.any_input(index)
    if isinstance(value, OptionalValue) and isinstance(value.element, SequenceValue):
        return value.element
    if isinstance(value, StackedSequence):
        raise IrforgeError(
            f"'{ctx.node.input[index]}' is a sequence grown in a run-time loop; of what reads it, only ConcatFromSequence and SequenceAt are supported, and OpenVINO has no sequence type",
            where=ctx.where, fix="make the loop's trip count and condition constants so that it unrolls", code="E195",
        )  # fmt: skip
    if not isinstance(value, SequenceValue):
        raise bad_kind(ctx.where, ctx.node.input[index], value, "a sequence")
    return value


def tensor_input(ctx: NodeContext, index: int) -> SSAValue:
    value = ctx.any_input(index)
    if isinstance(value, OptionalValue) and isinstance(value.element, SSAValue):
        return value.element
    if not isinstance(value, SSAValue):
        raise bad_kind(ctx.where, ctx.node.input[index], value, "a tensor")
    return value


def position(ctx: NodeContext, index: int, length: int, what: str, *, end_allowed: bool) -> int:
    """The constant position input `index` in [-length, length - 1] (or up to `length` for an
    insertion), made non-negative."""
    array = np.asarray(ctx.required_constant(index, what))
    if array.size != 1 or array.dtype.kind not in "iu":
        raise ctx.fail(f"{what} must be one integer, got {array.dtype} of shape {list(array.shape)}")
    value = int(array.reshape(-1)[0])
    high = length if end_allowed else length - 1
    if not -length <= value <= high:
        raise IrforgeError(
            f"{what} {value} is out of range for a sequence of {length} tensors (valid: {-length}..{high})",
            where=ctx.where,
            fix="check the model's positions against the sequence's length",
            code="E188",
        )
    return value + length if value < 0 else value


# -- sequences -------------------------------------------------------------------------------
@onnx_extractor("SequenceEmpty")
def sequence_empty(ctx: NodeContext) -> list[Value]:
    return [SequenceValue(())]


@onnx_extractor("SequenceConstruct")
def sequence_construct(ctx: NodeContext) -> list[Value]:
    return [SequenceValue(tuple(tensor_input(ctx, i) for i in range(ctx.num_inputs)))]


@onnx_extractor("SequenceInsert")
def sequence_insert(ctx: NodeContext) -> list[Value]:
    items = list(sequence_input(ctx, 0).items)
    at = position(ctx, 2, len(items), "position", end_allowed=True) if ctx.has_input(2) else len(items)
    items.insert(at, tensor_input(ctx, 1))
    return [SequenceValue(tuple(items))]


@onnx_extractor("SequenceErase")
def sequence_erase(ctx: NodeContext) -> list[Value]:
    items = list(sequence_input(ctx, 0).items)
    if not items:
        raise IrforgeError("SequenceErase on an empty sequence", where=ctx.where, fix="check the model: there is nothing to erase", code="E188")
    at = position(ctx, 1, len(items), "position", end_allowed=False) if ctx.has_input(1) else len(items) - 1
    del items[at]
    return [SequenceValue(tuple(items))]


@onnx_extractor("SequenceAt")
def sequence_at(ctx: NodeContext) -> list[Value]:
    """The element at a constant position; at a run-time position, a Gather from the
    elements stacked on a new axis 0 (they must agree in shape and element type)."""
    value = ctx.any_input(0)
    if isinstance(value, StackedSequence):
        return [gather_at(ctx, value.stacked)]
    items = sequence_input(ctx, 0).items
    if ctx.constant_input(1) is None and items and len({str(item.type) for item in items}) == 1 and DYN not in items[0].type.get_shape():  # type: ignore[attr-defined]
        stacked = [ctx.value(Unsqueeze, [item], suffix=f"/stack{i}", axes=[0]) for i, item in enumerate(items)]
        return [gather_at(ctx, stacked[0] if len(stacked) == 1 else ctx.value(Concat, stacked, suffix="/stack", axis=0))]
    return [items[position(ctx, 1, len(items), "position", end_allowed=False)]]


def gather_at(ctx: NodeContext, stacked: SSAValue) -> SSAValue:
    """Element `position` (input 1, negative counting from the end, as Gather's indices do)
    of the sequence stacked on axis 0."""
    index = ctx.input(1)
    shape = ctx.input_shape(1)
    if len(shape) > 1 or (len(shape) == 1 and shape[0] != 1):
        raise ctx.fail(f"position must be one integer, got shape {list(shape)}")
    if shape:
        index = ctx.value(Reshape, [index], suffix="/position", shape=[])
    return ctx.value(Gather, [stacked, index], axis=0)


@onnx_extractor("SequenceLength")
def sequence_length(ctx: NodeContext) -> list[Value]:
    return [ctx.constant(np.array(len(sequence_input(ctx, 0)), np.int64))]


@onnx_extractor("ConcatFromSequence")
def concat_from_sequence(ctx: NodeContext) -> list[Value]:
    if isinstance(ctx.any_input(0), StackedSequence):
        from irforge.frontends.onnx.sequence_scan import concat_stacked

        return [concat_stacked(ctx, ctx.any_input(0))]
    items = list(sequence_input(ctx, 0).items)
    if not items:
        raise IrforgeError("ConcatFromSequence of an empty sequence", where=ctx.where, fix="check the model: ONNX requires at least one tensor", code="E188")
    axis, new_axis = int(ctx.attr("axis")), int(ctx.flag("new_axis"))
    rank = len(items[0].type.get_shape())  # type: ignore[attr-defined]
    if new_axis:
        if not -rank - 1 <= axis <= rank:
            raise ctx.fail(f"axis {axis} is out of range for new_axis=1 on tensors of rank {rank}")
        axis %= rank + 1
        items = [ctx.value(Unsqueeze, [item], suffix=f"/unsqueeze{i}", axes=[axis]) for i, item in enumerate(items)]
    elif not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for tensors of rank {rank}")
    return [ctx.value(Concat, items, axis=axis % (rank + new_axis))]


@onnx_extractor("SplitToSequence")
def split_to_sequence(ctx: NodeContext) -> list[Value]:
    shape = ctx.input_shape(0)
    rank = len(shape)
    axis = int(ctx.attr("axis", 0))
    if not -rank <= axis < rank:
        raise ctx.fail(f"axis {axis} is out of range for an input of rank {rank}")
    axis %= rank
    size = shape[axis]
    split = ctx.constant_input(1) if ctx.has_input(1) else None
    if ctx.has_input(1) and split is None:
        ctx.required_constant(1, "split")  # raises: the lengths decide the sequence's length
    if split is not None and np.asarray(split).dtype.kind not in "iu":  # int(inf) / int(nan) below
        raise ctx.fail(f"split must be an integer tensor, got {np.asarray(split).dtype}")
    if split is not None and np.asarray(split).ndim > 1:
        raise ctx.fail(f"split must be a scalar or a 1-D tensor, got shape {list(np.shape(split))}")
    if split is not None and np.asarray(split).ndim == 1:
        lengths = [int(v) for v in np.asarray(split)]
        if size != DYN and sum(lengths) != size:
            raise ctx.fail(f"split lengths {lengths} do not add up to the axis' size {size}")
    else:
        if size == DYN:
            raise IrforgeError(
                f"SplitToSequence along dynamic axis {axis} (shape {list(shape)}): the sequence's length depends on run-time data, and OpenVINO has no sequence type",
                where=ctx.where, fix="give static input shapes (--input_shape) or explicit split lengths", code="E195",
            )  # fmt: skip
        chunk = 1 if split is None else int(np.asarray(split).reshape(-1)[0])
        if chunk <= 0:
            raise ctx.fail(f"split {chunk} must be positive")
        lengths = [min(chunk, size - start) for start in range(0, size, chunk)]
    if not lengths:
        return [SequenceValue(())]
    parts = ctx.add(Split, [ctx.input(0)], num_results=len(lengths), axis=axis, split_lengths=lengths) if len(lengths) > 1 else [ctx.input(0)]
    if split is None and not ctx.flag("keepdims", 1):
        parts = [ctx.value(Squeeze, [p], suffix=f"/squeeze{i}", axes=[axis]) for i, p in enumerate(parts)]
    return [SequenceValue(tuple(parts))]


@onnx_extractor("SequenceMap")
def sequence_map(ctx: NodeContext) -> list[Value]:
    """The body imported once per element: input i of the body is element i of each
    sequence input, or the tensor input itself."""
    from irforge.frontends.onnx.region_import import import_body

    body: onnx.GraphProto = ctx.attr("body")
    inputs = [ctx.any_input(i) for i in range(ctx.num_inputs)]
    length = len(sequence_input(ctx, 0))
    for i, value in enumerate(inputs[1:], 1):
        if isinstance(value, SequenceValue) and len(value) != length:
            raise IrforgeError(f"SequenceMap's sequences have different lengths ({length} and {len(value)}, input #{i})", where=ctx.where, fix="check the model", code="E188")
    outputs: list[list[SSAValue]] = [[] for _ in body.output]
    names = [vi.name for vi in body.input]
    for k in range(length):
        bound = {name: value.items[k] if isinstance(value, SequenceValue) else value for name, value in zip(names, inputs) if name}
        for out, value in zip(outputs, import_body(ctx, body, bound, f"/map{k}")):
            if not isinstance(value, SSAValue):
                raise bad_kind(ctx.where, "SequenceMap body output", value, "a tensor")
            out.append(value)
    return [SequenceValue(tuple(out)) for out in outputs]


# -- optionals -------------------------------------------------------------------------------
@onnx_extractor("Optional")
def optional(ctx: NodeContext) -> list[Value]:
    return [OptionalValue(ctx.any_input(0) if ctx.has_input(0) else None)]


@onnx_extractor("OptionalHasElement")
def optional_has_element(ctx: NodeContext) -> list[Value]:
    """False for an absent input (opset 18 allows leaving it out) or an empty optional; true
    for a present optional, a tensor or a sequence."""
    if not ctx.has_input(0):
        present = False
    else:
        value = ctx.any_input(0)
        present = not isinstance(value, OptionalValue) or value.element is not None
    return [ctx.constant(np.array(present))]


@onnx_extractor("OptionalGetElement")
def optional_get_element(ctx: NodeContext) -> list[Value]:
    value = ctx.any_input(0)
    if isinstance(value, OptionalValue):
        if value.element is None:
            raise IrforgeError(
                f"OptionalGetElement of '{ctx.node.input[0]}', an optional that is empty", where=ctx.where,
                fix="the model reads an absent value (onnxruntime fails there too); guard it with OptionalHasElement and If", code="E188",
            )  # fmt: skip
        return [value.element]
    return [value]


# -- run-time If branches -------------------------------------------------------------------
def structure(value: object) -> tuple:  # type: ignore[type-arg]
    """The shape of a value's structure: a tensor, a sequence of n tensors, an optional
    (present with its element's structure, or absent)."""
    if isinstance(value, SequenceValue):
        return ("sequence", len(value))
    if isinstance(value, OptionalValue):
        return ("optional", None if value.element is None else structure(value.element))
    if isinstance(value, StackedSequence):
        return ("stacked",)
    return ("tensor",)


def flatten_value(value: object) -> list[SSAValue]:
    """The tensors of a value, in the order `rebuild` reads them back."""
    if isinstance(value, SequenceValue):
        return list(value.items)
    if isinstance(value, OptionalValue):
        return [] if value.element is None else flatten_value(value.element)
    if isinstance(value, StackedSequence):
        return [value.stacked]
    return [value]  # type: ignore[list-item]


def rebuild(shape: tuple, tensors: Iterator[SSAValue]) -> Value:  # type: ignore[type-arg]
    if shape[0] == "sequence":
        return SequenceValue(tuple(next(tensors) for _ in range(shape[1])))
    if shape[0] == "optional":
        return OptionalValue(None if shape[1] is None else rebuild(shape[1], tensors))  # type: ignore[arg-type]
    if shape[0] == "stacked":
        return StackedSequence(next(tensors))
    return next(tensors)


class BranchStructure:
    """Flattens a branch's outputs for nn.yield and records their structure (`flatten`)."""

    def __init__(self) -> None:
        self.shapes: list[tuple] = []  # type: ignore[type-arg]

    def flatten(self, outputs: list[Value]) -> list[SSAValue]:
        self.shapes = [structure(v) for v in outputs]
        return [t for v in outputs for t in flatten_value(v)]

    def rebuild(self, results: Sequence[SSAValue]) -> list[Value]:
        tensors = iter(results)
        return [rebuild(shape, tensors) for shape in self.shapes]


# -- the model's boundary --------------------------------------------------------------------
def flat_outputs(name: str, value: Value, where: str) -> list[tuple[str, SSAValue]]:
    """The tensor outputs a model output becomes: itself, or one per element of a sequence
    (`<name>.<i>`), or the element of a present optional."""
    if isinstance(value, OptionalValue):
        if value.element is None:
            raise IrforgeError(f"model output '{name}' is an empty optional", where=where, fix="OpenVINO has no optional type: cut the model before it (--output)", code="E187")
        value = value.element
    if isinstance(value, SequenceValue):
        return [(f"{name}.{i}", item) for i, item in enumerate(value.items)]
    if isinstance(value, StackedSequence):
        raise IrforgeError(f"model output '{name}' is a sequence grown in a run-time loop, and OpenVINO has no sequence type", where=where, fix="concatenate it (ConcatFromSequence) in the model, or make the loop's trip count a constant", code="E195")
    return [(name, value)]


def structured_input_error(vi: onnx.ValueInfoProto) -> IrforgeError:
    return IrforgeError(
        f"model input '{vi.name}' is a {vi.type.WhichOneof('value').replace('_type', '')} (its length is not part of the ONNX type), and OpenVINO has no sequence type",
        fix=f"give its elements as tensor inputs {vi.name}.0, {vi.name}.1, ... with their shapes (--input {vi.name}.0,{vi.name}.1 --input_shape [2,3],[2,3]), or export the model with tensor inputs",
        code="E187",
    )


def element_names(name: str, shapes: Mapping[str, object]) -> list[str]:
    """`<name>.0`, `<name>.1`, ... as far as `shapes` gives them without a gap."""
    names = []
    while f"{name}.{len(names)}" in shapes:
        names.append(f"{name}.{len(names)}")
    return names


def sequence_model_input(importer, vi: onnx.ValueInfoProto) -> Value | None:  # type: ignore[no-untyped-def]
    """A sequence (or optional sequence) model input whose elements the input shapes give as
    `<name>.<i>`: one tensor input per element; None when they are not given."""
    from irforge.frontends.folding import check_dtype
    from irforge.frontends.onnx.loader import element_dtype

    which = vi.type.WhichOneof("value")
    inner = vi.type.optional_type.elem_type if which == "optional_type" else vi.type
    if inner.WhichOneof("value") != "sequence_type" or not inner.sequence_type.elem_type.HasField("tensor_type"):
        return None
    names = element_names(vi.name, importer.input_shapes)
    if not names:
        return None
    dtype = element_dtype(inner.sequence_type.elem_type.tensor_type.elem_type, vi.name)
    check_dtype(dtype, vi.name)
    sequence = SequenceValue(tuple(importer.builder.input(n, list(importer.input_shapes[n]), dtype) for n in names))
    return OptionalValue(sequence) if which == "optional_type" else sequence


def bind_structured_inputs(model: onnx.ModelProto, feeds: dict[str, object]) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """`model` with its sequence and optional inputs replaced by what `feeds` gives them: a
    list of arrays becomes one tensor input per element (`<name>.<i>`) and a SequenceConstruct
    (SequenceEmpty when empty), None an empty Optional, an array a tensor input wrapped by
    Optional. Returns the model and the tensor feeds."""
    bound = onnx.ModelProto()
    bound.CopyFrom(model)
    graph = bound.graph
    inputs, nodes, tensor_feeds = [], [], {}
    for vi in graph.input:
        which = vi.type.WhichOneof("value")
        feed = feeds.get(vi.name)
        if which == "tensor_type" or vi.name not in feeds:
            inputs.append(vi)
            if vi.name in feeds:
                tensor_feeds[vi.name] = np.asarray(feed)
            continue
        inner = vi.type.optional_type.elem_type if which == "optional_type" else vi.type
        if feed is None:
            nodes.append(helper.make_node("Optional", [], [vi.name], type=inner))
            continue
        if isinstance(feed, list):
            names = [f"{vi.name}.{i}" for i in range(len(feed))]
            for n, array in zip(names, feed):
                array = np.asarray(array)
                inputs.append(helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape))
                tensor_feeds[n] = array
            element = inner.sequence_type.elem_type.tensor_type.elem_type
            made = vi.name if which == "sequence_type" else f"{vi.name}.sequence"
            nodes.append(helper.make_node("SequenceConstruct", names, [made]) if names else helper.make_node("SequenceEmpty", [], [made], dtype=element or onnx.TensorProto.FLOAT))
        else:
            array = np.asarray(feed)
            made = f"{vi.name}.tensor"
            inputs.append(helper.make_tensor_value_info(made, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape))
            tensor_feeds[made] = array
        if which == "optional_type":
            nodes.append(helper.make_node("Optional", [made], [vi.name]))
    del graph.input[:]
    graph.input.extend(inputs)
    kept = list(graph.node)
    del graph.node[:]
    graph.node.extend([*nodes, *kept])
    return bound, tensor_feeds


def flatten_expected(values: Sequence[object]) -> list[np.ndarray]:
    """Expected model outputs as the tensors `flat_outputs` gives: a list's elements in
    order, nothing for None (an empty optional)."""
    flat: list[np.ndarray] = []
    for value in values:
        if value is None:
            continue
        if isinstance(value, list):
            flat.extend(np.asarray(v) for v in value)
        else:
            flat.append(value)  # type: ignore[arg-type]
    return flat
