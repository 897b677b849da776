"""Data-dependent shapes on the compiling backends: the model split into compiled segments
and host segments.

NonZero, NonMaxSuppression, a TopK whose k is computed at run time and a Range of run-time
bounds give results whose size is known only when they run: the IR carries `?` (-1) there,
as OpenVINO's IR does. The CPU and OpenCL backends plan every buffer at compile time, so
such a model is run in phases:

- an op is a *host* op when one of its operands or results has a dynamic dim (the
  data-dependent op itself, and everything downstream that still depends on the dynamic
  size: a Gather by NonZero's indices, a Transpose of NMS's selection, a Shape of them...),
  or, in such a model, when the backend has no kernel for it (`runs_natively`); every
  other op is *compiled*;
- the ops are scheduled in a topological order that keeps each kind together as long as
  dependencies allow (a greedy list scheduling that switches kind only when no op of the
  current kind is ready), and cut into maximal runs of one kind: segments;
- each compiled segment becomes a model of its own (its inputs: the values it reads from
  earlier segments or the model's inputs; its outputs: the values later segments or the
  model's results read; its constants cloned in) compiled by the backend with static
  shapes, and each host segment runs its ops' numpy reference kernels, so its results
  have whatever size the data gives; a small compiled segment between two host segments
  (scalar and per-box arithmetic: at most `SMALL` elements) runs on the host with them.

Values cross segments as numpy arrays (explicit copies: a compiled segment copies its
outputs out, its inputs are read in place). An op downstream of a dynamic dim whose own
shapes are static again (a ReduceSum over the dynamic axis, a Shape's rank-sized result
padded to a fixed size) goes back into compiled code. Models with static shapes
everywhere do not come here: they compile as one program.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.func import ReturnOp
from xdsl.ir import Operation, SSAValue

from irforge.backends.reference import constant_value, evaluate
from irforge.backends.reference.interpreter import check_input
from irforge.builder import ModelBuilder
from irforge.dialects.nn.constant import Constant
from irforge.errors import IrforgeError
from irforge.model import Model, input_names, output_names

Runner = Callable[[Mapping[str, np.ndarray]], Mapping[str, np.ndarray]]


def is_dynamic(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and any(d < 0 for d in value.type.get_shape())


def has_data_dependent_shapes(model: Model) -> bool:
    """Static inputs, but some op's result has a dynamic dim (known only when it runs)."""
    func = model.func
    if any(is_dynamic(a) for a in func.args):
        return False
    return any(is_dynamic(r) for op in func.body.block.ops for r in op.results)


def touches_dynamic(op: Operation) -> bool:
    return any(is_dynamic(v) for v in (*op.operands, *op.results))


@dataclass
class Segment:
    """Consecutive ops of one kind, and the values it reads and gives to later segments."""

    host: bool
    ops: list[Operation] = field(default_factory=list)
    inputs: list[SSAValue] = field(default_factory=list)
    outputs: list[SSAValue] = field(default_factory=list)
    run: Runner | None = None
    """A compiled segment's compiled model (by input names v0.., output names y0..)."""


def schedule(ops: list[Operation], host: Callable[[Operation], bool]) -> list[Segment]:
    """`ops` (no constants, no return) in a topological order that keeps each kind together,
    cut into segments (see the module docstring)."""
    index = {op: i for i, op in enumerate(ops)}
    waiting = {op: len({v.owner for v in op.operands if v.owner in index}) for op in ops}
    users: dict[Operation, set[Operation]] = {op: set() for op in ops}
    for op in ops:
        for v in op.operands:
            if v.owner in index:
                users[v.owner].add(op)  # type: ignore[index]
    kinds = {op: host(op) for op in ops}
    ready: dict[bool, list[int]] = {True: [], False: []}
    for op in ops:
        if waiting[op] == 0:
            heapq.heappush(ready[kinds[op]], index[op])
    segments: list[Segment] = []
    current = kinds[ops[0]] if ops else False
    while ready[True] or ready[False]:
        if not ready[current]:
            current = not current
        if not segments or segments[-1].host != current:
            segments.append(Segment(current))
        op = ops[heapq.heappop(ready[current])]
        segments[-1].ops.append(op)
        for user in users[op]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready[kinds[user]], index[user])
    return segments


SMALL = 4096
"""Elements a compiled segment between two host segments may produce and still run on the
host: a native program of its own (compiled, with a thread team) is not worth it for the
scalar and per-box arithmetic between a detection head's data-dependent ops."""


def absorb_small(segments: list[Segment]) -> list[Segment]:
    """Compiled segments between host segments that produce at most SMALL elements join
    them (their ops run their reference kernels); adjacent host segments merge."""
    merged: list[Segment] = []
    for i, segment in enumerate(segments):
        between = 0 < i < len(segments) - 1 and segments[i - 1].host and segments[i + 1].host
        if not segment.host and between and sum(_elements(r) for op in segment.ops for r in op.results) <= SMALL:
            segment = Segment(True, segment.ops)
        if merged and merged[-1].host and segment.host:
            merged[-1].ops.extend(segment.ops)
        else:
            merged.append(segment)
    return merged


def _elements(value: SSAValue) -> int:
    t = value.type
    return math.prod(t.get_shape()) if isinstance(t, TensorType) else 1


def link(segments: list[Segment], results: list[SSAValue]) -> None:
    """Set each segment's inputs (values defined outside it, constants excepted) and outputs
    (values read by a later segment or returned)."""
    owner = {r: s for s in segments for op in s.ops for r in op.results}
    needed: dict[int, list[SSAValue]] = {id(s): [] for s in segments}
    for segment in segments:
        for op in segment.ops:
            for v in op.operands:
                if owner.get(v) is not segment and not isinstance(v.owner, Constant) and v not in segment.inputs:
                    segment.inputs.append(v)
                    if v in owner and v not in needed[id(owner[v])]:
                        needed[id(owner[v])].append(v)
    for v in results:
        if v in owner and v not in needed[id(owner[v])]:
            needed[id(owner[v])].append(v)
    for segment in segments:
        segment.outputs = needed[id(segment)]


def segment_model(model: Model, segment: Segment) -> Model:
    """A compiled segment as a model of its own, sharing the weight store."""
    b = ModelBuilder(model.store)
    mapping: dict[SSAValue, SSAValue] = {}
    for i, v in enumerate(segment.inputs):
        t = v.type
        assert isinstance(t, TensorType)
        mapping[v] = b.input(f"v{i}", t.get_shape(), _dtype(t))
    for op in segment.ops:
        for v in op.operands:
            if isinstance(v.owner, Constant) and v not in mapping:
                copy = v.owner.clone()
                b.block.add_op(copy)
                mapping[v] = copy.results[0]
        copy = op.clone(value_mapper=dict(mapping))
        b.block.add_op(copy)
        mapping.update(zip(op.results, copy.results))
    for i, v in enumerate(segment.outputs):
        b.output(mapping[v], f"y{i}")
    return b.finish()


def op_model(model: Model, op: Operation) -> Model:
    """`op` alone as a model (its constant operands cloned in): to probe a backend with."""
    inputs = list(dict.fromkeys(v for v in op.operands if not isinstance(v.owner, Constant)))
    return segment_model(model, Segment(False, [op], inputs, list(op.results)))


def _dtype(t: TensorType) -> np.dtype:
    from irforge.weights.dtypes import from_xdsl

    return np.dtype(from_xdsl(t.element_type))


class SegmentedModel:
    """A model with data-dependent shapes, run segment by segment (see the module docstring).
    Call it with a dict of input arrays by name; `segments` lists the phases, `host_ops`
    the ops that run their reference kernels."""

    def __init__(self, model: Model, segments: list[Segment]) -> None:
        func = model.func
        self.model = model
        self.segments = segments
        self.inputs = list(zip(input_names(func), func.args))
        ret = func.body.block.last_op
        assert isinstance(ret, ReturnOp)
        self.results = list(zip(output_names(func), ret.arguments))
        self.constants = {
            op.output: constant_value(op, model.store) for op in func.body.block.ops if isinstance(op, Constant)
        }
        self.host_ops = [op for s in segments if s.host for op in s.ops]

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        missing = [name for name, _ in self.inputs if name not in feeds]
        if missing:
            raise IrforgeError(f"missing model inputs: {', '.join(missing)}", fix="pass --input NAME=FILE.npy", code="E856")
        values: dict[SSAValue, Any] = dict(self.constants)
        values.update((arg, check_input(name, arg, np.asarray(feeds[name]))) for name, arg in self.inputs)
        for segment in self.segments:
            if segment.host:
                for op in segment.ops:
                    values.update(zip(op.results, evaluate(op, [values[v] for v in op.operands])))
            else:
                assert segment.run is not None
                out = segment.run({f"v{i}": values[v] for i, v in enumerate(segment.inputs)})
                values.update((v, out[f"y{i}"]) for i, v in enumerate(segment.outputs))
        return {name: np.array(values[v]) for name, v in self.results}

    def close(self) -> None:
        for segment in self.segments:
            close = getattr(segment.run, "close", None)
            if close is not None:
                close()


def compile_segmented(
    model: Model, runs_natively: Callable[[Operation], bool], compile_static: Callable[[Model], Runner]
) -> SegmentedModel:
    """Split `model` (shapes already inferred) into segments and compile the static ones with
    `compile_static`; ops that touch a dynamic dim, and ops `runs_natively` refuses, run on
    the host."""
    func = model.func
    ops = [op for op in func.body.block.ops if not isinstance(op, Constant | ReturnOp)]
    segments = absorb_small(schedule(ops, lambda op: touches_dynamic(op) or not runs_natively(op)))
    ret = func.body.block.last_op
    assert isinstance(ret, ReturnOp)
    link(segments, list(ret.arguments))
    for segment in segments:
        if not segment.host and segment.outputs:
            segment.run = compile_static(segment_model(model, segment))
    segments = [s for s in segments if s.host or s.outputs]
    return SegmentedModel(model, segments)
